// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	"github.com/binding-controller/binding-controller/pkg/ledgercheckpoint"
)

// side is a controller to run, and the name its ResourceBinding controller has in
// controller_runtime_reconcile_total.
type side struct {
	spec       controller.Spec
	reconciler string
}

func ours(spec controller.Spec) side { return side{spec: spec, reconciler: "resourcebinding"} }

// checkpoints says whether the side saves this project's Work ledger checkpoint, which
// its restart must then find.
func (sd side) checkpoints() bool {
	d, err := time.ParseDuration(controller.Flag(sd.spec.Args, "work-ledger-checkpoint-interval"))
	return sd.reconciler == "resourcebinding" && err == nil && d > 0
}

// phases say what run measures besides the initial propagation, and how.
type phases struct {
	creators        int
	timeout         time.Duration
	resync, restart bool
	// recoverySamples recoveries, with the restarted process, of a cluster whose old
	// Work is held each of recoveryBlocks; fresh changes, one every freshInterval,
	// during a second restart.
	recoverySamples int
	recoveryBlocks  []time.Duration
	fresh           int
	freshInterval   time.Duration
}

// result is what one controller did over one load.
type result struct {
	Label         string      `json:"label"`
	Argv          []string    `json:"argv"`
	Load          load        `json:"load"`
	ManifestBytes int         `json:"manifestBytes"`
	Propagation   propagation `json:"propagation"`
	// Idle: the templates cached, no binding yet; Current: every Work current.
	Idle     memory        `json:"memoryIdle"`
	Current  memory        `json:"memoryCurrent"`
	Resync   *phase        `json:"resync,omitempty"`
	Restart  *phase        `json:"restart,omitempty"`
	Recovery []*recoveries `json:"recovery,omitempty"`
	Fresh    *freshChanges `json:"freshChanges,omitempty"`
	// Stream: the bindings' initial stream to a bare client, before the fresh changes.
	Stream *bindingsStream `json:"bindingsStream,omitempty"`
}

// propagation is a load's Works created, by a controller or by the ceiling's client:
// first create sent → the last Work seen by the tracker's watch; the CPU of the
// controller and of kube-apiserver + etcd from the first create to quiet.
type propagation struct {
	Elapsed         time.Duration `json:"elapsedNs"`
	WorksPerSec     float64       `json:"worksPerSec"`
	Seen            int           `json:"seen"`
	TimedOut        bool          `json:"timedOut,omitempty"`
	CPUSeconds      float64       `json:"cpuSeconds"`
	PlaneCPUSeconds float64       `json:"planeCPUSeconds"`
	Requests        audit.Counts  `json:"requests"`
}

// phase is a no-op resync or a restart, timed from its start (a restart's: process
// start) until every binding was reconciled and until the controller's last request
// before it went quiet; a restart also has its RSS and the checkpoint it started on.
type phase struct {
	Bindings             int           `json:"bindings"`
	Reconciles           float64       `json:"reconciles"`
	Reconciled           time.Duration `json:"reconciledNs"`
	LastRequest          time.Duration `json:"lastRequestNs"`
	Requests             audit.Counts  `json:"requests"`
	CPUSeconds           float64       `json:"cpuSeconds"`
	RSS                  int64         `json:"rssBytes,omitempty"`
	CheckpointConfigMaps int           `json:"checkpointConfigMaps"`
}

// run measures sd over e: the initial propagation, memory, and the phases ph asks for.
func (e *env) run(ctx context.Context, sd side, ph phases) (*result, error) {
	res := &result{Label: sd.spec.Label, Load: e.load}
	res.ManifestBytes, _ = workload.ManifestBytes(e.templates[0]) // every load has a template
	ctl, err := e.startReady(ctx, sd)
	if err != nil {
		return nil, err
	}
	res.Argv = ctl.Argv
	err = e.propagate(ctx, ctl, sd, ph, res)
	if err == nil && ph.resync && !res.Propagation.TimedOut {
		res.Resync, err = e.resync(ctx, ctl, sd, ph)
	}
	stop(ctl)
	if err != nil || res.Propagation.TimedOut || !ph.restart {
		return res, err // a restart over a fleet only partly there would measure nothing
	}
	res.Restart = &phase{Bindings: len(e.bindings) + 1} // +1: the canary
	if res.Restart.CheckpointConfigMaps, err = e.checkpointSaved(ctx, sd, ctl); err != nil {
		return nil, err
	}
	ctl, err = e.restart(ctx, sd, ph, res.Restart)
	for i := 0; err == nil && ph.recoverySamples > 0 && i < len(ph.recoveryBlocks); i++ {
		var r *recoveries
		r, err = e.recover(ctx, ctl, ph.recoveryBlocks[i], ph.recoverySamples, fmt.Sprintf("rec-%d", i))
		res.Recovery = append(res.Recovery, r)
	}
	if ctl != nil {
		stop(ctl)
	}
	if err != nil || ph.fresh == 0 {
		return res, err
	}
	if res.Stream, err = e.streamBindings(ctx); err != nil {
		return res, err
	}
	res.Fresh, err = e.freshRestart(ctx, sd, ph)
	return res, err
}

// startReady starts sd on e and binds one small template (the canary) to the first
// member: once its Work exists, the controller's caches are synced. Then it waits for
// quiet, so that what the controller does next is the load's.
func (e *env) startReady(ctx context.Context, sd side) (*controller.Controller, error) {
	ctl, err := controller.Start(ctx, sd.spec, e.kubeconfig, filepath.Join(e.plane.Dir, "controller.log"))
	if err != nil {
		return nil, err
	}
	rb, err := e.bind(ctx, workload.Deployment(canaryNamespace, "canary", 1, 0), "bench-canary", []string{workload.Member(0)})
	if err == nil {
		err = e.plane.Client.Create(ctx, rb)
	}
	if err == nil {
		_, err = e.tracker.WaitAll(ctx, workKeys(rb), 2*time.Minute)
	}
	if err == nil {
		err = ctl.WaitQuiet(ctx, time.Second, 30*time.Second)
		err = wait.IgnoreTimeout(err)
	}
	if err != nil {
		stop(ctl)
		return nil, fmt.Errorf("%s: the canary: %w; log tail:\n%s", sd.spec.Label, err, ctl.LogTail(20))
	}
	return ctl, nil
}

// stop stops ctl with SIGTERM, as a rollout or a leader change does: this project's
// controller saves its Work ledger checkpoint on the way out.
func stop(ctl *controller.Controller) {
	t := time.Now()
	if err := ctl.Stop(); err != nil {
		session.Logf("%s: %v", ctl.Spec.Label, err)
	}
	session.Logf("%s: controller stopped in %s", ctl.Spec.Label, report.Dur(time.Since(t)))
}

// propagate creates the bindings and times them until every Work exists, then reads
// what the controller used: CPU and requests until quiet, memory with every Work current.
func (e *env) propagate(ctx context.Context, ctl *controller.Controller, sd side, ph phases, res *result) error {
	var err error
	if res.Idle, err = readMemory(ctx, ctl); err != nil {
		return err
	}
	m, err := startMeter(ctx, e, ctl, sd)
	if err != nil {
		return err
	}
	label := sd.spec.Label + " " + e.load.Name
	session.Logf("%s: creating %d bindings (%d at once) → %d Works", label, len(e.bindings), ph.creators, len(e.keys))
	res.Propagation, err = e.timeCreates(ctx, label, len(e.bindings), ph.creators, ph.timeout,
		func(ctx context.Context, i int) error { return e.plane.Client.Create(ctx, e.bindings[i]) })
	if err != nil {
		return err
	}
	if err := ctl.WaitQuiet(ctx, time.Second, time.Minute); wait.IgnoreTimeout(err) != nil {
		return err
	}
	u, err := m.stop(ctx, ctl)
	if err != nil {
		return err
	}
	p := &res.Propagation
	p.CPUSeconds, p.PlaneCPUSeconds, p.Requests = u.cpu, u.planeCPU, u.requests
	res.Current, err = readMemory(ctx, ctl)
	session.Logf("%s: quiet; controller CPU %.1fs, kube-apiserver + etcd %.1fs; RSS %s (idle %s); requests: %s", label,
		p.CPUSeconds, p.PlaneCPUSeconds, report.Bytes(res.Current.RSS), report.Bytes(res.Idle.RSS), p.Requests.ByVerb())
	return err
}

// resync re-queues every binding with an annotation patched, which the controller
// watches and no Work depends on, and counts what the controller then asks for.
func (e *env) resync(ctx context.Context, ctl *controller.Controller, sd side, ph phases) (*phase, error) {
	m, err := startMeter(ctx, e, ctl, sd)
	if err != nil {
		return nil, err
	}
	patch := client.RawPatch(types.MergePatchType,
		[]byte(fmt.Sprintf(`{"metadata":{"annotations":{"bench.binding-controller.io/resync":%q}}}`, time.Now().Format(time.RFC3339Nano))))
	start := time.Now()
	err = parallel(ctx, len(e.bindings), ph.creators, func(ctx context.Context, i int) error {
		return e.plane.Client.Patch(ctx, e.bindings[i].DeepCopy(), patch)
	})
	rs := &phase{Bindings: len(e.bindings)}
	if err == nil {
		err = waitReconciled(ctx, ctl, sd, controller.ReconcilesOf(m.metrics, sd.reconciler)+float64(rs.Bindings), ph.timeout)
	}
	if err != nil {
		return nil, err
	}
	return rs, m.finish(ctx, ctl, start, rs, "resync")
}

// restart starts a fresh process over the propagated fleet once the plane is idle and
// times it until every binding is reconciled and it is quiet: what a restart or a leader
// change costs. The caller stops the process it returns, also with an error.
func (e *env) restart(ctx context.Context, sd side, ph phases, rs *phase) (*controller.Controller, error) {
	if err := wait.PlaneIdle(ctx, sd.spec.Label+" restart"); err != nil {
		return nil, err
	}
	m, err := startMeter(ctx, e, nil, sd)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	ctl, err := controller.Start(ctx, sd.spec, e.kubeconfig, filepath.Join(e.plane.Dir, "controller-restarted.log"))
	if err != nil {
		return nil, err
	}
	if err := waitReconciled(ctx, ctl, sd, float64(rs.Bindings), ph.timeout); err != nil {
		return ctl, err
	}
	if err := m.finish(ctx, ctl, start, rs, "restart"); err != nil {
		return ctl, err
	}
	mem, err := readMemory(ctx, ctl)
	rs.RSS = mem.RSS
	return ctl, err
}

// waitReconciled polls ctl's metrics until it has reconciled n bindings in all.
func waitReconciled(ctx context.Context, ctl *controller.Controller, sd side, n float64, timeout time.Duration) error {
	return wait.Poll(ctx, 20*time.Millisecond, timeout, "waiting for every binding to be reconciled", func(ctx context.Context) (bool, error) {
		if err := ctl.Alive(); err != nil {
			return false, err
		}
		s, err := ctl.Scrape(ctx)
		return err == nil && controller.ReconcilesOf(s, sd.reconciler) >= n, nil
	})
}

// checkpointSaved counts the ConfigMaps of this project's Work ledger checkpoint: a side
// that saves one must have left it for its restart, or the restart would measure a start
// without it.
func (e *env) checkpointSaved(ctx context.Context, sd side, stopped *controller.Controller) (int, error) {
	cms := &corev1.ConfigMapList{}
	err := e.plane.Client.List(ctx, cms, client.InNamespace(localplane.KarmadaSystemNamespace), client.HasLabels{ledgercheckpoint.Label})
	switch n := len(cms.Items); {
	case err != nil || !sd.checkpoints():
		return n, err
	case n == 0:
		return 0, fmt.Errorf("%s: no Work ledger checkpoint saved before the restart; log tail:\n%s", sd.spec.Label, stopped.LogTail(20))
	default:
		session.Logf("%s: the Work ledger checkpoint is saved, in %d ConfigMaps", sd.spec.Label, n)
		return n, nil
	}
}
