// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/cpuprofile"
	"github.com/binding-controller/binding-controller/bench/freshchange"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/speedprobe"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// Targets of the scale scenario (issue #15).
const (
	targetScaleGrowth = 1.3      // every per-Work and per-sync figure, full size ÷ 1/divisor size, at most
	targetRSSPerWork  = 8 * 1024 // bytes of controller RSS per cached Work, all in, at most
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
	Speed speedprobe.Speed `json:"speedProbe"`
	Log   string           `json:"log"`
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
	// idle after what came before it (wait.PlaneIdle).
	PlaneSettled time.Duration `json:"planeSettledNs"`
}

type scaleReport struct {
	*session.Session
	Divisor int         `json:"divisor"`
	Runs    []*scaleRun `json:"runs"` // 1/divisor size, full size, and (again) 1/divisor size
	// Urgent is the latency of fresh changes during the full size's second restart.
	Urgent   *urgentResult   `json:"urgent,omitempty"`
	Figures  []report.Figure `json:"figures"`
	Notes    []string        `json:"notes"`
	Finished time.Time       `json:"finished"`
}

type scaleOptions struct {
	load    scaleLoad
	divisor int
	changes int
	env     []string
	// memoryLimit adds GOMEMLIMIT (memoryLimitFor the full size) to env.
	memoryLimit, ceiling, urgent bool
	// again runs the 1/divisor size a second time after the full size: the full size is
	// held against both, and the two small runs' difference is the machine's noise.
	again bool
	// restarts is how many timed restarts each size gets; one restart is one noisy sample.
	restarts  int
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
func (p *propagation) scaleScenario(ctx context.Context, o scaleOptions) (*scaleReport, error) {
	rep := &scaleReport{Session: p.s, Divisor: o.divisor}
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
		r, u, err := p.scaleRun(ctx, l, o, o.urgent && l.Name == full.Name)
		if err != nil {
			return nil, err
		}
		rep.Runs = append(rep.Runs, r)
		if u != nil {
			rep.Urgent = u
		}
		if o.ceiling {
			narrow := loadSpec{Name: l.Name, Bindings: l.Bindings, Clusters: l.Clusters, PerBinding: l.Clusters}
			if r.Ceiling, err = p.ceilingRun(ctx, narrow, controller.Concurrency(p.spec.Args), -1); err != nil {
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

// fleet is one size's bindings: the narrow ones (and, after them, the fresh ones the
// urgent changes create) and the wide one, with the keys of their Works.
type fleet struct {
	bindings, initial        []*workv1alpha2.ResourceBinding
	keys, wideKeys, initKeys []string
}

// scaleRun measures one size on a fresh control plane: the initial propagation, memory
// with every Work cached, changes to the idle fleet, restarts, and (urgent) a second
// restart with fresh changes made while it re-verifies.
func (p *propagation) scaleRun(ctx context.Context, load scaleLoad, o scaleOptions, urgent bool) (*scaleRun, *urgentResult, error) {
	label := p.spec.Label + " " + load.Name
	res := &scaleRun{Load: load, Env: o.env, Finalizer: o.finalizer}
	fresh := 0
	if urgent {
		fresh = o.urgentChanges - o.urgentChanges/2
	}
	env, err := p.setUp(ctx, label, loadSpec{Name: load.Name, Clusters: max(load.Clusters, load.WideClusters)},
		func(ctx context.Context, env *runEnv) error { return scaleTemplates(ctx, env, load, fresh) })
	if err != nil {
		return nil, nil, err
	}
	defer env.stop()
	narrow := loadSpec{Name: load.Name, Bindings: load.Bindings + fresh, Clusters: load.Clusters, PerBinding: load.Clusters}
	fl := newFleet(narrow, load, env.refs, o.finalizer)
	spec := p.spec
	spec.Env = o.env
	res.Log = filepath.Join(env.plane.Dir, "controller.log")
	ctl, err := p.startReady(ctx, env, spec, loadSpec{}, label, "controller.log")
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = ctl.Stop() }()
	res.Command = ctl.Argv
	if err := p.scalePropagate(ctx, label, env, ctl, res, fl, o.profile); err != nil {
		return nil, nil, err
	}
	if err := p.idleChanges(ctx, label, env, res, fl, o.changes); err != nil {
		return nil, nil, err
	}
	if err := ctl.Stop(); err != nil {
		session.Logf("%s: %v", label, err)
	}
	for i := range max(1, o.restarts) {
		// +2: the canary and the wide binding.
		r, err := p.timedRestart(ctx, env, spec, fmt.Sprintf("controller-restarted-%d.log", i+1), load.Bindings+2)
		if err != nil {
			return nil, nil, err
		}
		res.Restarts = append(res.Restarts, r)
	}
	// The restart of median steady time (the later of the two middle ones for an even count).
	res.Restart = slices.SortedFunc(slices.Values(res.Restarts), func(a, b *restartResult) int { return cmp.Compare(a.Steady, b.Steady) })[len(res.Restarts)/2]
	if !urgent {
		return res, nil, nil
	}
	u := &urgentResult{Controller: p.spec.Label, Scenario: "restart", Load: narrow}
	u.Interval = o.urgentInterval
	u.Load.Bindings = load.Bindings
	return res, u, p.urgentRestart(ctx, env, spec, u, fl.bindings, fl.keys, load.Bindings, o.urgentChanges)
}

func newFleet(narrow loadSpec, load scaleLoad, refs []workv1alpha2.ObjectReference, finalizer bool) *fleet {
	fl := &fleet{}
	fl.bindings, fl.keys = bindingsFor(narrow, refs[:narrow.Bindings])
	wideRef := refs[narrow.Bindings]
	wideClusters := workload.Members(load.WideClusters)
	wide := workload.BindingOf(wideRef, wideRef.Name+"-deployment", "bench-"+load.Name+"-wide", wideClusters)
	fl.wideKeys = workKeys(names.WorkName(wideRef.Kind, wideRef.Namespace, wideRef.Name), wideClusters)
	if finalizer {
		// As Karmada's detector creates them (BuildResourceBinding): the finalizer is there
		// before the binding controller first sees the binding.
		for _, rb := range append([]*workv1alpha2.ResourceBinding{wide}, fl.bindings...) {
			rb.Finalizers = []string{workv1alpha2.BindingControllerFinalizer}
		}
	}
	fl.initial = append([]*workv1alpha2.ResourceBinding{wide}, fl.bindings[:load.Bindings]...)
	fl.initKeys = append(slices.Clone(fl.wideKeys), fl.keys[:load.Bindings*load.Clusters]...)
	return fl
}

// scaleTemplates creates the templates of one size: the narrow bindings' and the fresh
// ones' (app-NNNNN), then the wide binding's, in that order in env.refs.
func scaleTemplates(ctx context.Context, env *runEnv, load scaleLoad, fresh int) error {
	n := load.Bindings + fresh
	env.templates = make([]*appsv1.Deployment, n+1)
	env.refs = make([]workv1alpha2.ObjectReference, n+1)
	t := time.Now()
	err := parallel(ctx, n+1, 16, func(ctx context.Context, i int) error {
		name, replicas := templateName(i), int32(load.Clusters)
		if i == n {
			name, replicas = "wide", int32(load.WideClusters)
		}
		d := workload.Deployment(templateNamespace, name, replicas, 0)
		if err := env.plane.Client.Create(ctx, d); err != nil {
			return fmt.Errorf("creating template %s: %w", name, err)
		}
		env.templates[i], env.refs[i] = d, workload.DeploymentRef(d)
		return nil
	})
	session.Logf("%s: %d templates created (untimed) in %s", load.Name, n+1, report.Dur(time.Since(t)))
	return err
}

// scalePropagate probes the machine's speed, creates the initial bindings at once and
// times them until every Work exists, then reads what the controller and the plane used
// and the controller's memory with every Work cached.
func (p *propagation) scalePropagate(ctx context.Context, label string, env *runEnv, ctl *controller.Controller, res *scaleRun, fl *fleet, profile time.Duration) error {
	res.Speed = speedprobe.Measure()
	m, err := startMeter(ctx, env.plane, ctl)
	if err != nil {
		return err
	}
	session.Logf("%s: speed probe: CPU %s, memory %s; creating %d bindings (%d at once) → %d Works", label,
		report.Dur(res.Speed.CPU), report.Dur(res.Speed.Memory), len(fl.initial), p.creators, res.Load.works())
	profiled := p.profileMidPropagation(ctx, env, ctl.Spec, res.Load.Name, label, fl.initKeys, profile)
	start := time.Now()
	res.Initial, _, err = p.createAndTime(ctx, label, env.tracker, fl.initKeys, len(fl.initial), p.creators,
		func(ctx context.Context, i int) error { return env.plane.Client.Create(ctx, fl.initial[i]) })
	if err != nil {
		return err
	}
	if res.Initial.TimedOut {
		return fmt.Errorf("%s: only %d of %d Works after %s", label, res.Initial.Seen, res.Load.works(), p.phaseTimeout)
	}
	profiled()
	if a, err := env.tracker.WaitAll(ctx, fl.wideKeys, time.Second); err == nil {
		res.WideElapsed = a.Last.Sub(start)
	}
	session.Logf("%s: every Work exists %s after the first binding: %.0f Works/s (10–90%%: %.0f/s)",
		label, report.Dur(res.Initial.Elapsed), res.Initial.WorksPerSec, res.Initial.SteadyWorksPerSec)
	if _, err := ctl.WaitQuiet(ctx, time.Second, 2*time.Minute); wait.IgnoreTimeout(err) != nil {
		return err
	}
	u, err := m.stop(ctx, ctl)
	if err != nil {
		return err
	}
	res.CPUSeconds, res.APIServerCPUSeconds, res.EtcdCPUSeconds, res.PlaneCPUSeconds = u.cpu, u.apiserver, u.etcd, u.planeCPU()
	res.Syncs, res.Requests = u.reconciles, u.requests
	session.Logf("%s: %.0f syncs; controller %.1f CPU-seconds (%.2f ms per sync), kube-apiserver %.1f, etcd %.1f",
		label, res.Syncs, res.CPUSeconds, 1000*res.CPUSeconds/res.Syncs, res.APIServerCPUSeconds, res.EtcdCPUSeconds)
	settled, _, err := ctl.SettleGC(ctx, 2, time.Minute)
	if wait.IgnoreTimeout(err) != nil {
		return err
	}
	res.Memory = readMem(ctl, settled)
	works := float64(res.Load.works())
	session.Logf("%s: with every Work cached: RSS %s (%s per Work), heap live %s (%s per Work)", label,
		report.Bytes(res.Memory.RSS), report.Bytes(float64(res.Memory.RSS)/works), report.Bytes(res.Memory.HeapLive), report.Bytes(float64(res.Memory.HeapLive)/works))
	return nil
}

// profileMidPropagation takes, when d is not zero, CPU profiles of kube-apiserver and (when
// its flags serve one) of the controller for d, from the moment 40% of keys exist: at
// either size the API server then holds a fleet of its size's order, and the profiles end
// before the propagation does. The function it returns waits for them.
func (p *propagation) profileMidPropagation(ctx context.Context, env *runEnv, spec controller.Spec, name, label string, keys []string, d time.Duration) (done func()) {
	var wg sync.WaitGroup
	profile := func(what string, take func(path string) (bool, error)) {
		defer wg.Done()
		if err := wait.Poll(ctx, time.Second, p.phaseTimeout, "waiting for 40% of the Works to profile", func(context.Context) (bool, error) {
			return env.tracker.Seen(keys) >= len(keys)*2/5, nil
		}); err != nil {
			session.Logf("%s: no %s profile: %v", label, what, err)
			return
		}
		path := filepath.Join(p.s.Dir, name+"-"+what+".cpu.pprof")
		switch taken, err := take(path); {
		case err != nil:
			session.Logf("%s: %v", label, err)
		case taken:
			session.Logf("%s: %s CPU profile of %s: %s", label, what, d, path)
		}
	}
	if d > 0 {
		wg.Add(2)
		go profile("kube-apiserver", func(path string) (bool, error) { return true, cpuprofile.APIServer(ctx, env.plane.Admin, d, path) })
		go profile("controller", func(path string) (bool, error) { return cpuprofile.Controller(ctx, spec.Args, d, path) })
	}
	return wg.Wait
}

// idleChanges changes the idle fleet one binding at a time, spread over the bindings,
// and times each change until every one of its Works is at a newer generation.
func (p *propagation) idleChanges(ctx context.Context, label string, env *runEnv, res *scaleRun, fl *fleet, changes int) error {
	load := res.Load
	idleFrom := audit.Offset(env.plane.AuditLog)
	series := &freshchange.Series{Client: env.plane.Client, Tracker: env.tracker, Timeout: time.Minute}
	for n := range changes {
		i := n * load.Bindings / changes
		t := freshchange.Target{Binding: fl.bindings[i], Keys: fl.keys[i*load.Clusters : (i+1)*load.Clusters]}
		r, err := series.Make(ctx, time.Now(), []freshchange.Target{t})
		if err == nil && r.Error != "" {
			err = errors.New(r.Error)
		}
		if err != nil {
			return fmt.Errorf("%s: idle change %d: %w", label, n, err)
		}
		res.Idle = append(res.Idle, r.Max)
		fl.bindings[i] = workload.Doubled(fl.bindings[i])
	}
	sorted := slices.Sorted(slices.Values(res.Idle))
	res.IdleP50, res.IdleP99 = percentile(sorted, 0.50), percentile(sorted, 0.99)
	updates, err := audit.ServerTimes(env.plane.AuditLog, audit.ControllerUser, idleFrom, audit.Offset(env.plane.AuditLog), "update works.work.karmada.io")
	if err != nil {
		return err
	}
	if len(updates) > 0 {
		slices.Sort(updates)
		res.IdleWorkUpdateP50 = percentile(updates, 0.50)
		session.Logf("%s: the API server's time over those changes' %d Work updates (audit log): p50 %s", label, len(updates), report.Dur(res.IdleWorkUpdateP50))
	}
	session.Logf("%s: %d changes to the idle fleet: p50 %s, p99 %s", label, len(res.Idle), report.Dur(res.IdleP50), report.Dur(res.IdleP99))
	return nil
}

// timedRestart starts a fresh controller on a fleet whose Works are all current, once
// the plane is idle, and times it to its first sync, to every binding (n) reconciled and
// to quiet, counting its requests from process start.
func (p *propagation) timedRestart(ctx context.Context, env *runEnv, spec controller.Spec, logName string, n int) (*restartResult, error) {
	res := &restartResult{Bindings: n}
	var err error
	if res.PlaneSettled, err = wait.PlaneIdle(ctx, "restart"); err != nil {
		return nil, err
	}
	m, err := startMeter(ctx, env.plane, nil)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	ctl, err := controller.Start(ctx, spec, env.kubeconfig, filepath.Join(env.plane.Dir, logName))
	if err != nil {
		return nil, err
	}
	defer func() { _ = ctl.Stop() }()
	if err := p.waitReconciled(ctx, ctl, 20*time.Millisecond, float64(n), func() { res.FirstSync = time.Since(start) }); err != nil {
		return nil, err
	}
	res.Reconciled = time.Since(start)
	quiet, err := ctl.WaitQuiet(ctx, time.Second, p.phaseTimeout)
	if err != nil {
		return nil, err
	}
	// WaitQuiet returns once nothing moved for a second: that second is not work.
	res.Steady = res.Reconciled + quiet - time.Second
	u, err := m.stop(ctx, ctl)
	if err != nil {
		return nil, err
	}
	res.Requests = u.requests
	session.Logf("restart: first sync %s, %d bindings reconciled %s, steady %s after process start; requests: %s",
		report.Dur(res.FirstSync), n, report.Dur(res.Reconciled), report.Dur(res.Steady), res.Requests.Audit)
	return res, nil
}

// percentile of sorted, nearest rank.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
