// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/binding-controller/binding-controller/pkg/overridepolicy"
)

// A Difference is one Work on which the controllers disagree.
type Difference struct {
	Case    int
	Work    string   // namespace/name
	Cluster string   // the cluster of the Work's execution namespace
	What    string   // "only Karmada wrote it", "only ours wrote it", or "fields differ"
	Paths   []string // the differing fields, JSON-pointer-like
	// Known names the README's row for a difference made on purpose; "" for one to close.
	Known string `json:",omitempty"`
}

// Signature is the class a difference belongs to: the template's kind and what differs,
// with list indexes and names of the case left out, so one class gathers many cases.
func (d Difference) Signature(kind string) string {
	if d.Known != "" {
		return "known: " + d.Known
	}
	var paths []string
	seen := map[string]bool{}
	for _, p := range d.Paths {
		p = indexRE.ReplaceAllString(p, "/*")
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return kind + ": " + d.What + " " + strings.Join(paths, ",")
}

var indexRE = regexp.MustCompile(`/[0-9]+`)

// invalidImage is the known difference of an image overrider that cannot apply: its
// result is not an image reference, or its Tag value is neither a tag nor a digest. Karmada
// writes the broken reference, or leaves the image as it was; here that cluster fails,
// naming the rule (README, where we differ on purpose).
const invalidImage = "an image overrider that cannot apply: Karmada writes the broken reference (\":1.27\") or ignores the rule; here that cluster fails, naming it"

// knownDifference tells which of the README's deliberate differences d is, if any:
// oursSays is this controller's WorksSynced message for the binding.
func knownDifference(d Difference, karmada Works, oursSays string) string {
	if d.What != "only Karmada wrote it" {
		return ""
	}
	for _, image := range imagesIn(karmada[d.Work]) {
		if overridepolicy.ValidImageReference(image) != nil {
			return invalidImage
		}
	}
	for _, part := range strings.Split(oursSays, "; ") {
		if strings.HasPrefix(part, d.Cluster+": ") && strings.Contains(part, ".imageOverrider[") {
			return invalidImage
		}
	}
	return ""
}

// imagesIn lists every string under an "image" key in v.
func imagesIn(v any) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok && k == "image" {
				out = append(out, s)
				continue
			}
			out = append(out, imagesIn(e)...)
		}
	case []any:
		for _, e := range t {
			out = append(out, imagesIn(e)...)
		}
	}
	return out
}

// compare lists every Work the two controllers disagree on, attributed to its case by the
// binding its annotations name (caseOf); oursSays (WorksSynced by binding name) tells why
// this controller wrote none, for the known differences.
func compare(karmada, ours Works, oursSays map[string]string, caseOf func(work map[string]any) int) []Difference {
	keys := map[string]bool{}
	for k := range karmada {
		keys[k] = true
	}
	for k := range ours {
		keys[k] = true
	}
	var out []Difference
	for k := range keys {
		kw, inK := karmada[k]
		ow, inO := ours[k]
		d := Difference{Work: k, Cluster: clusterOfWork(k)}
		switch {
		case !inO:
			d.What, d.Case = "only Karmada wrote it", caseOf(kw)
			d.Known = knownDifference(d, karmada, oursSays[bindingNameOf(kw)])
		case !inK:
			d.What, d.Case = "only ours wrote it", caseOf(ow)
		default:
			d.Case = caseOf(kw)
			d.Paths = diffPaths("", kw, ow)
			if len(d.Paths) == 0 {
				continue
			}
			d.What = "fields differ"
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Case != out[j].Case {
			return out[i].Case < out[j].Case
		}
		return out[i].Work < out[j].Work
	})
	return out
}

// diffPaths lists the paths under which a and b differ.
func diffPaths(path string, a, b any) []string {
	if reflect.DeepEqual(a, b) {
		return nil
	}
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		var out []string
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			out = append(out, diffPaths(path+"/"+strings.ReplaceAll(k, "/", "~1"), am[k], bm[k])...)
		}
		sort.Strings(out)
		return out
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aIsList && bIsList && len(al) == len(bl) {
		var out []string
		for i := range al {
			out = append(out, diffPaths(fmt.Sprintf("%s/%d", path, i), al[i], bl[i])...)
		}
		return out
	}
	return []string{path}
}

// valueAt reads the value at a diffPaths path, for the report.
func valueAt(v any, path string) any {
	for _, part := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(part, "~1", "/")
		switch t := v.(type) {
		case map[string]any:
			v = t[part]
		case []any:
			var i int
			if _, err := fmt.Sscan(part, &i); err != nil || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}
