// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// freshChanges are bindings changed while a controller restarts, each timed from the
// change sent until the last of its Works is at a newer generation, as the tracker's
// watch saw it: a user waits that long for a change made at such a moment. The
// percentiles are nearest rank; a change never written counts as the longest.
type freshChanges struct {
	Interval time.Duration `json:"intervalNs"`
	Changes  []freshChange `json:"changes"`
	P50      time.Duration `json:"p50Ns"`
	P99      time.Duration `json:"p99Ns"`
	Max      time.Duration `json:"maxNs"`
	Error    string        `json:"error,omitempty"`
	// WorksWatchAt is when, after process start, the controller's first watch of Works
	// started (audit log). This project sends it once its bindings are cached, so for it
	// this is when the bindings' initial stream ended; Karmada's goes out at once.
	// AfterWorksWatch counts the changes made from then on, and P99AfterWorksWatch is
	// their p99.
	WorksWatchAt       time.Duration `json:"worksWatchAtNs"`
	AfterWorksWatch    int           `json:"afterWorksWatch"`
	P99AfterWorksWatch time.Duration `json:"p99AfterWorksWatchNs"`
}

type freshChange struct {
	Binding string        `json:"binding"`
	At      time.Duration `json:"atNs"`      // since the restarted process started
	Latency time.Duration `json:"latencyNs"` // -1: never written
	before  map[string]int64
	sent    time.Time
}

// freshRestart restarts sd once more on the idle plane and, from ph.freshInterval after
// its process started, changes ph.fresh bindings spread over the fleet, one every
// ph.freshInterval: changes met by a controller listing its caches and priming, as after
// a rollout or a leader change. A change doubles a binding's replicas, as a scheduler's
// change, which both controllers see through the binding.
func (e *env) freshRestart(ctx context.Context, sd side, ph phases) (*freshChanges, error) {
	label := sd.spec.Label + " fresh changes"
	if err := wait.PlaneIdle(ctx, label); err != nil {
		return nil, err
	}
	fc := &freshChanges{Interval: ph.freshInterval}
	auditFrom := audit.Offset(e.plane.AuditLog)
	made := make(chan error, 1)
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	go func() { made <- e.makeChanges(mctx, fc, start, ph.fresh) }()
	ctl, err := controller.Start(ctx, sd.spec, e.kubeconfig, filepath.Join(e.plane.Dir, "controller-fresh.log"))
	if err != nil {
		return nil, err
	}
	defer stop(ctl)
	if err := <-made; err != nil {
		return nil, err
	}
	if err := e.tracker.Wait(ctx, ph.timeout, fc.settle); wait.IgnoreTimeout(err) != nil {
		return nil, err
	}
	watched, err := audit.First(e.plane.AuditLog, audit.ControllerUser, auditFrom, "watch works.work.karmada.io")
	if err != nil {
		return nil, err
	}
	if !watched.IsZero() {
		fc.splitAt(watched.Sub(start))
	}
	session.Logf("%s: %d changes (every %s): latency p50 %s, p99 %s, max %s; Works' watch at %s, the %d changes after it p99 %s",
		label, len(fc.Changes), fc.Interval, report.Dur(fc.P50), report.Dur(fc.P99), report.Dur(fc.Max),
		report.Dur(fc.WorksWatchAt), fc.AfterWorksWatch, report.Dur(fc.P99AfterWorksWatch))
	return fc, nil
}

// makeChanges makes n changes, one every fc.Interval from start + fc.Interval.
func (e *env) makeChanges(ctx context.Context, fc *freshChanges, start time.Time, n int) error {
	for i := range n {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(start.Add(time.Duration(i+1) * fc.Interval))):
		}
		target := e.bindings[i*len(e.bindings)/n]
		c := freshChange{Binding: target.Name, At: time.Since(start), before: map[string]int64{}}
		for _, k := range workKeys(target) {
			c.before[k] = e.tracker.Get(k).Generation
		}
		doubled, patch := workload.DoubleReplicas(target)
		c.sent = time.Now()
		if err := e.plane.Client.Patch(ctx, doubled, patch); err != nil {
			return fmt.Errorf("changing binding %s: %w", c.Binding, err)
		}
		fc.Changes = append(fc.Changes, c)
	}
	return nil
}

// splitAt sets WorksWatchAt to at and the p99 of the settled changes made from then on.
func (fc *freshChanges) splitAt(at time.Duration) {
	fc.WorksWatchAt = at
	var ns []float64
	for _, c := range fc.Changes {
		if c.At < at {
			continue
		}
		ns = append(ns, rank(c.Latency))
	}
	fc.AfterWorksWatch = len(ns)
	if len(ns) > 0 {
		fc.P99AfterWorksWatch = time.Duration(report.Percentile(ns, 99))
	}
}

// rank is what a change's latency counts as in the percentiles: a change never written
// (-1) as the longest.
func rank(latency time.Duration) float64 {
	if latency < 0 {
		return float64(1 << 62)
	}
	return float64(latency)
}

// settle sets each change's latency and their percentiles, and says whether every
// change was written.
func (fc *freshChanges) settle(get func(string) *localplane.WorkState) bool {
	ns := make([]float64, len(fc.Changes))
	fc.Error = ""
	for i := range fc.Changes {
		c := &fc.Changes[i]
		var last time.Time
		for k, gen := range c.before {
			st := get(k)
			if st.Generation <= gen {
				last = time.Time{}
				break
			}
			if st.GenerationAt.After(last) {
				last = st.GenerationAt
			}
		}
		c.Latency = last.Sub(c.sent)
		if last.IsZero() {
			c.Latency, fc.Error = -1, "some changes were never written"
		}
		ns[i] = rank(c.Latency)
	}
	pct := func(p float64) time.Duration { return time.Duration(report.Percentile(ns, p)) }
	fc.P50, fc.P99, fc.Max = pct(50), pct(99), pct(100)
	return fc.Error == ""
}
