// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/benchkit"
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

	// floodKeys are the flood's Works and floodDone reports its creates (flood only).
	floodKeys []string
	floodDone <-chan error
}

// urgentRun makes the load current, then starts the backlog (a restart, or the flood's
// bindings created at once) and during it makes fresh changes (urgentDuring).
func (p *propagation) urgentRun(ctx context.Context, spec benchkit.ControllerSpec, load, flood loadSpec, changes int,
	interval time.Duration) (*urgentResult, error) {
	scenario := "restart"
	if flood.Bindings > 0 {
		scenario = "flood"
	}
	label := spec.Label + " urgent-" + scenario
	res := &urgentResult{Controller: spec.Label, Scenario: scenario, Load: load, Flood: flood.Bindings, FloodNamespace: flood.Namespace, Interval: interval}
	fresh := changes - changes/2
	all := load
	all.Bindings = load.Bindings + fresh
	env, err := p.setUp(ctx, label, all, nil)
	if err != nil {
		return nil, err
	}
	defer env.stop()
	bindings, keys := p.bindingsFor(all, env.refs)
	var floodBindings []*workv1alpha2.ResourceBinding
	if flood.Bindings > 0 {
		_, refs, err := p.prepare(ctx, env.plane, flood)
		if err != nil {
			return nil, err
		}
		floodBindings, res.floodKeys = p.bindingsFor(flood, refs)
	}
	per := load.PerBinding
	res.Log = filepath.Join(env.plane.Dir, "controller.log")
	ctl, err := env.startController(ctx, spec, res.Log)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ctl.Stop() }()
	if err := p.canary(ctx, env.plane, env.tracker, load); err != nil {
		return nil, fmt.Errorf("%s: %w; log tail:\n%s", label, err, ctl.Proc.LogTail(20))
	}
	logf("%s: making %s current", label, load)
	timing, _, err := p.createAndTime(ctx, label, env.tracker, keys[:load.Bindings*per], load.Bindings, p.creators,
		func(ctx context.Context, i int) error { return env.plane.Client.Create(ctx, bindings[i]) })
	if err != nil {
		return nil, err
	}
	if timing.TimedOut {
		return nil, fmt.Errorf("%s: only %d of %d Works became current", label, timing.Seen, load.works())
	}
	if _, err := ctl.WaitQuiet(ctx, env.plane.AuditLog, time.Second, time.Minute); err != nil && !errors.Is(err, benchkit.ErrTimeout) {
		return nil, err
	}
	if flood.Bindings == 0 {
		if err := ctl.Stop(); err != nil {
			logf("%s: %v", label, err)
		}
		res.Log = filepath.Join(env.plane.Dir, "controller-restarted.log")
		err = p.urgentDuring(ctx, env, res, bindings, keys, load.Bindings, changes, func() (*benchkit.Controller, time.Time, error) {
			start := time.Now()
			logf("%s: restarting the controller on %d current Works", label, load.works())
			c, err := env.startController(ctx, spec, res.Log)
			return c, start, err
		})
		return res, err
	}
	floodDone := make(chan error, 1)
	res.floodDone = floodDone
	err = p.urgentDuring(ctx, env, res, bindings, keys, load.Bindings, changes, func() (*benchkit.Controller, time.Time, error) {
		logf("%s: creating %d bindings in namespace %s at once (%d creators) → %d Works", label, flood.Bindings, flood.namespace(), p.creators, len(res.floodKeys))
		go func() {
			floodDone <- benchkit.Parallel(ctx, flood.Bindings, p.creators, func(ctx context.Context, i int) error {
				return env.plane.Client.Create(ctx, floodBindings[i])
			})
		}()
		return ctl, time.Now(), nil
	})
	return res, err
}

// urgentDuring starts a backlog (begin: a restart, or a flood already running, and the
// controller working through it) and during it makes changes fresh changes, one
// every res.Interval, alternately a new binding (bindings[current], [current+1], …) and
// a changed one (replicas doubled, spread over bindings[:current]), and times each until
// its Works are written. For a restart the schedule starts at the first sync after
// process start, when the re-verification begins; the time before it is res.FirstSync.
func (p *propagation) urgentDuring(ctx context.Context, env *runEnv, res *urgentResult, bindings []*workv1alpha2.ResourceBinding,
	keys []string, current, changes int, begin func() (*benchkit.Controller, time.Time, error)) error {
	per := len(keys) / len(bindings)
	keysOf := func(i int) []string { return keys[i*per : (i+1)*per] }
	tracker := env.tracker
	ctl, backlogStart, err := begin()
	if err != nil {
		return err
	}
	if res.floodDone == nil {
		defer func() { _ = ctl.Stop() }()
		processStart := backlogStart
		err := benchkit.Poll(ctx, 10*time.Millisecond, p.phaseTimeout, "waiting for the restarted controller's first sync",
			func(ctx context.Context) (bool, error) {
				s, err := ctl.Scrape(ctx)
				return err == nil && reconciles(s) > 0, nil
			})
		if err != nil {
			return err
		}
		backlogStart = time.Now()
		res.FirstSync = backlogStart.Sub(processStart)
		logf("urgent: first sync %s after process start; the fresh changes begin", benchkit.Dur(res.FirstSync))
	}
	res.Command = ctl.Argv

	// The changes and what each waits for: every one of its Works seen, at a newer
	// generation for a changed binding.
	type pending struct {
		keys   []string
		before map[string]int64
		sent   time.Time
	}
	waits := make([]pending, changes)
	for n := 0; n < changes; n++ {
		if d := time.Until(backlogStart.Add(time.Duration(n) * res.Interval)); d > 0 && n > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
		}
		c := urgentChange{At: time.Since(backlogStart)}
		if n%2 == 0 {
			i := current + n/2
			c.Kind, c.Binding = "new", bindings[i].Name
			waits[n] = pending{keys: keysOf(i), sent: time.Now()}
			if err := env.plane.Client.Create(ctx, bindings[i]); err != nil {
				return fmt.Errorf("creating urgent binding %s: %w", c.Binding, err)
			}
		} else {
			// Spread over the bindings, so that some are early in the backlog and some late.
			i := (n / 2) * current / (changes / 2)
			c.Kind, c.Binding = "changed", bindings[i].Name
			w := pending{keys: keysOf(i), before: map[string]int64{}}
			for _, k := range w.keys {
				w.before[k] = tracker.Get(k).Generation
			}
			w.sent = time.Now()
			rb := &workv1alpha2.ResourceBinding{}
			rb.Namespace, rb.Name = bindings[i].Namespace, bindings[i].Name
			if err := env.plane.Client.Patch(ctx, rb, doubleReplicas(bindings[i])); err != nil {
				return fmt.Errorf("changing urgent binding %s: %w", c.Binding, err)
			}
			waits[n] = w
		}
		res.Changes = append(res.Changes, c)
	}
	latencyOf := func(get func(string) *localplane.WorkState, w pending) (time.Duration, bool) {
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
	err = tracker.Wait(ctx, p.phaseTimeout, func(get func(string) *localplane.WorkState) bool {
		for n := range waits {
			if _, ok := latencyOf(get, waits[n]); !ok {
				return false
			}
		}
		return true
	})
	if err != nil && !errors.Is(err, benchkit.ErrTimeout) {
		return err
	}
	var lat []time.Duration
	_ = tracker.Wait(ctx, 0, func(get func(string) *localplane.WorkState) bool {
		for n := range waits {
			l, ok := latencyOf(get, waits[n])
			if !ok {
				l = -1
			}
			res.Changes[n].Latency = l
		}
		return true
	})
	for _, c := range res.Changes {
		if c.Latency < 0 {
			res.Error = "some urgent changes were never written"
			lat = append(lat, time.Duration(1<<62))
			continue
		}
		lat = append(lat, c.Latency)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.P50, res.P99, res.Max = percentile(lat, 0.50), percentile(lat, 0.99), lat[len(lat)-1]

	if res.floodDone == nil {
		if _, err := ctl.WaitQuiet(ctx, env.plane.AuditLog, time.Second, p.phaseTimeout); err != nil && !errors.Is(err, benchkit.ErrTimeout) {
			return err
		}
		res.Backlog = time.Since(backlogStart) - time.Second
	} else {
		if err := <-res.floodDone; err != nil {
			return fmt.Errorf("flood: %w", err)
		}
		arrival, err := tracker.WaitAll(ctx, res.floodKeys, p.phaseTimeout)
		if err != nil && !errors.Is(err, benchkit.ErrTimeout) {
			return err
		}
		res.Backlog = arrival.Last.Sub(backlogStart)
	}
	logf("urgent %s: %d fresh changes (every %s): latency p50 %s, p99 %s, max %s; the backlog took %s",
		res.Scenario, changes, res.Interval, benchkit.Dur(res.P50), benchkit.Dur(res.P99), benchkit.Dur(res.Max), benchkit.Dur(res.Backlog))
	for _, c := range res.Changes {
		logf("urgent %s:   %-7s %-22s at %8s: %s", res.Scenario, c.Kind, c.Binding, benchkit.Dur(c.At), benchkit.Dur(c.Latency))
	}
	return nil
}

// percentile of sorted, nearest rank.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

// doubleReplicas is a merge patch giving every target cluster of rb twice its replicas:
// a spec change every one of its Works must show.
func doubleReplicas(rb *workv1alpha2.ResourceBinding) client.Patch {
	parts := make([]string, len(rb.Spec.Clusters))
	total := int32(0)
	for i, c := range rb.Spec.Clusters {
		parts[i] = fmt.Sprintf(`{"name":%q,"replicas":%d}`, c.Name, 2*c.Replicas)
		total += 2 * c.Replicas
	}
	return client.RawPatch(types.MergePatchType,
		[]byte(fmt.Sprintf(`{"spec":{"replicas":%d,"clusters":[%s]}}`, total, strings.Join(parts, ","))))
}

func floodText(u *urgentResult) string {
	if u.Flood == 0 {
		return ", restarted"
	}
	return fmt.Sprintf(", then %d bindings at once in namespace %s", u.Flood, u.FloodNamespace)
}

// printUrgent prints one line per urgent or flood run and writes them to path.
func printUrgent(rep *urgentReport, path string) error {
	fmt.Println()
	for _, u := range rep.Urgent {
		fmt.Printf("urgent %-7s %-18s %s%s: %d fresh changes every %s, latency p50 %s p99 %s (target p99 ≤ 1s); backlog %s\n",
			u.Scenario, u.Controller, u.Load, floodText(u), len(u.Changes), u.Interval,
			benchkit.Dur(u.P50), benchkit.Dur(u.P99), benchkit.Dur(u.Backlog))
	}
	written, err := benchkit.WriteJSON(path, rep)
	if err != nil {
		return err
	}
	fmt.Printf("urgent results: %s\n", written)
	return nil
}
