// SPDX-License-Identifier: Apache-2.0

package vskarmada

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/controller"
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
	fleetNamespace    = "bench"
	canaryNamespace   = "bench-canary"
	recoveryNamespace = "bench-recovery"
)

// runner runs each controller over the fleet.
type runner struct {
	o *options
	s *session.Session
	// crds are installed on every plane, whichever controller runs on it: Karmada's,
	// which its controller-manager needs, and the project's Cluster CRD.
	crds []string
}

// fleet is one controller's fresh plane: the members joined, the templates created, the
// bindings to create, the keys of every Work they make, and a watch timing the Works.
type fleet struct {
	plane      *controlplane.Plane
	kubeconfig string
	bindings   []*workv1alpha2.ResourceBinding
	keys       []string
	tracker    *localplane.WorkTracker
	// stop ends the watch and the plane.
	stop func()
}

// setUp starts a fresh, audited plane for label and creates the fleet's templates.
func (r *runner) setUp(ctx context.Context, label string) (*fleet, error) {
	t := time.Now()
	plane, err := controlplane.Start(controlplane.Options{Dir: filepath.Join(r.s.Dir, label),
		AuditUsers: []string{audit.ControllerUser}, CRDPaths: r.crds})
	if err != nil {
		return nil, err
	}
	session.Logf("%s: control plane up in %s", label, report.Dur(time.Since(t)))
	ctx, cancel := context.WithCancel(ctx)
	f := &fleet{plane: plane, stop: func() {
		cancel()
		if err := plane.Stop(); err != nil {
			session.Logf("%s: stopping the control plane: %v", label, err)
		}
	}}
	if _, f.kubeconfig, err = plane.AddUser(audit.ControllerUser, -1, 0); err == nil {
		err = r.populate(ctx, label, f)
	}
	if err == nil {
		f.tracker, err = localplane.StartWorkTracker(ctx, plane.Metadata)
	}
	if err != nil {
		f.stop()
		return nil, err
	}
	return f, nil
}

// populate joins the fleet's members and the recovery's two, creates the namespaces and
// the templates, untimed, and makes the bindings (not created yet).
func (r *runner) populate(ctx context.Context, label string, f *fleet) error {
	t := time.Now()
	members := workload.Members(r.o.clusters + 2)
	if err := f.plane.JoinMembers(ctx, members); err != nil {
		return fmt.Errorf("joining members: %w", err)
	}
	// karmada-system holds this project's Work ledger checkpoint, as in a Karmada install.
	namespaces := []string{fleetNamespace, canaryNamespace, recoveryNamespace, localplane.KarmadaSystemNamespace}
	if err := f.plane.CreateNamespaces(ctx, namespaces); err != nil {
		return err
	}
	f.bindings = make([]*workv1alpha2.ResourceBinding, r.o.bindings)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range f.bindings {
		g.Go(func() error {
			d := workload.Deployment(fleetNamespace, fmt.Sprintf("app-%05d", i), int32(r.o.clusters), 0)
			if err := f.plane.Client.Create(gctx, d); err != nil {
				return fmt.Errorf("creating template %s: %w", d.Name, err)
			}
			f.bindings[i] = bindingOf(d, fmt.Sprintf("bench-%05d", i), members[:r.o.clusters])
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, rb := range f.bindings {
		f.keys = append(f.keys, workKeys(rb)...)
	}
	session.Logf("%s: %d members joined and %d templates created (untimed) in %s", label, len(members), len(f.bindings), report.Dur(time.Since(t)))
	return nil
}

// bindingOf is template d's binding to clusters as Karmada's detector creates it: with
// the binding controller's finalizer (both controllers use the same), so that neither
// adds it and Karmada's deletes the Works of a binding being deleted.
func bindingOf(d *appsv1.Deployment, permanentID string, clusters []string) *workv1alpha2.ResourceBinding {
	rb := workload.Binding(d, d.Name+"-deployment", permanentID, clusters)
	rb.Finalizers = []string{workv1alpha2.BindingControllerFinalizer}
	return rb
}

// workKeys are the tracker's keys of the Works rb makes.
func workKeys(rb *workv1alpha2.ResourceBinding) []string {
	ref := rb.Spec.Resource
	work := names.WorkName(ref.Kind, ref.Namespace, ref.Name)
	keys := make([]string, len(rb.Spec.Clusters))
	for i, c := range rb.Spec.Clusters {
		keys[i] = localplane.WorkKey(names.ExecutionNamespace(c.Name), work)
	}
	return keys
}

// startReady starts the controller and binds one small template (the canary) to the
// first member: once its Work exists, the controller is up and its caches synced. Then
// it waits for quiet, so that what the controller does next is the fleet's.
func (r *runner) startReady(ctx context.Context, f *fleet, sd side) (*controller.Controller, error) {
	ctl, err := controller.Start(ctx, sd.spec, f.kubeconfig, filepath.Join(f.plane.Dir, "controller.log"))
	if err != nil {
		return nil, err
	}
	d := workload.Deployment(canaryNamespace, "canary", 1, 0)
	err = f.plane.Client.Create(ctx, d)
	if err == nil {
		rb := bindingOf(d, "bench-canary", []string{workload.Member(0)})
		if err = f.plane.Client.Create(ctx, rb); err == nil {
			_, err = f.tracker.WaitAll(ctx, workKeys(rb), 2*time.Minute)
		}
	}
	if err == nil {
		_, err = ctl.WaitQuiet(ctx, time.Second, 30*time.Second)
		err = wait.IgnoreTimeout(err)
	}
	if err != nil {
		_ = ctl.Stop()
		return nil, fmt.Errorf("the canary: %w; log tail:\n%s", err, ctl.LogTail(20))
	}
	return ctl, nil
}

// createBindings creates the fleet's bindings, r.o.creators at once.
func (r *runner) createBindings(ctx context.Context, f *fleet) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(r.o.creators)
	for _, rb := range f.bindings {
		g.Go(func() error { return f.plane.Client.Create(ctx, rb) })
	}
	return g.Wait()
}

// progress prints how many of the fleet's Works exist every 5s until done is closed.
func progress(label string, f *fleet, done <-chan struct{}) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	start := time.Now()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			session.Logf("%s: %d/%d Works after %s", label, f.tracker.Seen(f.keys), len(f.keys), report.Dur(time.Since(start)))
		}
	}
}
