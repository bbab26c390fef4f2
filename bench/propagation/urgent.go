// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// urgentChange is one fresh change made while the controller works through a backlog.
type urgentChange struct {
	Kind    string        `json:"kind"` // "new" or "changed"
	Binding string        `json:"binding"`
	At      time.Duration `json:"atNs"` // since the backlog began
	// Latency is from the change being sent to the last of its Works written (created,
	// or its spec changed) as a metadata watch saw it; negative when it never happened.
	Latency time.Duration `json:"latencyNs"`
}

// urgentResult is the latency of fresh changes behind one backlog: a restart's
// re-verification of Bindings × Clusters current Works, or a flood of new bindings.
type urgentResult struct {
	Controller string   `json:"controller"`
	Command    []string `json:"command"`
	Scenario   string   `json:"scenario"` // "restart" or "flood"
	Load       loadSpec `json:"load"`     // current before the backlog began
	Flood      int      `json:"floodBindings,omitempty"`
	// FloodNamespace holds the flood's bindings; the fresh changes are in templateNamespace.
	FloodNamespace string         `json:"floodNamespace,omitempty"`
	Interval       time.Duration  `json:"intervalNs"`
	Changes        []urgentChange `json:"changes"`
	P50            time.Duration  `json:"p50Ns"`
	P99            time.Duration  `json:"p99Ns"`
	Max            time.Duration  `json:"maxNs"`
	// FirstSync is, for a restart, process start → the first reconcile: the caches'
	// initial lists, before which no change can be synced.
	FirstSync time.Duration `json:"firstSyncNs,omitempty"`
	// Backlog is how long the backlog took: restart, from the first sync until the
	// controller went quiet; flood, from the first create until every flood Work existed.
	Backlog time.Duration `json:"backlogNs"`
	Log     string        `json:"log"`
	Error   string        `json:"error,omitempty"`
}

// urgentReport is what the flood scenario writes (--urgent-json).
type urgentReport struct {
	*session.Session
	Urgent   []*urgentResult `json:"urgent"`
	Finished time.Time       `json:"finished"`
}

// floodRun makes --urgent-changes/2 bindings current, then creates the flood's bindings
// at once (in their own namespace) and during it makes the fresh changes.
func (p *propagation) floodRun(ctx context.Context, o *options) (*urgentResult, error) {
	load := loadSpec{Name: "flood", Bindings: o.urgentChanges / 2, Clusters: o.floodClusters, PerBinding: o.floodClusters}
	flood := loadSpec{Name: "flood-wave", Bindings: o.floodBindings, Clusters: o.floodClusters, PerBinding: o.floodClusters, Namespace: o.floodNamespace}
	label := p.spec.Label + " urgent-flood"
	res := &urgentResult{Controller: p.spec.Label, Scenario: "flood", Load: load, Flood: flood.Bindings, FloodNamespace: flood.Namespace, Interval: o.urgentInterval}
	all := load
	all.Bindings += o.urgentChanges - o.urgentChanges/2 // the fresh changes' new bindings
	env, err := p.setUp(ctx, label, all, nil)
	if err != nil {
		return nil, err
	}
	defer env.stop()
	bindings, keys := bindingsFor(all, env.refs)
	_, refs, err := p.prepare(ctx, env.plane, flood)
	if err != nil {
		return nil, err
	}
	floodBindings, floodKeys := bindingsFor(flood, refs)
	res.Log = filepath.Join(env.plane.Dir, "controller.log")
	ctl, err := p.startReady(ctx, env, p.spec, load, label, "controller.log")
	if err != nil {
		return nil, err
	}
	defer func() { _ = ctl.Stop() }()
	res.Command = ctl.Argv
	if err := p.makeCurrent(ctx, label, env, ctl, load, bindings, keys); err != nil {
		return nil, err
	}
	session.Logf("%s: creating %d bindings in namespace %s at once (%d creators) → %d Works", label, flood.Bindings, flood.namespace(), p.creators, len(floodKeys))
	floodDone := make(chan error, 1)
	go func() {
		floodDone <- parallel(ctx, flood.Bindings, p.creators, func(ctx context.Context, i int) error {
			return env.plane.Client.Create(ctx, floodBindings[i])
		})
	}()
	start := time.Now()
	if err := p.freshChanges(ctx, env, res, bindings, keys, load.Bindings, o.urgentChanges, start); err != nil {
		return nil, err
	}
	if err := <-floodDone; err != nil {
		return nil, fmt.Errorf("flood: %w", err)
	}
	arrival, err := env.tracker.WaitAll(ctx, floodKeys, p.phaseTimeout)
	if wait.IgnoreTimeout(err) != nil {
		return nil, err
	}
	res.Backlog = arrival.Last.Sub(start)
	logUrgent(res)
	return res, nil
}

// makeCurrent creates the load's bindings and waits until every Work of theirs exists
// and the controller is quiet.
func (p *propagation) makeCurrent(ctx context.Context, label string, env *runEnv, ctl *controller.Controller, load loadSpec,
	bindings []*workv1alpha2.ResourceBinding, keys []string) error {
	session.Logf("%s: making %s current", label, load)
	timing, _, err := p.createAndTime(ctx, label, env.tracker, keys[:load.works()], load.Bindings, p.creators,
		func(ctx context.Context, i int) error { return env.plane.Client.Create(ctx, bindings[i]) })
	if err != nil {
		return err
	}
	if timing.TimedOut {
		return fmt.Errorf("%s: only %d of %d Works became current", label, timing.Seen, load.works())
	}
	_, err = ctl.WaitQuiet(ctx, time.Second, time.Minute)
	return wait.IgnoreTimeout(err)
}

// urgentRestart starts a fresh controller on a fleet whose Works are all current and,
// from its first sync (when its re-verification begins; the time before it is
// res.FirstSync), makes the fresh changes, then waits for it to go quiet.
func (p *propagation) urgentRestart(ctx context.Context, env *runEnv, spec controller.Spec, res *urgentResult, bindings []*workv1alpha2.ResourceBinding,
	keys []string, current, changes int) error {
	if _, err := wait.PlaneIdle(ctx, "urgent restart"); err != nil {
		return err
	}
	processStart := time.Now()
	ctl, err := controller.Start(ctx, spec, env.kubeconfig, filepath.Join(env.plane.Dir, "controller-urgent.log"))
	if err != nil {
		return err
	}
	defer func() { _ = ctl.Stop() }()
	res.Command = ctl.Argv
	if err := wait.Poll(ctx, 10*time.Millisecond, p.phaseTimeout, "waiting for the restarted controller's first sync",
		func(ctx context.Context) (bool, error) {
			s, err := ctl.Scrape(ctx)
			return err == nil && controller.Reconciles(s) > 0, nil
		}); err != nil {
		return err
	}
	start := time.Now()
	res.FirstSync = start.Sub(processStart)
	session.Logf("urgent: first sync %s after process start; the fresh changes begin", report.Dur(res.FirstSync))
	if err := p.freshChanges(ctx, env, res, bindings, keys, current, changes, start); err != nil {
		return err
	}
	if _, err := ctl.WaitQuiet(ctx, time.Second, p.phaseTimeout); wait.IgnoreTimeout(err) != nil {
		return err
	}
	res.Backlog = time.Since(start) - time.Second
	logUrgent(res)
	return nil
}

// pending is what one fresh change waits for: every one of its Works seen, at a newer
// generation than before for a changed binding.
type pending struct {
	keys   []string
	before map[string]int64
	sent   time.Time
}

// latency is from w sent to the last of its Works written, false while one is not.
func (w pending) latency(get func(string) *localplane.WorkState) (time.Duration, bool) {
	var last time.Time
	for _, k := range w.keys {
		st := get(k)
		at := st.FirstSeen
		if w.before != nil {
			if st.Generation <= w.before[k] {
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
	return last.Sub(w.sent), true
}

// freshChanges makes changes fresh changes during a backlog that began at start, one
// every res.Interval, alternately a new binding (bindings[current], [current+1], …) and a
// changed one (replicas doubled, spread over bindings[:current]), and times each until
// its Works are written.
func (p *propagation) freshChanges(ctx context.Context, env *runEnv, res *urgentResult, bindings []*workv1alpha2.ResourceBinding,
	keys []string, current, changes int, start time.Time) error {
	per := len(keys) / len(bindings)
	waits := make([]pending, changes)
	for n := range changes {
		if d := time.Until(start.Add(time.Duration(n) * res.Interval)); d > 0 && n > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
		}
		c := urgentChange{At: time.Since(start), Kind: "new"}
		i := current + n/2
		if n%2 == 1 {
			// Spread over the bindings, so that some are early in the backlog and some late.
			i, c.Kind = (n/2)*current/(changes/2), "changed"
		}
		c.Binding = bindings[i].Name
		w := pending{keys: keys[i*per : (i+1)*per]}
		var err error
		if c.Kind == "new" {
			w.sent = time.Now()
			err = env.plane.Client.Create(ctx, bindings[i])
		} else {
			w.before = map[string]int64{}
			for _, k := range w.keys {
				w.before[k] = env.tracker.Get(k).Generation
			}
			rb := &workv1alpha2.ResourceBinding{}
			rb.Namespace, rb.Name = bindings[i].Namespace, bindings[i].Name
			w.sent = time.Now()
			err = env.plane.Client.Patch(ctx, rb, workload.DoubleReplicas(bindings[i]))
		}
		if err != nil {
			return fmt.Errorf("%s urgent binding %s: %w", c.Kind, c.Binding, err)
		}
		waits[n] = w
		res.Changes = append(res.Changes, c)
	}
	return p.timeChanges(ctx, env.tracker, res, waits)
}

// timeChanges waits until every change's Works are written (or the phase times out) and
// sets each change's latency and their percentiles.
func (p *propagation) timeChanges(ctx context.Context, tracker *localplane.WorkTracker, res *urgentResult, waits []pending) error {
	err := tracker.Wait(ctx, p.phaseTimeout, func(get func(string) *localplane.WorkState) bool {
		for _, w := range waits {
			if _, ok := w.latency(get); !ok {
				return false
			}
		}
		return true
	})
	if wait.IgnoreTimeout(err) != nil {
		return err
	}
	var lat []time.Duration
	_ = tracker.Wait(ctx, 0, func(get func(string) *localplane.WorkState) bool {
		for n, w := range waits {
			l, ok := w.latency(get)
			if res.Changes[n].Latency = l; !ok {
				res.Changes[n].Latency = -1
				res.Error = "some urgent changes were never written"
				l = time.Duration(1 << 62)
			}
			lat = append(lat, l)
		}
		return true
	})
	slices.Sort(lat)
	res.P50, res.P99, res.Max = percentile(lat, 0.50), percentile(lat, 0.99), lat[len(lat)-1]
	return nil
}

func logUrgent(res *urgentResult) {
	session.Logf("urgent %s: %d fresh changes (every %s): latency p50 %s, p99 %s, max %s; the backlog took %s",
		res.Scenario, len(res.Changes), res.Interval, report.Dur(res.P50), report.Dur(res.P99), report.Dur(res.Max), report.Dur(res.Backlog))
	for _, c := range res.Changes {
		session.Logf("urgent %s:   %-7s %-22s at %8s: %s", res.Scenario, c.Kind, c.Binding, report.Dur(c.At), report.Dur(c.Latency))
	}
}

// percentile of sorted, nearest rank.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// printFlood prints one line per flood run and writes them to path.
func printFlood(rep *urgentReport, path string) error {
	fmt.Println()
	for _, u := range rep.Urgent {
		fmt.Printf("urgent %-7s %-18s %s, then %d bindings at once in namespace %s: %d fresh changes every %s, latency p50 %s p99 %s (target p99 ≤ 1s); backlog %s\n",
			u.Scenario, u.Controller, u.Load, u.Flood, u.FloodNamespace, len(u.Changes), u.Interval,
			report.Dur(u.P50), report.Dur(u.P99), report.Dur(u.Backlog))
	}
	written, err := report.WriteJSON(path, rep)
	if err != nil {
		return err
	}
	fmt.Printf("urgent results: %s\n", written)
	return nil
}
