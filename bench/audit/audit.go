// SPDX-License-Identifier: Apache-2.0

// Package audit counts what the benchmarked clients asked of the API server, from its
// audit log: by "verb resource", and when the last of them was served.
package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// The audited users: the controller under test and the ceiling's plain client. The
// benchmark's own requests (setup, observation) run as envtest's admin, unaudited.
const (
	ControllerUser = "bench-controller"
	CeilingUser    = "bench-ceiling"
)

// Counts counts the requests one user made, by "verb resource" (resource with its
// subresource and, for non-core groups, its group: "create works.work.karmada.io",
// "patch resourcebindings.work.karmada.io/status", "create events.events.k8s.io"). A watch
// counts when it starts; every other request when it completes.
type Counts map[string]int

// Offset is the current size of the audit log: the start of the next window.
func Offset(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	RequestURI     string    `json:"requestURI"`
	StageTimestamp time.Time `json:"stageTimestamp"`
}

// Read counts user's requests logged between the offsets from and to (to < 0: the
// end), a watch when it starts and any other request when it completes, and says when
// the API server finished the last of them: the end of a burst of work, as the server
// saw it (zero when there was none).
func Read(path, user string, from, to int64) (Counts, time.Time, error) {
	counts, last := Counts{}, time.Time{}
	err := each(path, user, from, to, func(key string, at time.Time) bool {
		counts[key]++
		if at.After(last) {
			last = at
		}
		return true
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return counts, last, nil
}

// First says when user's first request counted as key ("watch works.work.karmada.io")
// was logged after the offset from: a watch when it started. Zero when there was none.
func First(path, user string, from int64, key string) (time.Time, error) {
	var first time.Time
	err := each(path, user, from, -1, func(k string, at time.Time) bool {
		if k == key {
			first = at
			return false
		}
		return true
	})
	return first, err
}

// each calls do with the key and time of each of user's requests logged between the
// offsets from and to (to < 0: the end), in the log's order, until do returns false.
func each(path, user string, from, to int64, do func(key string, at time.Time) bool) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return err
	}
	var r io.Reader = f
	if to >= 0 {
		r = io.LimitReader(f, to-from)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev auditEvent
		// A line that does not decode was cut at the window's end.
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.User.Username != user ||
			ev.Verb == "watch" && ev.Stage != "ResponseStarted" || ev.Verb != "watch" && ev.Stage != "ResponseComplete" {
			continue
		}
		if !do(ev.Verb+" "+ev.resource(), ev.StageTimestamp) {
			return nil
		}
	}
	return sc.Err()
}

// resource is what Counts keys a request under, after its verb.
func (ev *auditEvent) resource() string {
	if o := ev.ObjectRef; o != nil && o.Resource != "" {
		resource := strings.TrimSuffix(o.Resource+"."+o.APIGroup, ".")
		if o.Subresource != "" {
			resource += "/" + o.Subresource
		}
		return resource
	}
	return "(non-resource " + ev.RequestURI + ")"
}

// Total is the number of requests counted.
func (c Counts) Total() int { return c.Match("") }

// Match counts the requests whose verb is one of verbs (none: any; "discovery" for a
// non-resource request) and whose resource starts with resourcePrefix.
func (c Counts) Match(resourcePrefix string, verbs ...string) int {
	n := 0
	for k, v := range c {
		_, resource, _ := strings.Cut(k, " ")
		if strings.HasPrefix(resource, resourcePrefix) && (len(verbs) == 0 || slices.Contains(verbs, verbOf(k))) {
			n += v
		}
	}
	return n
}

func verbOf(key string) string {
	verb, resource, _ := strings.Cut(key, " ")
	if strings.HasPrefix(resource, "(non-resource") {
		return "discovery"
	}
	return verb
}

// Writes counts create, update, patch, delete and deletecollection requests.
func (c Counts) Writes(resourcePrefix string) int {
	return c.Match(resourcePrefix, "create", "update", "patch", "delete", "deletecollection")
}

// Reads counts get and list requests (not watches).
func (c Counts) Reads(resourcePrefix string) int { return c.Match(resourcePrefix, "get", "list") }

// ByVerb sums the counts by verb, discovery apart: "discovery 5, get 2, list 41".
func (c Counts) ByVerb() string {
	sums := map[string]int{}
	for k, n := range c {
		sums[verbOf(k)] += n
	}
	parts := make([]string, 0, len(sums))
	for _, v := range slices.Sorted(maps.Keys(sums)) {
		parts = append(parts, fmt.Sprintf("%s %d", v, sums[v]))
	}
	return strings.Join(parts, ", ")
}
