// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"context"
	"fmt"
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// ceilingRun times a plain client creating the Works the controller would write for
// load, concurrency at once, on a fresh control plane: what the plane can take.
func (p *propagation) ceilingRun(ctx context.Context, load loadSpec, concurrency int, qps float64) (*ceilingResult, error) {
	label := "ceiling " + load.Name
	res := &ceilingResult{Load: load, Concurrency: concurrency, QPS: qps, Works: load.works()}
	plane, err := p.newPlane(label, loadSpec{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer stopPlane(label, plane, cancel)
	cfg, _, err := plane.AddUser(audit.CeilingUser, float32(qps), int(math.Max(qps*2, 1)))
	if err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: envtestutil.Scheme()})
	if err != nil {
		return nil, err
	}
	templates, refs, err := p.prepare(ctx, plane, load)
	if err != nil {
		return nil, err
	}
	bindings, keys := bindingsFor(load, refs)
	var works []*workv1alpha1.Work
	for i, rb := range bindings {
		w, err := render(rb, templates[i])
		if err != nil {
			return nil, err
		}
		works = append(works, w...)
	}
	tracker, err := localplane.StartWorkTracker(ctx, plane.Metadata)
	if err != nil {
		return nil, err
	}
	// Warm up as the controller run's canary does: the first Work on a fresh API server
	// pays for setting up the resource's storage.
	canary := workload.Deployment(canaryNamespace, "canary", 1, 0)
	if err := plane.Client.Create(ctx, canary); err != nil {
		return nil, fmt.Errorf("creating the canary template: %w", err)
	}
	w, err := render(workload.Binding(canary, "canary-deployment", "bench-canary", []string{workload.Member(0)}), canary)
	if err == nil {
		err = cl.Create(ctx, w[0])
	}
	if err == nil {
		_, err = tracker.WaitAll(ctx, []string{localplane.WorkKey(w[0].Namespace, w[0].Name)}, 2*time.Minute)
	}
	if err != nil {
		return nil, fmt.Errorf("the canary Work: %w", err)
	}
	auditFrom := audit.Offset(plane.AuditLog)
	session.Logf("%s: a plain client creates %d rendered Works, %d at once", label, len(works), concurrency)
	planeBefore, _ := localplane.ChildrenCPU("kube-apiserver", "etcd")
	if res.arrivalTiming, _, err = p.createAndTime(ctx, label, tracker, keys, len(works), concurrency,
		func(ctx context.Context, i int) error { return cl.Create(ctx, works[i]) }); err != nil {
		return nil, err
	}
	if !res.TimedOut {
		session.Logf("%s: every Work exists after %s: %.0f Works/s (10–90%%: %.0f/s)", label, report.Dur(res.Elapsed), res.WorksPerSec, res.SteadyWorksPerSec)
	}
	if planeAfter, err := localplane.ChildrenCPU("kube-apiserver", "etcd"); err == nil {
		res.PlaneCPUSeconds = planeAfter - planeBefore
	}
	time.Sleep(500 * time.Millisecond) // let the audit log catch up
	res.Audit, err = audit.Read(plane.AuditLog, audit.CeilingUser, auditFrom, -1)
	return res, err
}

// render renders the Works of rb of template d, as the controller writes them.
func render(rb *workv1alpha2.ResourceBinding, d *appsv1.Deployment) ([]*workv1alpha1.Work, error) {
	u, err := workload.ToUnstructured(d)
	if err != nil {
		return nil, err
	}
	return workload.RenderBinding(rb, u)
}
