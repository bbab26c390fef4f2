// SPDX-License-Identifier: Apache-2.0

package vskarmada

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/freshchange"
	"github.com/binding-controller/binding-controller/bench/recovery"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	"github.com/binding-controller/binding-controller/pkg/ledgercheckpoint"
)

// result is what one controller did over the fleet.
type result struct {
	Label string `json:"label"`
	// Argv is what was run, the restarted process too.
	Argv        []string          `json:"argv"`
	Works       int               `json:"works"`
	Propagation propagationResult `json:"propagation"`
	Memory      memoryResult      `json:"memory"`
	Restart     *restartResult    `json:"restart,omitempty"`
	Recovery    *recoveryResult   `json:"recovery,omitempty"`
	// Fresh are the changes made during a second restart.
	Fresh *freshchange.Result `json:"freshChanges,omitempty"`
}

type propagationResult struct {
	// Elapsed: first binding create sent → the last Work seen by the tracker's watch.
	Elapsed     time.Duration `json:"elapsedNs"`
	WorksPerSec float64       `json:"worksPerSec"`
	TimedOut    bool          `json:"timedOut,omitempty"`
	Seen        int           `json:"seen"`
	// CPU seconds of the controller and of kube-apiserver + etcd, from the first create
	// to the controller quiet.
	CPUSeconds      float64      `json:"cpuSeconds"`
	PlaneCPUSeconds float64      `json:"planeCPUSeconds"`
	Quiet           bool         `json:"quiet"`
	Requests        audit.Counts `json:"requests"`
}

type memoryResult struct {
	// Idle: the templates cached, no binding yet; Current: every Work current.
	Idle    localplane.Memory `json:"idle"`
	Current localplane.Memory `json:"current"`
}

type restartResult struct {
	Bindings int `json:"bindings"`
	// LastRequest: process start → its last request the API server logged before it
	// went quiet; Reconciled: process start → every binding reconciled (its metrics).
	LastRequest time.Duration `json:"lastRequestNs"`
	Reconciled  time.Duration `json:"reconciledNs"`
	Quiet       bool          `json:"quiet"`
	Requests    audit.Counts  `json:"requests"`
	WorkWrites  int           `json:"workWrites"`
	CPUSeconds  float64       `json:"cpuSeconds"`
	// RSS once quiet, read as Memory.Current is.
	RSS int64 `json:"rssBytes"`
	// CheckpointConfigMaps holds this project's Work ledger checkpoint when the
	// restarted process started: what the stopped one saved.
	CheckpointConfigMaps int `json:"checkpointConfigMaps"`
}

type recoveryResult struct {
	Block   string            `json:"block"`
	Samples []recovery.Sample `json:"samples"`
	P50Ms   report.Num        `json:"p50Ms"`
	MaxMs   report.Num        `json:"maxMs"`
}

// run measures sd over the fleet on a fresh plane: the propagation, a restart, the
// recoveries with the restarted process, and a second restart with fresh changes.
func (r *runner) run(ctx context.Context, sd side) (*result, error) {
	label := sd.spec.Label
	f, err := r.setUp(ctx, label)
	if err != nil {
		return nil, err
	}
	defer f.stop()
	res := &result{Label: label, Works: len(f.keys)}
	ctl, err := r.startReady(ctx, f, sd)
	if err != nil {
		return nil, err
	}
	res.Argv = ctl.Argv
	err = r.propagate(ctx, f, ctl, res)
	stop(label, ctl)
	if err != nil || res.Propagation.TimedOut {
		return res, err // a restart over a fleet only partly there would measure nothing
	}
	res.Restart = &restartResult{Bindings: len(f.bindings) + 1} // +1: the canary
	if res.Restart.CheckpointConfigMaps, err = checkpointSaved(ctx, f, sd, ctl); err != nil {
		return nil, err
	}
	ctl, err = r.restart(ctx, f, sd, res.Restart)
	if err == nil {
		res.Recovery, err = r.recover(ctx, f, ctl)
	}
	if ctl != nil {
		stop(label, ctl)
	}
	if err != nil || r.o.fresh == 0 {
		return res, err
	}
	res.Fresh, err = r.freshRestart(ctx, f, sd)
	return res, err
}

// stop stops ctl with SIGTERM, as a rollout or a leader change does: this project's
// controller saves its Work ledger checkpoint on the way out.
func stop(label string, ctl *controller.Controller) {
	t := time.Now()
	if err := ctl.Stop(); err != nil {
		session.Logf("%s: %v", label, err)
	}
	session.Logf("%s: controller stopped in %s", label, report.Dur(time.Since(t)))
}

// checkpointSaved counts the ConfigMaps of this project's Work ledger checkpoint: a side
// that saves one must have left it for its restart, or the restart would measure a start
// without it.
func checkpointSaved(ctx context.Context, f *fleet, sd side, stopped *controller.Controller) (int, error) {
	cms := &corev1.ConfigMapList{}
	if err := f.plane.Client.List(ctx, cms, client.InNamespace(localplane.KarmadaSystemNamespace), client.HasLabels{ledgercheckpoint.Label}); err != nil {
		return 0, err
	}
	if sd.checkpoints() {
		if len(cms.Items) == 0 {
			return 0, fmt.Errorf("%s: no Work ledger checkpoint saved before the restart; log tail:\n%s", sd.spec.Label, stopped.LogTail(20))
		}
		session.Logf("%s: the Work ledger checkpoint is saved, in %d ConfigMaps", sd.spec.Label, len(cms.Items))
	}
	return len(cms.Items), nil
}

// propagate creates the bindings and times them until every Work exists, then reads
// what the controller used: CPU and requests to quiet, RSS with every Work current.
func (r *runner) propagate(ctx context.Context, f *fleet, ctl *controller.Controller, res *result) error {
	label, p := res.Label, &res.Propagation
	var err error
	if res.Memory.Idle, err = rss(ctx, ctl); err != nil {
		return err
	}
	cpu, _ := localplane.ReadCPU(ctl.Proc.Pid())
	planeCPU, _ := localplane.ChildrenCPU("kube-apiserver", "etcd")
	from := audit.Offset(f.plane.AuditLog)
	session.Logf("%s: creating %d bindings (%d at once) → %d Works", label, len(f.bindings), r.o.creators, len(f.keys))
	done := make(chan struct{})
	go progress(label, f, done)
	start := time.Now()
	err = r.createBindings(ctx, f)
	var arrival localplane.Arrival
	if err == nil {
		arrival, err = f.tracker.WaitAll(ctx, f.keys, r.o.phaseTimeout)
	}
	close(done)
	switch {
	case wait.IgnoreTimeout(err) != nil:
		return err
	case err != nil:
		p.TimedOut, p.Seen = true, f.tracker.Seen(f.keys)
		session.Logf("%s: TIMEOUT: only %d of %d Works after %s", label, p.Seen, len(f.keys), r.o.phaseTimeout)
	default:
		p.Seen, p.Elapsed = len(f.keys), arrival.Last.Sub(start)
		p.WorksPerSec = float64(len(f.keys)) / p.Elapsed.Seconds()
		session.Logf("%s: every Work exists %s after the first binding was created: %.0f Works/s", label, report.Dur(p.Elapsed), p.WorksPerSec)
	}
	_, err = ctl.WaitQuiet(ctx, time.Second, time.Minute)
	if p.Quiet = err == nil; wait.IgnoreTimeout(err) != nil {
		return err
	}
	if now, err := localplane.ReadCPU(ctl.Proc.Pid()); err == nil {
		p.CPUSeconds = now - cpu
	}
	if now, err := localplane.ChildrenCPU("kube-apiserver", "etcd"); err == nil {
		p.PlaneCPUSeconds = now - planeCPU
	}
	if p.Requests, err = audit.Read(f.plane.AuditLog, audit.ControllerUser, from, audit.Offset(f.plane.AuditLog)); err != nil {
		return err
	}
	if res.Memory.Current, err = rss(ctx, ctl); err != nil {
		return err
	}
	session.Logf("%s: quiet; controller CPU %.1fs, kube-apiserver + etcd %.1fs; RSS %s (idle %s); requests: %s", label,
		p.CPUSeconds, p.PlaneCPUSeconds, report.Bytes(res.Memory.Current.RSS), report.Bytes(res.Memory.Idle.RSS), p.Requests.ByVerb())
	return nil
}

// rss reads the controller's memory once two garbage collections have completed since
// now (when its metrics count them), so that both controllers are read at the same point
// of their collections rather than wherever the last one left them.
func rss(ctx context.Context, ctl *controller.Controller) (localplane.Memory, error) {
	if _, _, err := ctl.SettleGC(ctx, 2, time.Minute); wait.IgnoreTimeout(err) != nil {
		return localplane.Memory{}, err
	}
	return localplane.ReadMemory(ctl.Proc.Pid())
}

// restart starts a fresh process over the propagated fleet once the plane is idle, and
// times it from process start to its last request, counting its requests from the
// audit log: what a restart or a leader change costs. The caller stops the process it
// returns, also with an error.
func (r *runner) restart(ctx context.Context, f *fleet, sd side, rs *restartResult) (*controller.Controller, error) {
	label := sd.spec.Label
	if _, err := wait.PlaneIdle(ctx, label+" restart"); err != nil {
		return nil, err
	}
	from := audit.Offset(f.plane.AuditLog)
	start := time.Now()
	ctl, err := controller.Start(ctx, sd.spec, f.kubeconfig, filepath.Join(f.plane.Dir, "controller-restarted.log"))
	if err != nil {
		return nil, err
	}
	err = wait.Poll(ctx, 20*time.Millisecond, r.o.phaseTimeout, "waiting for every binding to be reconciled", func(ctx context.Context) (bool, error) {
		if err := ctl.Alive(); err != nil {
			return false, err
		}
		s, err := ctl.Scrape(ctx)
		return err == nil && controller.ReconcilesOf(s, sd.reconciler) >= float64(rs.Bindings), nil
	})
	if err != nil {
		return ctl, err
	}
	rs.Reconciled = time.Since(start)
	_, err = ctl.WaitQuiet(ctx, 2*time.Second, r.o.phaseTimeout)
	if rs.Quiet = err == nil; wait.IgnoreTimeout(err) != nil {
		return ctl, err
	}
	to := audit.Offset(f.plane.AuditLog)
	last, err := audit.Last(f.plane.AuditLog, audit.ControllerUser, from, to)
	if err != nil {
		return ctl, err
	}
	rs.LastRequest = last.Sub(start)
	if rs.Requests, err = audit.Read(f.plane.AuditLog, audit.ControllerUser, from, to); err != nil {
		return ctl, err
	}
	rs.WorkWrites = rs.Requests.Writes("works.work.karmada.io")
	rs.CPUSeconds, _ = localplane.ReadCPU(ctl.Proc.Pid())
	mem, err := rss(ctx, ctl)
	rs.RSS = mem.RSS
	session.Logf("%s restart: %d bindings reconciled %s, last request %s after process start; %d Work writes; requests: %s",
		label, rs.Bindings, report.Dur(rs.Reconciled), report.Dur(rs.LastRequest), rs.WorkWrites, rs.Requests)
	return ctl, err
}

// recover takes the recovery samples with ctl on two members outside the fleet (the
// execution simulator lists only theirs: the fleet's Works are never deleted, and
// listing them every tick would load the plane).
func (r *runner) recover(ctx context.Context, f *fleet, ctl *controller.Controller) (*recoveryResult, error) {
	blocked, other := fmt.Sprintf("member%d", r.o.clusters+1), fmt.Sprintf("member%d", r.o.clusters+2)
	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	sim := executionsim.New(f.plane.Client, 50*time.Millisecond).Only(blocked, other)
	go sim.Run(simCtx)
	s := &recovery.Sampler{Plane: f.plane, Tracker: f.tracker, Sim: sim, Blocked: blocked, Other: other, Finalizer: true,
		Timeout: recovery.DefaultTimeout(r.o.block), StepTimeout: 2 * time.Minute}
	out := &recoveryResult{Block: r.o.block.String()}
	var latencies []float64
	for i := range r.o.samples {
		smp := s.Sample(ctx, ctl.Alive, recoveryNamespace, fmt.Sprintf("rec-%d", i), r.o.block)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out.Samples = append(out.Samples, smp)
		switch {
		case smp.Error != "":
			session.Logf("%s recovery #%d: ERROR %s", ctl.Spec.Label, i+1, smp.Error)
		case smp.TimedOut:
			session.Logf("%s recovery #%d: TIMEOUT: no new Work within %s of the old one going", ctl.Spec.Label, i+1, s.Timeout)
		default:
			latencies = append(latencies, smp.LatencyMs)
			session.Logf("%s recovery #%d: blocked %s; new Work %s after the old one was gone", ctl.Spec.Label, i+1, r.o.block,
				report.Dur(time.Duration(smp.LatencyMs*float64(time.Millisecond))))
		}
	}
	out.P50Ms, out.MaxMs = report.Num(report.Median(latencies)), report.Num(report.Percentile(latencies, 100))
	return out, nil
}

// freshRestart restarts sd once more on the idle plane and, from its
// process start, changes r.o.fresh bindings spread over the fleet (replicas doubled),
// one every --fresh-interval: a change met by a controller that is listing its caches and
// priming, as after a rollout or a leader change. Each is timed until its Works show it.
func (r *runner) freshRestart(ctx context.Context, f *fleet, sd side) (*freshchange.Result, error) {
	label := sd.spec.Label + " fresh changes"
	if _, err := wait.PlaneIdle(ctx, label); err != nil {
		return nil, err
	}
	targets := make([]freshchange.Target, r.o.fresh)
	for n := range targets {
		rb := f.bindings[n*len(f.bindings)/r.o.fresh]
		targets[n] = freshchange.Target{Binding: rb, Keys: workKeys(rb)}
	}
	series := &freshchange.Series{Client: f.plane.Client, Tracker: f.tracker, Interval: r.o.freshInterval, Timeout: r.o.phaseTimeout}
	type made struct {
		res *freshchange.Result
		err error
	}
	done := make(chan made, 1)
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	go func() {
		res, err := series.Make(mctx, start.Add(r.o.freshInterval), targets)
		done <- made{res, err}
	}()
	ctl, err := controller.Start(ctx, sd.spec, f.kubeconfig, filepath.Join(f.plane.Dir, "controller-fresh.log"))
	if err != nil {
		return nil, err
	}
	defer stop(label, ctl)
	m := <-done
	if m.err != nil {
		return nil, m.err
	}
	m.res.Log(label)
	return m.res, nil
}
