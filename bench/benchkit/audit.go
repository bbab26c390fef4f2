// SPDX-License-Identifier: Apache-2.0

package benchkit

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// AuditCounts counts the requests one user made, by "verb resource" (resource with its
// subresource and, for non-core groups, its group: "create works.work.karmada.io",
// "patch resourcebindings.work.karmada.io/status", "create events.events.k8s.io"). A watch
// counts when it starts; every other request when it completes.
type AuditCounts map[string]int

// AuditOffset is the current size of the audit log: the start of the next window.
func AuditOffset(path string) int64 {
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

// ReadAudit counts user's requests logged between the offsets from and to (to < 0: the end).
func ReadAudit(path, user string, from, to int64) (AuditCounts, error) {
	counts := AuditCounts{}
	err := walkAudit(path, user, from, to, func(key string, _ *auditEvent) { counts[key]++ })
	return counts, err
}

// ReadAuditServerTimes is the time the API server took over each of user's requests of
// key ("update works.work.karmada.io") completed between the offsets from and to, from
// receiving the request to completing its answer, in the log's order.
func ReadAuditServerTimes(path, user string, from, to int64, key string) ([]time.Duration, error) {
	var times []time.Duration
	err := walkAudit(path, user, from, to, func(k string, ev *auditEvent) {
		if k == key && ev.Verb != "watch" {
			times = append(times, ev.StageTimestamp.Sub(ev.RequestReceivedTimestamp))
		}
	})
	return times, err
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
func (c AuditCounts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Match counts the requests whose verb is one of verbs (none: any) and whose resource
// starts with resourcePrefix.
func (c AuditCounts) Match(resourcePrefix string, verbs ...string) int {
	n := 0
	for k, v := range c {
		verb, resource, _ := strings.Cut(k, " ")
		if !strings.HasPrefix(resource, resourcePrefix) {
			continue
		}
		if len(verbs) > 0 && !contains(verbs, verb) {
			continue
		}
		n += v
	}
	return n
}

// Writes counts create, update, patch, delete and deletecollection requests.
func (c AuditCounts) Writes(resourcePrefix string) int {
	return c.Match(resourcePrefix, "create", "update", "patch", "delete", "deletecollection")
}

// Reads counts get and list requests (not watches).
func (c AuditCounts) Reads(resourcePrefix string) int {
	return c.Match(resourcePrefix, "get", "list")
}

// Keys returns the counted "verb resource" keys, most frequent first.
func (c AuditCounts) Keys() []string {
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
