// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// shrink reduces c, a case of class sig, to a smaller case of the same class: each round
// tries every one-step reduction (drop a policy, a rule, an overrider, a target cluster, an
// optional binding field, a template label or annotation) in one batch and keeps the first
// that still shows the class, until none does. next hands out fresh case indexes.
func shrink(ctx context.Context, r *runner, c *Case, sig string, next func() int) (*Case, error) {
	for round := 0; round < 40; round++ {
		candidates := reductions(c)
		if len(candidates) == 0 {
			return c, nil
		}
		for i, cand := range candidates {
			candidates[i] = restamp(cand, next())
		}
		found, err := firstShowing(ctx, r, candidates, sig)
		if err != nil {
			return nil, err
		}
		if found == nil {
			return c, nil
		}
		c = found
		fmt.Fprintf(os.Stderr, "  shrink %q: round %d kept a reduction (%d policies)\n", sig, round, len(c.Policies))
	}
	return c, nil
}

// firstShowing runs the candidates as one batch and returns the first that shows class sig.
func firstShowing(ctx context.Context, r *runner, candidates []*Case, sig string) (*Case, error) {
	caseOf := map[string]int{}
	byIndex := map[int]*Case{}
	for _, c := range candidates {
		caseOf[c.Binding.GetName()] = c.Index
		byIndex[c.Index] = c
	}
	res, err := r.run(ctx, candidates)
	if err != nil {
		return nil, err
	}
	showing := map[int]bool{}
	for _, d := range compare(res.karmada, res.ours, res.oursSays, func(w map[string]any) int { return caseOf[bindingNameOf(w)] }) {
		if c := byIndex[d.Case]; c != nil && d.Signature(c.Template.GetKind()) == sig {
			showing[d.Case] = true
		}
	}
	for _, c := range candidates {
		if showing[c.Index] {
			return c, nil
		}
	}
	return nil, nil
}

// reductions lists c's one-step reductions, each a new case.
func reductions(c *Case) []*Case {
	var out []*Case
	with := func(change func(*Case) bool) {
		d := copyCase(c)
		if change(d) {
			out = append(out, d)
		}
	}
	for i := range c.Policies {
		with(func(d *Case) bool { d.Policies = append(d.Policies[:i:i], d.Policies[i+1:]...); return true })
		rules, _, _ := unstructured.NestedSlice(c.Policies[i].Object, "spec", "overrideRules")
		for j := range rules {
			if len(rules) > 1 {
				with(func(d *Case) bool { return dropListItem(d.Policies[i].Object, j, "spec", "overrideRules") })
			}
			with(func(d *Case) bool {
				return dropField(d.Policies[i].Object, "spec", "overrideRules", j, "targetCluster")
			})
			overriders, _, _ := unstructured.NestedMap(rules[j].(map[string]any), "overriders")
			for kind, list := range overriders {
				for k := range asList(list) {
					with(func(d *Case) bool {
						rule := mustList(d.Policies[i].Object, "spec", "overrideRules")[j].(map[string]any)
						ov := rule["overriders"].(map[string]any)
						l := asList(ov[kind])
						if len(l) == 1 && len(ov) == 1 {
							return false // a rule needs an overrider
						}
						l = append(l[:k:k], l[k+1:]...)
						if len(l) == 0 {
							delete(ov, kind)
						} else {
							ov[kind] = l
						}
						return true
					})
				}
			}
		}
	}
	clusters, _, _ := unstructured.NestedSlice(c.Binding.Object, "spec", "clusters")
	for i := range clusters {
		if len(clusters) > 1 {
			with(func(d *Case) bool { return dropListItem(d.Binding.Object, i, "spec", "clusters") })
		}
	}
	for _, f := range []string{"requiredBy", "gracefulEvictionTasks", "suspension", "preserveResourcesOnDeletion", "conflictResolution"} {
		with(func(d *Case) bool { return dropField(d.Binding.Object, "spec", f) })
	}
	for _, f := range []string{"labels", "annotations"} {
		m, _, _ := unstructured.NestedStringMap(c.Template.Object, "metadata", f)
		for k := range m {
			if f == "labels" && k == "app" {
				continue // selectors match on it
			}
			with(func(d *Case) bool { return dropField(d.Template.Object, "metadata", f, k) })
		}
	}
	return out
}

func copyCase(c *Case) *Case {
	d := &Case{Index: c.Index, Namespace: c.Namespace, Template: c.Template.DeepCopy(), Binding: c.Binding.DeepCopy()}
	for _, p := range c.Policies {
		d.Policies = append(d.Policies, p.DeepCopy())
	}
	for _, cz := range c.Customizations {
		d.Customizations = append(d.Customizations, cz.DeepCopy())
	}
	if c.Webhooks != nil {
		d.Webhooks = c.Webhooks.DeepCopy()
	}
	return d
}

// restamp gives a case fresh names and namespace (index idx), so several versions of it can
// be created side by side. The template's labels and selectors keep their values.
func restamp(c *Case, idx int) *Case {
	d := copyCase(c)
	oldName := c.Template.GetName()
	kind := lower(c.Template.GetKind())
	d.Index, d.Namespace = idx, fmt.Sprintf("fuzz-%d", idx)
	newName := fmt.Sprintf("%s-%d", kind, idx)
	d.Template.SetName(newName)
	if d.Template.GetNamespace() != "" {
		d.Template.SetNamespace(d.Namespace)
	}
	d.Binding.SetName(newName + "-" + kind)
	if d.Binding.GetNamespace() != "" {
		d.Binding.SetNamespace(d.Namespace)
		_ = unstructured.SetNestedField(d.Binding.Object, d.Namespace, "spec", "resource", "namespace")
	}
	_ = unstructured.SetNestedField(d.Binding.Object, newName, "spec", "resource", "name")
	if snaps, ok, _ := unstructured.NestedSlice(d.Binding.Object, "spec", "requiredBy"); ok {
		for _, s := range snaps {
			s.(map[string]any)["namespace"] = d.Namespace
		}
		_ = unstructured.SetNestedSlice(d.Binding.Object, snaps, "spec", "requiredBy")
	}
	for i, p := range d.Policies {
		p.SetName(fmt.Sprintf("p%d-%d", idx, i))
		if p.GetNamespace() != "" {
			p.SetNamespace(d.Namespace)
		} else {
			p.SetName("fuzz-" + p.GetName())
		}
		selectors, _, _ := unstructured.NestedSlice(p.Object, "spec", "resourceSelectors")
		for _, s := range selectors {
			s := s.(map[string]any)
			if name, _ := s["name"].(string); name != "" {
				s["name"] = strings.Replace(name, oldName, newName, 1)
			}
			if _, ok := s["namespace"]; ok {
				s["namespace"] = d.Namespace
			}
		}
		_ = unstructured.SetNestedSlice(p.Object, selectors, "spec", "resourceSelectors")
	}
	return d
}

func dropField(obj map[string]any, path ...any) bool {
	parent := any(obj)
	for _, p := range path[:len(path)-1] {
		switch t := parent.(type) {
		case map[string]any:
			parent = t[p.(string)]
		case []any:
			parent = t[p.(int)]
		default:
			return false
		}
	}
	m, ok := parent.(map[string]any)
	if !ok {
		return false
	}
	key := path[len(path)-1].(string)
	if _, present := m[key]; !present {
		return false
	}
	delete(m, key)
	return true
}

func dropListItem(obj map[string]any, i int, path ...string) bool {
	l := mustList(obj, path...)
	if i >= len(l) {
		return false
	}
	l = append(l[:i:i], l[i+1:]...)
	return unstructured.SetNestedSlice(obj, l, path...) == nil
}

// mustList returns the list at path, as stored (not a copy), or nil.
func mustList(obj map[string]any, path ...string) []any {
	var v any = obj
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	l, _ := v.([]any)
	return l
}
