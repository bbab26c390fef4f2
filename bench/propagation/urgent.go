// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/freshchange"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// urgentResult is the latency of fresh changes behind one backlog: a restart's
// re-verification of Bindings × Clusters current Works, or a flood of new bindings.
type urgentResult struct {
	Controller string   `json:"controller"`
	Command    []string `json:"command"`
	Scenario   string   `json:"scenario"` // "restart" or "flood"
	Load       loadSpec `json:"load"`     // current before the backlog began
	Flood      int      `json:"floodBindings,omitempty"`
	// FloodNamespace holds the flood's bindings; the fresh changes are in templateNamespace.
	FloodNamespace string `json:"floodNamespace,omitempty"`
	freshchange.Result
	// FirstSync is, for a restart, process start → the first reconcile: the caches'
	// initial lists, before which no change can be synced.
	FirstSync time.Duration `json:"firstSyncNs,omitempty"`
	// Backlog is how long the backlog took: restart, from the first sync until the
	// controller went quiet; flood, from the first create until every flood Work existed.
	Backlog time.Duration `json:"backlogNs"`
	Log     string        `json:"log"`
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
	res := &urgentResult{Controller: p.spec.Label, Scenario: "flood", Load: load, Flood: flood.Bindings, FloodNamespace: flood.Namespace}
	res.Interval = o.urgentInterval
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

// freshChanges makes changes fresh changes during a backlog that began at start, one
// every res.Interval, alternately a new binding (bindings[current], [current+1], …) and a
// changed one (replicas doubled, spread over bindings[:current]), and times each until
// its Works are written.
func (p *propagation) freshChanges(ctx context.Context, env *runEnv, res *urgentResult, bindings []*workv1alpha2.ResourceBinding,
	keys []string, current, changes int, start time.Time) error {
	per := len(keys) / len(bindings)
	targets := make([]freshchange.Target, changes)
	for n := range targets {
		i, isNew := current+n/2, n%2 == 0
		if !isNew {
			// Spread over the bindings, so that some are early in the backlog and some late.
			i = (n / 2) * current / (changes / 2)
		}
		targets[n] = freshchange.Target{Binding: bindings[i], Keys: keys[i*per : (i+1)*per], New: isNew}
	}
	series := &freshchange.Series{Client: env.plane.Client, Tracker: env.tracker, Interval: res.Interval, Timeout: p.phaseTimeout}
	r, err := series.Make(ctx, start, targets)
	if err != nil {
		return fmt.Errorf("urgent: %w", err)
	}
	res.Result = *r
	return nil
}

func logUrgent(res *urgentResult) {
	res.Result.Log("urgent " + res.Scenario)
	session.Logf("urgent %s: the backlog took %s", res.Scenario, report.Dur(res.Backlog))
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
