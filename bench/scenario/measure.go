// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"context"
	"fmt"
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// meter reads what a controller asked of the API server (the audit log of its user) and
// the CPU it and the plane used, from the moment it starts to the moment it stops.
type meter struct {
	env           *env
	sd            side
	metrics       localplane.Metrics
	cpu, planeCPU float64
	auditFrom     int64
}

type usage struct {
	cpu, planeCPU, reconciles float64
	requests                  audit.Counts
	last                      time.Time
	metrics                   localplane.Metrics // the controller's, at the end
}

// startMeter starts a meter of ctl; with ctl nil, of a controller not started yet, from
// nothing: a fresh process's requests count from its start.
func startMeter(ctx context.Context, e *env, ctl *controller.Controller, sd side) (*meter, error) {
	m := &meter{env: e, sd: sd, metrics: localplane.Metrics{}, auditFrom: audit.Offset(e.plane.AuditLog)}
	if ctl != nil {
		var err error
		if m.metrics, err = ctl.Scrape(ctx); err != nil {
			return nil, fmt.Errorf("scraping %s: %w", ctl.MetricsURL, err)
		}
		m.cpu, _ = localplane.ReadCPU(ctl.Proc.Pid())
	}
	m.planeCPU, _ = localplane.ChildrenCPU("kube-apiserver", "etcd")
	return m, nil
}

func (m *meter) stop(ctx context.Context, ctl *controller.Controller) (usage, error) {
	var u usage
	if cpu, err := localplane.ReadCPU(ctl.Proc.Pid()); err == nil {
		u.cpu = cpu - m.cpu
	}
	if cpu, err := localplane.ChildrenCPU("kube-apiserver", "etcd"); err == nil {
		u.planeCPU = cpu - m.planeCPU
	}
	var err error
	if u.metrics, err = ctl.Scrape(ctx); err != nil {
		return u, err
	}
	u.reconciles = controller.ReconcilesOf(u.metrics, m.sd.reconciler) - controller.ReconcilesOf(m.metrics, m.sd.reconciler)
	u.requests, u.last, err = audit.Read(m.env.plane.AuditLog, audit.ControllerUser, m.auditFrom, audit.Offset(m.env.plane.AuditLog))
	return u, err
}

// finish ends a phase that began at start once every binding is reconciled: it waits
// for quiet and reads what the controller used.
func (m *meter) finish(ctx context.Context, ctl *controller.Controller, start time.Time, ph *phase, what string) error {
	ph.Reconciled = time.Since(start)
	if err := ctl.WaitQuiet(ctx, 2*time.Second, time.Minute); wait.IgnoreTimeout(err) != nil {
		return err
	}
	u, err := m.stop(ctx, ctl)
	if err != nil {
		return err
	}
	ph.Reconciles, ph.Requests, ph.CPUSeconds = u.reconciles, u.requests, u.cpu
	if !u.last.IsZero() { // a no-op resync may ask for nothing at all
		ph.LastRequest = u.last.Sub(start)
	}
	session.Logf("%s %s: %.0f bindings reconciled after %s, last request after %s; requests: %s", ctl.Spec.Label, what,
		u.reconciles, report.Dur(ph.Reconciled), report.Dur(ph.LastRequest), ph.Requests.ByVerb())
	return nil
}

// memory is the controller's: RSS, peak RSS, and the live heap as the last collection
// marked it (go_gc_heap_live_bytes; NaN without it).
type memory struct {
	RSS      int64      `json:"rssBytes"`
	PeakRSS  int64      `json:"peakRSSBytes"`
	HeapLive report.Num `json:"heapLiveBytes"`
}

// readMemory reads ctl's memory once two garbage collections have completed since now,
// so that every reading is taken at the same point of the collections rather than
// wherever the last one left them.
func readMemory(ctx context.Context, ctl *controller.Controller) (memory, error) {
	s, err := ctl.SettleGC(ctx, 2, time.Minute)
	if wait.IgnoreTimeout(err) != nil {
		return memory{}, err
	}
	m := memory{HeapLive: report.Num(math.NaN())}
	if s.Has("go_gc_heap_live_bytes") {
		m.HeapLive = report.Num(s.Sum("go_gc_heap_live_bytes", nil))
	}
	pm, err := localplane.ReadMemory(ctl.Proc.Pid())
	m.RSS, m.PeakRSS = pm.RSS, pm.PeakRSS
	return m, err
}

// ceiling times a plain client creating the Works a controller would write for e's load,
// concurrency at once, client-side QPS limited (negative: not), with no controller
// running: what the plane can take.
func (e *env) ceiling(ctx context.Context, concurrency int, qps float64, timeout time.Duration) (*propagation, error) {
	cfg, _, err := e.plane.AddUser(audit.CeilingUser, float32(qps), int(math.Max(qps*2, 1)))
	if err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: envtestutil.Scheme()})
	if err != nil {
		return nil, err
	}
	// Warm up as the controller's canary does: the first Work on a fresh API server pays
	// for setting up the resource's storage.
	canary := workload.Deployment(canaryNamespace, "canary", 1, 0)
	if err := e.plane.Client.Create(ctx, canary); err != nil {
		return nil, err
	}
	templates := append([]*appsv1.Deployment{canary}, e.templates...)
	var works []*workv1alpha1.Work
	for i, rb := range append([]*workv1alpha2.ResourceBinding{workload.Binding(canary, "canary", "bench-canary", []string{workload.Member(0)})}, e.bindings...) {
		w, err := workload.RenderBinding(rb, templates[i])
		if err != nil {
			return nil, err
		}
		works = append(works, w...)
	}
	err = cl.Create(ctx, works[0])
	if err == nil {
		_, err = e.tracker.WaitAll(ctx, []string{localplane.WorkKey(works[0].Namespace, works[0].Name)}, 2*time.Minute)
	}
	if err != nil {
		return nil, fmt.Errorf("the ceiling's canary Work: %w", err)
	}
	from := audit.Offset(e.plane.AuditLog)
	planeBefore, _ := localplane.ChildrenCPU("kube-apiserver", "etcd")
	works = works[1:]
	p, err := e.timeCreates(ctx, "ceiling", len(works), concurrency, timeout, func(ctx context.Context, i int) error { return cl.Create(ctx, works[i]) })
	if err != nil {
		return nil, err
	}
	if planeAfter, err := localplane.ChildrenCPU("kube-apiserver", "etcd"); err == nil {
		p.PlaneCPUSeconds = planeAfter - planeBefore
	}
	time.Sleep(500 * time.Millisecond) // the audit log catches up
	p.Requests, _, err = audit.Read(e.plane.AuditLog, audit.CeilingUser, from, -1)
	return &p, err
}
