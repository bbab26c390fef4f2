// SPDX-License-Identifier: Apache-2.0

// Package audit counts what the benchmarked clients asked of the API server, from its
// audit log: by "verb resource", and how long the server took over one kind of request.
package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// The audited users: the controller under test and the plain client of the ceiling run.
// The benchmark's own requests (setup, observation) run as envtest's admin and are not
// audited.
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
	if path == "" {
		return 0
	}
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
	RequestURI string `json:"requestURI"`
	// The API server's own time over the request: received → this stage.
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time `json:"stageTimestamp"`
}

// Read counts user's requests logged between the offsets from and to (to < 0: the end).
func Read(path, user string, from, to int64) (Counts, error) {
	counts := Counts{}
	err := walkAudit(path, user, from, to, func(key string, _ *auditEvent) { counts[key]++ })
	return counts, err
}

// ServerTimes is the time the API server took over each of user's requests of
// key ("update works.work.karmada.io") completed between the offsets from and to, from
// receiving the request to completing its answer, in the log's order.
func ServerTimes(path, user string, from, to int64, key string) ([]time.Duration, error) {
	var times []time.Duration
	err := walkAudit(path, user, from, to, func(k string, ev *auditEvent) {
		if k == key && ev.Verb != "watch" {
			times = append(times, ev.StageTimestamp.Sub(ev.RequestReceivedTimestamp))
		}
	})
	return times, err
}

// Last is when the API server finished the last of user's requests logged between the
// offsets from and to (to < 0: the end), a watch counting when it started: the end of a
// burst of work, as the server saw it. Zero when there was none.
func Last(path, user string, from, to int64) (time.Time, error) {
	var last time.Time
	err := walkAudit(path, user, from, to, func(_ string, ev *auditEvent) {
		if ev.StageTimestamp.After(last) {
			last = ev.StageTimestamp
		}
	})
	return last, err
}

// walkAudit calls fn with the "verb resource" key of each of user's requests logged
// between the offsets from and to (to < 0: the end): a watch when it starts, any other
// request when it completes.
func walkAudit(path, user string, from, to int64, fn func(key string, ev *auditEvent)) error {
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
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue // a line cut at the window's end
		}
		if ev.User.Username != user {
			continue
		}
		if ev.Verb == "watch" {
			if ev.Stage != "ResponseStarted" {
				continue
			}
		} else if ev.Stage != "ResponseComplete" {
			continue
		}
		resource := "(non-resource " + ev.RequestURI + ")"
		if ev.ObjectRef != nil && ev.ObjectRef.Resource != "" {
			resource = ev.ObjectRef.Resource
			if ev.ObjectRef.APIGroup != "" {
				resource += "." + ev.ObjectRef.APIGroup
			}
			if ev.ObjectRef.Subresource != "" {
				resource += "/" + ev.ObjectRef.Subresource
			}
		}
		fn(ev.Verb+" "+resource, &ev)
	}
	return sc.Err()
}

// Total is the number of requests counted.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Match counts the requests whose verb is one of verbs (none: any) and whose resource
// starts with resourcePrefix.
func (c Counts) Match(resourcePrefix string, verbs ...string) int {
	n := 0
	for k, v := range c {
		verb, resource, _ := strings.Cut(k, " ")
		if !strings.HasPrefix(resource, resourcePrefix) {
			continue
		}
		if len(verbs) > 0 && !slices.Contains(verbs, verb) {
			continue
		}
		n += v
	}
	return n
}

// Writes counts create, update, patch, delete and deletecollection requests.
func (c Counts) Writes(resourcePrefix string) int {
	return c.Match(resourcePrefix, "create", "update", "patch", "delete", "deletecollection")
}

// Reads counts get and list requests (not watches).
func (c Counts) Reads(resourcePrefix string) int {
	return c.Match(resourcePrefix, "get", "list")
}

// Keys returns the counted "verb resource" keys, most frequent first.
func (c Counts) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if c[keys[i]] != c[keys[j]] {
			return c[keys[i]] > c[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// String lists the counts, most frequent first: "create works.work.karmada.io 10, …".
func (c Counts) String() string {
	if len(c) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(c))
	for _, k := range c.Keys() {
		parts = append(parts, fmt.Sprintf("%s %d", k, c[k]))
	}
	return strings.Join(parts, ", ")
}

// ByVerb sums the counts by verb, discovery apart: "discovery 5, get 2, list 41".
func (c Counts) ByVerb() string {
	sums := map[string]int{}
	for k, n := range c {
		verb, rest, _ := strings.Cut(k, " ")
		if strings.HasPrefix(rest, "(non-resource") {
			verb = "discovery"
		}
		sums[verb] += n
	}
	parts := make([]string, 0, len(sums))
	for _, v := range slices.Sorted(maps.Keys(sums)) {
		parts = append(parts, fmt.Sprintf("%s %d", v, sums[v]))
	}
	return strings.Join(parts, ", ")
}
