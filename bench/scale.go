// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/binding-controller/binding-controller/bench/benchkit"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// Targets of the scale scenario (issue #15).
const (
	targetScaleGrowth  = 1.3      // every per-Work and per-sync figure, full size ÷ 1/divisor size, at most
	targetRSSPerWork   = 8 * 1024 // bytes of controller RSS per cached Work, all in, at most
	scaleWideTemplate  = "wide"
	scaleFreshTemplate = "fresh-%05d"
)

// scaleLoad is the scale scenario's load at one size: Bindings bindings of Clusters
// clusters each, and one binding of WideClusters clusters.
type scaleLoad struct {
	Name         string `json:"name"`
	Bindings     int    `json:"bindings"`
	Clusters     int    `json:"clusters"`
	WideClusters int    `json:"wideClusters"`
}

func (l scaleLoad) works() int { return l.Bindings*l.Clusters + l.WideClusters }

func (l scaleLoad) String() string {
	return fmt.Sprintf("%d bindings × %d clusters + 1 × %d = %d Works", l.Bindings, l.Clusters, l.WideClusters, l.works())
}

// scaleRun is what one size of the scale scenario measured.
type scaleRun struct {
	Load    scaleLoad `json:"load"`
	Command []string  `json:"command"`
	Env     []string  `json:"env,omitempty"`
	// Finalizer: the bindings were created with the binding controller's finalizer.
	Finalizer bool `json:"bindingsCreatedWithFinalizer"`
	// Initial is the initial propagation: every binding created at once, timed until
	// every Work exists; WideElapsed is the wide binding's share of it.
	Initial     arrivalTiming `json:"initial"`
	WideElapsed time.Duration `json:"wideElapsedNs"`
	// Syncs is how many reconciles the initial propagation took, CPUSeconds the
	// controller's CPU over it, PlaneCPUSeconds kube-apiserver's and etcd's together and
	// APIServerCPUSeconds and EtcdCPUSeconds each's.
	Syncs               float64       `json:"syncs"`
	CPUSeconds          float64       `json:"cpuSeconds"`
	PlaneCPUSeconds     float64       `json:"controlPlaneCpuSeconds"`
	APIServerCPUSeconds float64       `json:"apiserverCpuSeconds"`
	EtcdCPUSeconds      float64       `json:"etcdCpuSeconds"`
	Requests            requestCounts `json:"requests"`
	// Memory is read with every Work cached, once two garbage collections completed.
	Memory memReading `json:"memory"`
	// Idle is the latency of changes made one at a time to an idle fleet, each from the
	// change sent to the last of its binding's Works at the new generation.
	Idle    []time.Duration `json:"idleNs"`
	IdleP50 time.Duration   `json:"idleP50Ns"`
	IdleP99 time.Duration   `json:"idleP99Ns"`
	// IdleWorkUpdateP50 is the API server's own time over the Work updates of those
	// changes (audit log), median: what of the changes' latency is the plane's.
	IdleWorkUpdateP50 time.Duration `json:"idleWorkUpdateServerP50Ns"`
	// Restarts are fresh processes re-verifying every binding, one after the other;
	// Restart is the one of median steady time, the figure the table compares.
	Restarts []*restartResult `json:"restarts,omitempty"`
	Restart  *restartResult   `json:"restart,omitempty"`
	// Ceiling is a plain client creating the same narrow Works on a fresh plane.
	Ceiling *ceilingResult `json:"ceiling,omitempty"`
	// Speed is the machine's speed just before the initial propagation, on the idle
	// plane. Runs minutes apart on a shared machine can differ by more than the fleet's
	// size does; this says whether the machine did.
	Speed machineSpeed `json:"speedProbe"`
	Log   string       `json:"log"`
}

// restartResult is a fresh controller process on bindings whose Works are all current.
type restartResult struct {
	Bindings int `json:"bindings"`
	// FirstSync is process start → first reconcile (caches listed, workers started);
	// Steady is process start → every binding reconciled and the controller quiet.
	FirstSync  time.Duration `json:"firstSyncNs"`
	Reconciled time.Duration `json:"reconciledNs"`
	Steady     time.Duration `json:"steadyNs"`
	Requests   requestCounts `json:"requests"`
	// PlaneSettled is how long the plane took, before the restart, to come back to
	// idle after what came before it (planeQuiet).
	PlaneSettled time.Duration `json:"planeSettledNs"`
}

type scaleReport struct {
	*session
	Divisor int         `json:"divisor"`
	Runs    []*scaleRun `json:"runs"` // 1/divisor size, full size, and (again) 1/divisor size
	// Urgent is the latency of fresh changes during the full size's second restart.
	Urgent   *urgentResult `json:"urgent,omitempty"`
	Figures  []figure      `json:"figures"`
	Notes    []string      `json:"notes"`
	Finished time.Time     `json:"finished"`
}

type scaleOptions struct {
	load    scaleLoad
	divisor int
	changes int
	env     []string
	// memoryLimit adds GOMEMLIMIT (memoryLimitFor the full size) to env.
	memoryLimit bool
	ceiling     bool
	urgent      bool
	// again runs the 1/divisor size a second time after the full size: the full size is
	// held against both, and the two small runs' difference is the machine's noise.
	again bool
	// restarts is how many timed restarts each size gets; one restart is one noisy sample.
	restarts int
	// finalizer creates the bindings with the binding controller's finalizer.
	finalizer bool
	// urgentChanges and urgentInterval shape the fresh changes during the second restart.
	urgentChanges  int
	urgentInterval time.Duration
	// profile, when not zero, is how long CPU profiles of kube-apiserver (and of the
	// controller, when it serves pprof) are taken for, from the moment 40% of each size's
	// initial Works exist.
	profile time.Duration
}

// scaleScenario runs the load at 1/divisor of its size, then at full size and (again)
// at 1/divisor once more, each on a fresh control plane, so that every per-Work and
// per-sync figure can be held against the same figure of the smaller fleet measured
// minutes before and minutes after.
func (p *propagation) scaleScenario(ctx context.Context, spec benchkit.ControllerSpec, o scaleOptions) (*scaleReport, error) {
	rep := &scaleReport{session: p.s, Divisor: o.divisor}
	small := scaleLoad{Name: "scale-small", Bindings: max(1, o.load.Bindings/o.divisor), Clusters: o.load.Clusters,
		WideClusters: max(1, o.load.WideClusters/o.divisor)}
	full := o.load
	full.Name = "scale-full"
	if o.memoryLimit && !slices.ContainsFunc(o.env, func(e string) bool { return strings.HasPrefix(e, "GOMEMLIMIT=") }) {
		o.env = append(slices.Clip(o.env), memoryLimitFor(full))
	}
	loads := []scaleLoad{small, full}
	if o.again {
		again := small
		again.Name = "scale-small-again"
		loads = append(loads, again)
	}
	for _, l := range loads {
		r, u, err := p.scaleRun(ctx, spec, l, o, o.urgent && l.Name == full.Name)
		if err != nil {
			return nil, err
		}
		rep.Runs = append(rep.Runs, r)
		if u != nil {
			rep.Urgent = u
		}
		if o.ceiling {
			narrow := loadSpec{Name: l.Name, Bindings: l.Bindings, Clusters: l.Clusters, PerBinding: l.Clusters}
			if r.Ceiling, err = p.ceilingRun(ctx, narrow, managerFlagInt(spec.Args, "concurrent-resourcebinding-syncs", 5)*
				managerFlagInt(spec.Args, "cluster-sync-concurrency", 8), -1); err != nil {
				return nil, err
			}
		}
	}
	return rep, nil
}

// memoryLimitFor is the GOMEMLIMIT a container sized for load at the RSS budget would
// set: 90% of the budget, leaving the rest to what the Go runtime does not count (the
// binary's text, for one). The same limit at both sizes: the small one never reaches it.
func memoryLimitFor(load scaleLoad) string {
	return fmt.Sprintf("GOMEMLIMIT=%dMiB", int(0.9*targetRSSPerWork*float64(load.works()))>>20)
}

// scaleRun measures one size on a fresh control plane: the initial propagation, memory
// with every Work cached, changes to the idle fleet, a restart, and (urgent) a second
// restart with fresh changes made while it re-verifies.
func (p *propagation) scaleRun(ctx context.Context, spec benchkit.ControllerSpec, load scaleLoad, o scaleOptions, urgent bool) (*scaleRun, *urgentResult, error) {
	label := spec.Label + " " + load.Name
	res := &scaleRun{Load: load, Env: o.env, Finalizer: o.finalizer}
	fresh := 0
	if urgent {
		fresh = o.urgentChanges - o.urgentChanges/2
	}
	wideClusters := benchkit.Members(load.WideClusters)
	env, err := p.setUp(ctx, label, loadSpec{Name: load.Name, Clusters: max(load.Clusters, load.WideClusters)},
		func(ctx context.Context, env *runEnv) error {
			return p.scaleTemplates(ctx, env, load, fresh)
		})
	if err != nil {
		return nil, nil, err
	}
	defer env.stop()
	narrow := loadSpec{Name: load.Name, Bindings: load.Bindings + fresh, Clusters: load.Clusters, PerBinding: load.Clusters}
	bindings, keys := p.bindingsFor(narrow, env.refs[:load.Bindings+fresh])
	wideRef := env.refs[load.Bindings+fresh]
	wide := benchkit.BindingOf(wideRef, scaleWideTemplate+"-deployment", "bench-"+load.Name+"-wide", wideClusters)
	wideWork := names.WorkName(wideRef.Kind, wideRef.Namespace, wideRef.Name)
	var wideKeys []string
	for _, c := range wideClusters {
		wideKeys = append(wideKeys, localplane.WorkKey(names.ExecutionNamespace(c), wideWork))
	}
	if o.finalizer {
		// As Karmada's detector creates them (BuildResourceBinding): the finalizer is there
		// before the binding controller first sees the binding.
		for _, rb := range append([]*workv1alpha2.ResourceBinding{wide}, bindings...) {
			rb.Finalizers = []string{workv1alpha2.BindingControllerFinalizer}
		}
	}
	initial := append([]*workv1alpha2.ResourceBinding{wide}, bindings[:load.Bindings]...)
	initialKeys := append(append([]string{}, wideKeys...), keys[:load.Bindings*load.Clusters]...)

	spec.Env = o.env
	res.Log = filepath.Join(env.plane.Dir, "controller.log")
	ctl, err := env.startController(ctx, spec, res.Log)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = ctl.Stop() }()
	res.Command = ctl.Argv
	if err := p.canary(ctx, env.plane, env.tracker, loadSpec{}); err != nil {
		return nil, nil, fmt.Errorf("%s: %w; log tail:\n%s", label, err, ctl.Proc.LogTail(20))
	}
	if _, err := ctl.WaitQuiet(ctx, env.plane.AuditLog, time.Second, 30*time.Second); err != nil && !errors.Is(err, benchkit.ErrTimeout) {
		return nil, nil, err
	}
	res.Speed = speedProbe()
	before, err := ctl.Scrape(ctx)
	if err != nil {
		return nil, nil, err
	}
	auditFrom := benchkit.AuditOffset(env.plane.AuditLog)
	cpuBefore, _ := localplane.ReadCPU(ctl.Proc.Pid())
	planeBefore, _ := localplane.ChildrenCPUByComm("kube-apiserver", "etcd")
	logf("%s: speed probe: CPU %s, memory %s; creating %d bindings (%d at once) → %d Works", label, benchkit.Dur(res.Speed.CPU), benchkit.Dur(res.Speed.Memory), len(initial), p.creators, load.works())
	profiled := p.profileMidPropagation(ctx, env, spec, load.Name, label, initialKeys, o.profile)
	start := time.Now()
	res.Initial, _, err = p.createAndTime(ctx, label, env.tracker, initialKeys, len(initial), p.creators,
		func(ctx context.Context, i int) error { return env.plane.Client.Create(ctx, initial[i]) })
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", label, err)
	}
	if res.Initial.TimedOut {
		return nil, nil, fmt.Errorf("%s: only %d of %d Works after %s", label, res.Initial.Seen, load.works(), p.phaseTimeout)
	}
	profiled()
	if a, err := env.tracker.WaitAll(ctx, wideKeys, time.Second); err == nil {
		res.WideElapsed = a.Last.Sub(start)
	}
	logf("%s: every Work exists %s after the first binding: %.0f Works/s (10–90%%: %.0f/s)",
		label, benchkit.Dur(res.Initial.Elapsed), res.Initial.WorksPerSec, res.Initial.SteadyWorksPerSec)
	if _, err := ctl.WaitQuiet(ctx, env.plane.AuditLog, time.Second, 2*time.Minute); err != nil && !errors.Is(err, benchkit.ErrTimeout) {
		return nil, nil, err
	}
	if cpuAfter, err := localplane.ReadCPU(ctl.Proc.Pid()); err == nil {
		res.CPUSeconds = cpuAfter - cpuBefore
	}
	if planeAfter, err := localplane.ChildrenCPUByComm("kube-apiserver", "etcd"); err == nil {
		res.APIServerCPUSeconds = planeAfter["kube-apiserver"] - planeBefore["kube-apiserver"]
		res.EtcdCPUSeconds = planeAfter["etcd"] - planeBefore["etcd"]
	}
	res.PlaneCPUSeconds = res.APIServerCPUSeconds + res.EtcdCPUSeconds
	after, err := ctl.Scrape(ctx)
	if err != nil {
		return nil, nil, err
	}
	res.Syncs = reconciles(after) - reconciles(before)
	if res.Requests, err = requestDelta(before, after, env.plane.AuditLog, auditFrom, benchkit.AuditOffset(env.plane.AuditLog)); err != nil {
		return nil, nil, err
	}
	logf("%s: %.0f syncs; controller %.1f CPU-seconds (%.2f ms per sync), kube-apiserver %.1f, etcd %.1f",
		label, res.Syncs, res.CPUSeconds, 1000*res.CPUSeconds/res.Syncs, res.APIServerCPUSeconds, res.EtcdCPUSeconds)

	settled, _, err := ctl.SettleGC(ctx, 2, time.Minute)
	if err != nil && !errors.Is(err, benchkit.ErrTimeout) {
		return nil, nil, err
	}
	res.Memory = readMem(ctl, settled)
	logf("%s: with every Work cached: RSS %s (%s per Work), heap live %s (%s per Work)", label,
		benchkit.Bytes(res.Memory.RSS), benchkit.Bytes(float64(res.Memory.RSS)/float64(load.works())),
		benchkit.Bytes(res.Memory.HeapLive), benchkit.Bytes(float64(res.Memory.HeapLive)/float64(load.works())))

	// Changes to the idle fleet, one at a time, spread over the bindings.
	idleFrom := benchkit.AuditOffset(env.plane.AuditLog)
	for n := 0; n < o.changes; n++ {
		i := n * load.Bindings / o.changes
		l, err := p.changeAndWait(ctx, env, bindings[i], keys[i*load.Clusters:(i+1)*load.Clusters])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: idle change %d: %w", label, n, err)
		}
		res.Idle = append(res.Idle, l)
		bindings[i] = doubled(bindings[i])
	}
	sorted := append([]time.Duration(nil), res.Idle...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	res.IdleP50, res.IdleP99 = percentile(sorted, 0.50), percentile(sorted, 0.99)
	updates, err := benchkit.ReadAuditServerTimes(env.plane.AuditLog, benchkit.ControllerUser, idleFrom,
		benchkit.AuditOffset(env.plane.AuditLog), "update works.work.karmada.io")
	if err != nil {
		return nil, nil, err
	}
	if len(updates) > 0 {
		sort.Slice(updates, func(i, j int) bool { return updates[i] < updates[j] })
		res.IdleWorkUpdateP50 = percentile(updates, 0.50)
		logf("%s: the API server's time over those changes' %d Work updates (audit log): p50 %s", label, len(updates), benchkit.Dur(res.IdleWorkUpdateP50))
	}
	logf("%s: %d changes to the idle fleet: p50 %s, p99 %s", label, len(res.Idle), benchkit.Dur(res.IdleP50), benchkit.Dur(res.IdleP99))

	if err := ctl.Stop(); err != nil {
		logf("%s: %v", label, err)
	}
	// +2: the canary and the wide binding.
	n := load.Bindings + 2
	for i := range max(1, o.restarts) {
		r, err := p.timedRestart(ctx, env, spec, filepath.Join(env.plane.Dir, fmt.Sprintf("controller-restarted-%d.log", i+1)), n)
		if err != nil {
			return nil, nil, err
		}
		res.Restarts = append(res.Restarts, r)
	}
	res.Restart = medianRestart(res.Restarts)
	if !urgent {
		return res, nil, nil
	}
	u := &urgentResult{Controller: spec.Label, Scenario: "restart", Load: narrow, Interval: o.urgentInterval}
	u.Load.Bindings = load.Bindings
	err = p.urgentDuring(ctx, env, u, bindings, keys, load.Bindings, o.urgentChanges, func() (*benchkit.Controller, time.Time, error) {
		if _, err := planeQuiet(ctx, "urgent restart"); err != nil {
			return nil, time.Time{}, err
		}
		start := time.Now()
		ctl, err := env.startController(ctx, spec, filepath.Join(env.plane.Dir, "controller-urgent.log"))
		return ctl, start, err
	})
	if err != nil {
		return nil, nil, err
	}
	return res, u, nil
}

// profileMidPropagation takes, when d is not zero, CPU profiles of kube-apiserver and (when
// its flags serve one) of the controller for d, from the moment 40% of keys exist: at
// either size the API server then holds a fleet of its size's order, and the profiles end
// before the propagation does. The function it returns waits for them and logs the outcome.
func (p *propagation) profileMidPropagation(ctx context.Context, env *runEnv, spec benchkit.ControllerSpec, name, label string, keys []string, d time.Duration) (wait func()) {
	if d <= 0 {
		return func() {}
	}
	var wg sync.WaitGroup
	profile := func(what string, take func(path string) (bool, error)) {
		defer wg.Done()
		if err := benchkit.Poll(ctx, time.Second, p.phaseTimeout, "waiting for 40% of the Works to profile", func(context.Context) (bool, error) {
			return env.tracker.Seen(keys) >= len(keys)*2/5, nil
		}); err != nil {
			logf("%s: no %s profile: %v", label, what, err)
			return
		}
		path := filepath.Join(p.s.Dir, name+"-"+what+".cpu.pprof")
		switch taken, err := take(path); {
		case err != nil:
			logf("%s: %v", label, err)
		case taken:
			logf("%s: %s CPU profile of %s: %s", label, what, d, path)
		}
	}
	wg.Add(2)
	go profile("kube-apiserver", func(path string) (bool, error) {
		return true, profileAPIServer(ctx, env.plane.Admin, d, path)
	})
	go profile("controller", func(path string) (bool, error) { return profileController(ctx, spec.Args, d, path) })
	return wg.Wait
}

// scaleTemplates creates the templates of one size: the narrow bindings' and the fresh
// ones' (app-NNNNN), then the wide binding's, in that order in env.refs.
func (p *propagation) scaleTemplates(ctx context.Context, env *runEnv, load scaleLoad, fresh int) error {
	n := load.Bindings + fresh
	env.templates = make([]*appsv1.Deployment, n+1)
	env.refs = make([]workv1alpha2.ObjectReference, n+1)
	t := time.Now()
	err := benchkit.Parallel(ctx, n+1, 16, func(ctx context.Context, i int) error {
		name, replicas := templateName(i), int32(load.Clusters)
		if i == n {
			name, replicas = scaleWideTemplate, int32(load.WideClusters)
		}
		d := benchkit.Deployment(templateNamespace, name, replicas, 0)
		if err := env.plane.Client.Create(ctx, d); err != nil {
			return fmt.Errorf("creating template %s: %w", name, err)
		}
		env.templates[i] = d
		env.refs[i] = workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, UID: d.UID}
		return nil
	})
	logf("%s: %d templates created (untimed) in %s", load.Name, n+1, benchkit.Dur(time.Since(t)))
	return err
}

// medianRestart is the restart of median steady time (the later of the two middle ones
// for an even count).
func medianRestart(rs []*restartResult) *restartResult {
	sorted := append([]*restartResult(nil), rs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Steady < sorted[j].Steady })
	return sorted[len(sorted)/2]
}

// timedRestart starts a fresh controller on a fleet whose Works are all current and
// times it to its first sync, to every binding (n) reconciled and to quiet, counting its
// requests from process start.
func (p *propagation) timedRestart(ctx context.Context, env *runEnv, spec benchkit.ControllerSpec, logPath string, n int) (*restartResult, error) {
	res := &restartResult{Bindings: n}
	var err error
	if res.PlaneSettled, err = planeQuiet(ctx, "restart"); err != nil {
		return nil, err
	}
	auditFrom := benchkit.AuditOffset(env.plane.AuditLog)
	start := time.Now()
	ctl, err := env.startController(ctx, spec, logPath)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ctl.Stop() }()
	err = benchkit.Poll(ctx, 20*time.Millisecond, p.phaseTimeout, "waiting for the restarted controller to reconcile every binding",
		func(ctx context.Context) (bool, error) {
			s, err := ctl.Scrape(ctx)
			if err != nil {
				return false, nil
			}
			r := reconciles(s)
			if r > 0 && res.FirstSync == 0 {
				res.FirstSync = time.Since(start)
			}
			return r >= float64(n), nil
		})
	if err != nil {
		return nil, err
	}
	res.Reconciled = time.Since(start)
	quiet, err := ctl.WaitQuiet(ctx, env.plane.AuditLog, time.Second, p.phaseTimeout)
	if err != nil {
		return nil, err
	}
	// WaitQuiet returns once nothing moved for a second: that second is not work.
	res.Steady = res.Reconciled + quiet - time.Second
	after, err := ctl.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	if res.Requests, err = requestDelta(localplane.Metrics{}, after, env.plane.AuditLog, auditFrom, benchkit.AuditOffset(env.plane.AuditLog)); err != nil {
		return nil, err
	}
	logf("restart: first sync %s, %d bindings reconciled %s, steady %s after process start; requests: %s",
		benchkit.Dur(res.FirstSync), n, benchkit.Dur(res.Reconciled), benchkit.Dur(res.Steady), auditSummary(res.Requests.Audit))
	return res, nil
}

// Quiet plane: kube-apiserver and etcd together under planeQuietCores over a window of
// planeQuietWindow. A restart timed while the plane still works off what came before it
// (etcd's compaction, its garbage collectors) would measure that too, and mostly at the
// full size; the wait rules it out, and the table shows how long it took.
const (
	planeQuietWindow  = 2 * time.Second
	planeQuietCores   = 0.15
	planeQuietTimeout = 3 * time.Minute
)

// planeQuiet waits until the plane's CPU use falls under planeQuietCores (a counter that
// stops moving, not a fixed sleep) and returns how long that took; past
// planeQuietTimeout it logs the plane's last rate and returns.
func planeQuiet(ctx context.Context, what string) (time.Duration, error) {
	start := time.Now()
	last, err := localplane.ChildrenCPU("kube-apiserver", "etcd")
	if err != nil {
		return 0, err
	}
	lastAt, cores := time.Now(), math.NaN()
	err = benchkit.Poll(ctx, planeQuietWindow, planeQuietTimeout, what+": waiting for an idle plane", func(context.Context) (bool, error) {
		if time.Since(lastAt) < planeQuietWindow/2 {
			return false, nil // Poll's first call comes at once: no window to measure yet
		}
		now, err := localplane.ChildrenCPU("kube-apiserver", "etcd")
		if err != nil {
			return false, err
		}
		cores = (now - last) / time.Since(lastAt).Seconds()
		last, lastAt = now, time.Now()
		return cores < planeQuietCores, nil
	})
	waited := time.Since(start)
	switch {
	case errors.Is(err, benchkit.ErrTimeout):
		logf("%s: the plane still used %.2f cores after %s; restarting anyway", what, cores, benchkit.Dur(waited))
	case err != nil:
		return waited, err
	default:
		logf("%s: the plane was idle (%.2f cores) after %s", what, cores, benchkit.Dur(waited))
	}
	return waited, nil
}

// changeAndWait doubles rb's replicas and waits until every one of its Works (keys) is
// at a newer generation, returning the time from the patch sent to the last Work.
func (p *propagation) changeAndWait(ctx context.Context, env *runEnv, rb *workv1alpha2.ResourceBinding, keys []string) (time.Duration, error) {
	before := map[string]int64{}
	for _, k := range keys {
		before[k] = env.tracker.Get(k).Generation
	}
	sent := time.Now()
	target := &workv1alpha2.ResourceBinding{}
	target.Namespace, target.Name = rb.Namespace, rb.Name
	if err := env.plane.Client.Patch(ctx, target, doubleReplicas(rb)); err != nil {
		return 0, err
	}
	var last time.Time
	err := env.tracker.Wait(ctx, time.Minute, func(get func(string) *localplane.WorkState) bool {
		last = time.Time{}
		for _, k := range keys {
			st := get(k)
			if st.Generation <= before[k] {
				return false
			}
			if st.GenerationAt.After(last) {
				last = st.GenerationAt
			}
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	return last.Sub(sent), nil
}

// doubled is rb as doubleReplicas leaves it, so that a second change doubles again.
func doubled(rb *workv1alpha2.ResourceBinding) *workv1alpha2.ResourceBinding {
	out := rb.DeepCopy()
	out.Spec.Replicas = 0
	for i := range out.Spec.Clusters {
		out.Spec.Clusters[i].Replicas *= 2
		out.Spec.Replicas += out.Spec.Clusters[i].Replicas
	}
	return out
}

// perWork divides by the load's Works (NaN when there are none).
func perWork(v float64, l scaleLoad) float64 {
	if l.works() == 0 {
		return math.NaN()
	}
	return v / float64(l.works())
}
