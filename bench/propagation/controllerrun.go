// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// controllerRun measures the controller through one load on a fresh control plane: the
// initial propagation and, with resync, a no-op resync and a restart after it.
func (p *propagation) controllerRun(ctx context.Context, load loadSpec, resync bool) (*runResult, error) {
	label := p.spec.Label + " " + load.Name
	res := &runResult{Controller: p.spec.Label, Load: load, Works: load.works()}
	env, err := p.setUp(ctx, label, load, nil)
	if err != nil {
		return nil, err
	}
	defer env.stop()
	if res.ManifestBytes, err = workload.ManifestBytes(env.templates[0]); err != nil {
		return nil, err
	}
	bindings, keys := bindingsFor(load, env.refs)
	ctl, err := p.startReady(ctx, env, p.spec, load, label, "controller.log")
	if err != nil {
		return nil, err
	}
	defer func() { _ = ctl.Stop() }() // when a step fails; the normal end stops it below
	res.Log, res.Command = filepath.Join(env.plane.Dir, "controller.log"), ctl.Argv
	if err := p.propagate(ctx, label, env, ctl, res, bindings, keys); err != nil {
		return nil, err
	}
	if resync && !res.TimedOut {
		if res.Resync, err = p.resync(ctx, env, ctl, bindings); err != nil {
			return nil, err
		}
	}
	settled, scrapes, err := ctl.SettleGC(ctx, 2, time.Minute)
	if wait.IgnoreTimeout(err) != nil {
		return nil, err
	}
	res.MemAfter, res.GCScrapes = readMem(ctl, settled), res.GCScrapes+scrapes
	session.Logf("%s: memory with every Work cached: peak RSS %s, heap live %s (%d scrapes to see two GCs)",
		label, report.Bytes(res.MemAfter.PeakRSS), report.Bytes(res.MemAfter.HeapLive), scrapes)
	if pm, err := localplane.ReadMemory(ctl.Proc.Pid()); err == nil {
		res.PeakRSSEnd = pm.PeakRSS
	}
	t := time.Now()
	if err := ctl.Stop(); err != nil {
		session.Logf("%s: %v", label, err)
	}
	session.Logf("%s: controller stopped in %s", label, report.Dur(time.Since(t)))
	if resync && !res.TimedOut {
		// +1: the canary binding is synced too.
		if res.Restart, err = p.restart(ctx, env, len(bindings)+1); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// propagate reads the memory with the templates cached, creates the bindings and times
// them until every Work exists, then reads what the controller and the plane used.
func (p *propagation) propagate(ctx context.Context, label string, env *runEnv, ctl *controller.Controller, res *runResult,
	bindings []*workv1alpha2.ResourceBinding, keys []string) error {
	settled, scrapes, err := ctl.SettleGC(ctx, 2, time.Minute)
	if wait.IgnoreTimeout(err) != nil {
		return err
	}
	res.MemBefore, res.GCScrapes = readMem(ctl, settled), scrapes
	m, err := startMeter(ctx, env.plane, ctl)
	if err != nil {
		return err
	}
	session.Logf("%s: creating %d bindings (%d at once) → %d Works", label, len(bindings), p.creators, res.Load.works())
	res.arrivalTiming, res.CreateElapsed, err = p.createAndTime(ctx, label, env.tracker, keys, len(bindings), p.creators,
		func(ctx context.Context, i int) error { return env.plane.Client.Create(ctx, bindings[i]) })
	switch {
	case err != nil:
		return err
	case res.TimedOut:
		res.Error = fmt.Sprintf("only %d of %d Works after %s", res.Seen, res.Works, p.phaseTimeout)
		session.Logf("%s: TIMEOUT: %s", label, res.Error)
	default:
		session.Logf("%s: every Work exists %s after the first binding was created (bindings created in %s): %.0f Works/s (10–90%%: %.0f/s)",
			label, report.Dur(res.Elapsed), report.Dur(res.CreateElapsed), res.WorksPerSec, res.SteadyWorksPerSec)
	}
	if err := ctl.Alive(); err != nil {
		return err
	}
	quiet, err := ctl.WaitQuiet(ctx, time.Second, time.Minute)
	if wait.IgnoreTimeout(err) != nil {
		return err
	}
	u, err := m.stop(ctx, ctl)
	if err != nil {
		return err
	}
	res.CPUSeconds, res.PlaneCPUSeconds, res.Requests = u.cpu, u.planeCPU(), u.requests
	session.Logf("%s: controller quiet %s later; it used %.1f CPU-seconds, kube-apiserver and etcd %.1f", label, report.Dur(quiet), res.CPUSeconds, res.PlaneCPUSeconds)
	if res.Load.Interpreted && !res.TimedOut {
		if err := checkShares(ctx, env.plane.Client, keys); err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
	}
	return nil
}

// resync re-queues every binding without changing anything its Works depend on (an
// annotation on the binding, which the controller watches) and counts what the
// controller then asks of the API server.
func (p *propagation) resync(ctx context.Context, env *runEnv, ctl *controller.Controller, bindings []*workv1alpha2.ResourceBinding) (*resyncResult, error) {
	res := &resyncResult{Bindings: len(bindings)}
	m, err := startMeter(ctx, env.plane, ctl)
	if err != nil {
		return nil, err
	}
	session.Logf("resync: patching annotation %s on %d bindings", resyncAnnotation, len(bindings))
	patch := client.RawPatch(types.MergePatchType,
		[]byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, resyncAnnotation, time.Now().Format(time.RFC3339Nano))))
	start := time.Now()
	err = parallel(ctx, len(bindings), p.creators, func(ctx context.Context, i int) error {
		rb := &workv1alpha2.ResourceBinding{}
		rb.Namespace, rb.Name = bindings[i].Namespace, bindings[i].Name
		return env.plane.Client.Patch(ctx, rb, patch)
	})
	if err != nil {
		return nil, fmt.Errorf("patching bindings: %w", err)
	}
	err = p.waitReconciled(ctx, ctl, 100*time.Millisecond, controller.Reconciles(m.metrics)+float64(len(bindings)), nil)
	res.Elapsed = time.Since(start)
	if wait.IgnoreTimeout(err) != nil {
		return nil, err
	} else if err != nil {
		session.Logf("resync: %v", err)
	}
	_, qerr := ctl.WaitQuiet(ctx, time.Second, time.Minute)
	res.Quiet = qerr == nil
	u, err := m.stop(ctx, ctl)
	if err != nil {
		return nil, err
	}
	res.Reconciles, res.Requests = report.Num(u.reconciles), u.requests
	session.Logf("resync: %.0f reconciles in %s; controller requests: %s", res.Reconciles, report.Dur(res.Elapsed), methods(res.Requests.ClientByMethod))
	return res, nil
}

// waitReconciled polls ctl's metrics every interval until it has reconciled n bindings in
// all, calling first with the time of the first reconcile it sees.
func (p *propagation) waitReconciled(ctx context.Context, ctl *controller.Controller, interval time.Duration, n float64, first func()) error {
	return wait.Poll(ctx, interval, p.phaseTimeout, "waiting for every binding to be reconciled",
		func(ctx context.Context) (bool, error) {
			s, err := ctl.Scrape(ctx)
			if err != nil {
				return false, nil
			}
			r := controller.Reconciles(s)
			if r > 0 && first != nil {
				first()
				first = nil
			}
			return r >= n, nil
		})
}

// restart starts a fresh controller process on the synced plane and counts what it asks
// of the API server until it has reconciled every binding (n) and gone quiet: the cost of
// a restart or a leader change, when nothing a fresh process can trust is in memory.
func (p *propagation) restart(ctx context.Context, env *runEnv, n int) (*resyncResult, error) {
	res := &resyncResult{Bindings: n}
	m, err := startMeter(ctx, env.plane, nil)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	ctl, err := controller.Start(ctx, p.spec, env.kubeconfig, filepath.Join(env.plane.Dir, "controller-restarted.log"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = ctl.Stop() }()
	if err := p.waitReconciled(ctx, ctl, 100*time.Millisecond, float64(n), nil); wait.IgnoreTimeout(err) != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	_, qerr := ctl.WaitQuiet(ctx, time.Second, time.Minute)
	res.Quiet = qerr == nil
	u, err := m.stop(ctx, ctl)
	if err != nil {
		return nil, err
	}
	res.Reconciles, res.Requests = report.Num(u.reconciles), u.requests
	session.Logf("restart: a fresh controller reconciled %.0f bindings in %s (from process start); its requests: %s",
		res.Reconciles, report.Dur(res.Elapsed), methods(res.Requests.ClientByMethod))
	return res, nil
}
