// SPDX-License-Identifier: Apache-2.0

// Package scenario is the benchmark's subcommands. propagation and vs-karmada take one
// path with different defaults (bench.go): this project's controller, and beside it
// Karmada's or itself with other flags, each over the same fleet on a fresh, audited
// plane (load.go), through the phases measured (run.go, measure.go, recovery.go,
// fresh.go), and the table of it all (results.go). rollout (rollout.go) puts a staged
// rollout on such a plane and fleet.
package scenario

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/controlplane"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

const (
	templateNamespace = "bench"
	canaryNamespace   = "bench-canary"
	recoveryNamespace = "bench-recovery"
)

// load is Bindings Deployment templates (PadEnv padding variables each, about 100 bytes
// apiece) and a binding of each to PerBinding of Clusters members: all of them, or
// PerBinding in turn from member i mod Clusters.
type load struct {
	Name       string `json:"name"`
	Bindings   int    `json:"bindings"`
	Clusters   int    `json:"clusters"`
	PerBinding int    `json:"clustersPerBinding"`
	PadEnv     int    `json:"padEnv,omitempty"`
	// Webhook puts karmada-webhook's Work mutation in front of the API server; crds,
	// when set, replace the project's CRDs: Karmada's, for its controller-manager.
	Webhook bool `json:"karmadaWebhook,omitempty"`
	crds    []string
	// unaudited: no audit log, whose blocking writes would slow what a load counts none of.
	unaudited bool
}

func (l load) works() int { return l.Bindings * l.PerBinding }

func (l load) String() string {
	return fmt.Sprintf("%d bindings × %d clusters = %d Works", l.Bindings, l.PerBinding, l.works())
}

func (l load) clustersOf(i int) []string {
	if l.PerBinding >= l.Clusters {
		return workload.Members(l.Clusters)
	}
	out := make([]string, l.PerBinding)
	for j := range out {
		out[j] = workload.Member((i + j) % l.Clusters)
	}
	return out
}

// env is one load's fresh plane, ready for a controller: the controller's user, the
// load's members (and two more, the recoveries'), its templates, its bindings (not
// created yet), the keys of their Works, binding by binding, and a watch timing them.
type env struct {
	load       load
	plane      *controlplane.Plane
	kubeconfig string
	tracker    *localplane.WorkTracker
	templates  []*appsv1.Deployment
	bindings   []*workv1alpha2.ResourceBinding
	keys       []string
	cancel     context.CancelFunc
}

// startEnv starts a fresh plane in dir and puts l on it, untimed.
func startEnv(ctx context.Context, dir string, l load) (*env, error) {
	t, users := time.Now(), []string{audit.ControllerUser, audit.CeilingUser}
	if l.unaudited {
		users = nil
	}
	plane, err := controlplane.Start(controlplane.Options{Dir: dir, AuditUsers: users, KarmadaWorkWebhook: l.Webhook, CRDPaths: l.crds})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	e := &env{load: l, plane: plane, cancel: cancel}
	if _, e.kubeconfig, err = plane.AddUser(audit.ControllerUser, -1, 0); err == nil {
		err = e.populate(ctx)
	}
	if err == nil {
		e.tracker, err = localplane.StartWorkTracker(ctx, plane.Metadata)
	}
	if err != nil {
		e.stop()
		return nil, err
	}
	session.Logf("%s: control plane up, %d members joined, %d templates created in %s", l.Name, l.Clusters, l.Bindings, report.Dur(time.Since(t)))
	return e, nil
}

// stop ends the watch and the plane.
func (e *env) stop() {
	e.cancel()
	if err := e.plane.Stop(); err != nil {
		session.Logf("%s: stopping the control plane: %v", e.load.Name, err)
	}
}

// populate joins the members, creates the namespaces (karmada-system holds this
// project's Work ledger checkpoint, as in a Karmada install) and the templates, and
// makes the bindings.
func (e *env) populate(ctx context.Context) error {
	l := e.load
	if err := e.plane.JoinMembers(ctx, workload.Members(l.Clusters+2)); err != nil {
		return fmt.Errorf("joining members: %w", err)
	}
	if err := e.plane.CreateNamespaces(ctx, []string{templateNamespace, canaryNamespace, recoveryNamespace, localplane.KarmadaSystemNamespace}); err != nil {
		return err
	}
	e.templates = make([]*appsv1.Deployment, l.Bindings)
	e.bindings = make([]*workv1alpha2.ResourceBinding, l.Bindings)
	err := parallel(ctx, l.Bindings, 16, func(ctx context.Context, i int) error {
		d := workload.Deployment(templateNamespace, fmt.Sprintf("app-%05d", i), int32(l.PerBinding), l.PadEnv)
		rb, err := e.bind(ctx, d, fmt.Sprintf("bench-%s-%05d", l.Name, i), l.clustersOf(i))
		e.templates[i], e.bindings[i] = d, rb
		return err
	})
	for _, rb := range e.bindings {
		if rb != nil {
			e.keys = append(e.keys, workKeys(rb)...)
		}
	}
	return err
}

// bind creates template d and returns its binding to clusters with the binding
// controller's finalizer, as Karmada's detector creates it: neither controller adds it,
// and Karmada's deletes a binding's Works only on its way to removing it.
func (e *env) bind(ctx context.Context, d *appsv1.Deployment, permanentID string, clusters []string) (*workv1alpha2.ResourceBinding, error) {
	if err := e.plane.Client.Create(ctx, d); err != nil {
		return nil, fmt.Errorf("creating template %s: %w", d.Name, err)
	}
	rb := workload.Binding(d, d.Name+"-deployment", permanentID, clusters)
	rb.Finalizers = []string{workv1alpha2.BindingControllerFinalizer}
	return rb, nil
}

// workKeys are the tracker's keys of the Works rb makes.
func workKeys(rb *workv1alpha2.ResourceBinding) []string {
	return mapEach(rb.Spec.Clusters, func(c workv1alpha2.TargetCluster) string { return workKey(rb.Spec.Resource, c.Name) })
}

// workKey is the tracker's key of the Work of template ref on cluster.
func workKey(ref workv1alpha2.ObjectReference, cluster string) string {
	return localplane.WorkKey(names.ExecutionNamespace(cluster), names.WorkName(ref.Kind, ref.Namespace, ref.Name))
}

// timeCreates runs create for 0..n-1, atOnce at a time, and waits until every Work of
// the load exists, printing progress every 5s. The clock starts with the first create.
// A load that runs out of time is TimedOut, not an error.
func (e *env) timeCreates(ctx context.Context, label string, n, atOnce int, timeout time.Duration, create func(ctx context.Context, i int) error) (propagation, error) {
	var p propagation
	done := make(chan struct{})
	defer close(done)
	start := time.Now()
	go func() {
		for t := time.NewTicker(5 * time.Second); ; {
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C:
				session.Logf("%s: %d/%d Works after %s", label, e.tracker.Seen(e.keys), len(e.keys), report.Dur(time.Since(start)))
			}
		}
	}()
	if err := parallel(ctx, n, atOnce, create); err != nil {
		return p, fmt.Errorf("%s: creating: %w", label, err)
	}
	arrival, err := e.tracker.WaitAll(ctx, e.keys, timeout)
	switch p.Seen = arrival.Seen; {
	case wait.IgnoreTimeout(err) != nil:
		return p, err
	case err != nil:
		p.TimedOut = true
		session.Logf("%s: TIMEOUT: only %d of %d Works after %s", label, p.Seen, len(e.keys), report.Dur(timeout))
	default:
		p.Elapsed = arrival.Last.Sub(start)
		p.WorksPerSec = float64(len(e.keys)) / p.Elapsed.Seconds()
		session.Logf("%s: every Work exists %s after the first create: %.0f Works/s", label, report.Dur(p.Elapsed), p.WorksPerSec)
	}
	return p, nil
}

// parallel runs fn(ctx, i) for i in 0..n-1 with at most workers at once. The first error
// cancels the rest and is returned.
func parallel(parent context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(parent)
	g.SetLimit(max(workers, 1))
	for i := 0; i < n && ctx.Err() == nil; i++ {
		g.Go(func() error { return fn(ctx, i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return parent.Err()
}
