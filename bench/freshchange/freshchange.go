// SPDX-License-Identifier: Apache-2.0

// Package freshchange times fresh changes: bindings created or changed while a
// controller is busy (restarting, or working through a backlog), each from the change
// sent until the last of its Works shows it, as one metadata-only watch of the Works saw
// it. A user waits that long for a change made at such a moment.
package freshchange

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// Target is one change to make: Binding created when New, else its replicas doubled on
// every cluster (a spec change each of its Works, Keys, must show).
type Target struct {
	Binding *workv1alpha2.ResourceBinding
	Keys    []string
	New     bool
}

// Change is one change made.
type Change struct {
	Kind    string        `json:"kind"` // "new" or "changed"
	Binding string        `json:"binding"`
	At      time.Duration `json:"atNs"` // since the series' start
	// Latency is from the change sent to the last of its Works written (created, or at a
	// newer generation); -1 when that never happened.
	Latency time.Duration `json:"latencyNs"`

	keys   []string
	before map[string]int64 // each Work's generation before a change; nil for a new binding
	sent   time.Time
}

// Result is a series of changes and their latencies' nearest-rank percentiles.
type Result struct {
	Interval time.Duration `json:"intervalNs"`
	Changes  []Change      `json:"changes"`
	P50      time.Duration `json:"p50Ns"`
	P99      time.Duration `json:"p99Ns"`
	Max      time.Duration `json:"maxNs"`
	Error    string        `json:"error,omitempty"`
}

// Series makes changes with Client, one every Interval, and times them with Tracker,
// waiting up to Timeout for all of them.
type Series struct {
	Client   client.Client
	Tracker  *localplane.WorkTracker
	Interval time.Duration
	Timeout  time.Duration
}

// Make makes a change of each target, the first at start (or at once when start is
// past), and times them all.
func (s *Series) Make(ctx context.Context, start time.Time, targets []Target) (*Result, error) {
	res := &Result{Interval: s.Interval}
	for n, t := range targets {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Until(start.Add(time.Duration(n) * s.Interval))):
		}
		c := Change{Kind: "new", Binding: t.Binding.Name, At: time.Since(start), keys: t.Keys}
		var err error
		if t.New {
			c.sent = time.Now()
			err = s.Client.Create(ctx, t.Binding)
		} else {
			c.Kind, c.before = "changed", map[string]int64{}
			for _, k := range t.Keys {
				c.before[k] = s.Tracker.Get(k).Generation
			}
			rb := &workv1alpha2.ResourceBinding{}
			rb.Namespace, rb.Name = t.Binding.Namespace, t.Binding.Name
			c.sent = time.Now()
			err = s.Client.Patch(ctx, rb, workload.DoubleReplicas(t.Binding))
		}
		if err != nil {
			return nil, fmt.Errorf("%s binding %s: %w", c.Kind, c.Binding, err)
		}
		res.Changes = append(res.Changes, c)
	}
	return res, s.time(ctx, res)
}

// latency is from c sent to the last of its Works written; false while one is not.
func (c *Change) latency(get func(string) *localplane.WorkState) (time.Duration, bool) {
	var last time.Time
	for _, k := range c.keys {
		st := get(k)
		at := st.FirstSeen
		if c.before != nil {
			if st.Generation <= c.before[k] {
				return 0, false
			}
			at = st.GenerationAt
		}
		if at.IsZero() {
			return 0, false
		}
		if at.After(last) {
			last = at
		}
	}
	return last.Sub(c.sent), true
}

// time waits until every change's Works are written, or Timeout passes, and settles
// the result.
func (s *Series) time(ctx context.Context, res *Result) error {
	done := func(get func(string) *localplane.WorkState) bool {
		for i := range res.Changes {
			if _, ok := res.Changes[i].latency(get); !ok {
				return false
			}
		}
		return true
	}
	if err := s.Tracker.Wait(ctx, s.Timeout, done); wait.IgnoreTimeout(err) != nil {
		return err
	}
	return s.Tracker.Wait(ctx, 0, func(get func(string) *localplane.WorkState) bool {
		res.settle(get)
		return true
	})
}

// settle sets each change's latency and their percentiles; a change never written
// counts as the longest.
func (r *Result) settle(get func(string) *localplane.WorkState) {
	if len(r.Changes) == 0 {
		return
	}
	ns := make([]float64, len(r.Changes))
	for i := range r.Changes {
		l, ok := r.Changes[i].latency(get)
		if r.Changes[i].Latency = l; !ok {
			r.Changes[i].Latency, l = -1, time.Duration(1<<62)
			r.Error = "some changes were never written"
		}
		ns[i] = float64(l)
	}
	r.P50 = time.Duration(report.Percentile(ns, 50))
	r.P99 = time.Duration(report.Percentile(ns, 99))
	r.Max = time.Duration(report.Percentile(ns, 100))
}

// Log prints the series' percentiles and each change.
func (r *Result) Log(label string) {
	session.Logf("%s: %d fresh changes (every %s): latency p50 %s, p99 %s, max %s", label, len(r.Changes), r.Interval,
		report.Dur(r.P50), report.Dur(r.P99), report.Dur(r.Max))
	for _, c := range r.Changes {
		session.Logf("%s:   %-7s %-22s at %8s: %s", label, c.Kind, c.Binding, report.Dur(c.At), report.Dur(c.Latency))
	}
}
