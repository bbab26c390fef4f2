// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// propagation is one invocation of the subcommand: what every scenario's runs share.
type propagation struct {
	s            *session.Session
	spec         controller.Spec
	creators     int
	phaseTimeout time.Duration
	seq          int
}

// runEnv is one measured load's fresh control plane, made ready for a controller: the
// controller's user, the load's namespaces and templates, and a watch timing every Work.
type runEnv struct {
	plane      *controlplane.Plane
	kubeconfig string
	templates  []*appsv1.Deployment
	refs       []workv1alpha2.ObjectReference
	tracker    *localplane.WorkTracker
	// stop ends the tracker's watch and the control plane.
	stop func()
}

// setUp starts a fresh control plane for load and prepares it. templates creates the
// load's templates into env.templates and env.refs; nil creates load.Bindings of them
// as prepare does.
func (p *propagation) setUp(ctx context.Context, label string, load loadSpec, templates func(context.Context, *runEnv) error) (*runEnv, error) {
	plane, err := p.newPlane(label, load)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	env := &runEnv{plane: plane, stop: func() { stopPlane(label, plane, cancel) }}
	if _, env.kubeconfig, err = plane.AddUser(audit.ControllerUser, -1, 0); err == nil {
		if templates == nil {
			env.templates, env.refs, err = p.prepare(ctx, plane, load)
		} else if err = p.join(ctx, plane, load); err == nil {
			err = templates(ctx, env)
		}
	}
	if err == nil {
		env.tracker, err = localplane.StartWorkTracker(ctx, plane.Metadata)
	}
	if err != nil {
		env.stop()
		return nil, err
	}
	return env, nil
}

// newPlane starts a fresh, audited control plane for one measured load: behind
// karmada-webhook's Work mutation, with the workload CRDs, as the load says.
func (p *propagation) newPlane(label string, load loadSpec) (*controlplane.Plane, error) {
	p.seq++
	t := time.Now()
	plane, err := controlplane.Start(controlplane.Options{Dir: filepath.Join(p.s.Dir, fmt.Sprintf("%02d-%s", p.seq, session.Sanitize(label))),
		AuditUsers: []string{audit.ControllerUser, audit.CeilingUser}, KarmadaWorkWebhook: load.KarmadaWebhook, WorkloadCRDs: load.Interpreted})
	if err != nil {
		return nil, err
	}
	session.Logf("%s: control plane up in %s", label, report.Dur(time.Since(t)))
	return plane, nil
}

// stopPlane ends the run's watches, then the control plane, and says how long it took.
func stopPlane(label string, plane *controlplane.Plane, cancel context.CancelFunc) {
	cancel()
	t := time.Now()
	if err := plane.Stop(); err != nil {
		session.Logf("%s: stopping the control plane: %v", label, err)
	}
	session.Logf("%s: control plane stopped in %s", label, report.Dur(time.Since(t)))
}

// join joins the load's members (Clusters and execution namespaces) and creates its
// template namespace and the canary's.
func (p *propagation) join(ctx context.Context, plane *controlplane.Plane, load loadSpec) error {
	if err := plane.JoinMembers(ctx, workload.Members(load.Clusters)); err != nil {
		return fmt.Errorf("joining members: %w", err)
	}
	if err := plane.CreateNamespaces(ctx, []string{load.namespace(), canaryNamespace}); err != nil {
		return fmt.Errorf("creating namespaces: %w", err)
	}
	return nil
}

// prepare joins the members and creates the templates, untimed, and returns them as the
// API server returned them and references to them. A load of the Lua kind gets the
// customization first, and its templates are Deployments' bodies as the API server
// defaults them (a dry run), so that both kinds' Works carry the same manifest.
func (p *propagation) prepare(ctx context.Context, plane *controlplane.Plane, load loadSpec) ([]*appsv1.Deployment, []workv1alpha2.ObjectReference, error) {
	if err := p.join(ctx, plane, load); err != nil {
		return nil, nil, err
	}
	if load.Interpreted {
		if err := plane.Client.Create(ctx, workload.ReplicasCustomization()); err != nil {
			return nil, nil, fmt.Errorf("creating the ResourceInterpreterCustomization: %w", err)
		}
	}
	templates := make([]*appsv1.Deployment, load.Bindings)
	refs := make([]workv1alpha2.ObjectReference, load.Bindings)
	t := time.Now()
	err := parallel(ctx, load.Bindings, 16, func(ctx context.Context, i int) error {
		d := workload.Deployment(load.namespace(), templateName(i), int32(load.PerBinding), load.PadEnv)
		ref, err := createTemplate(ctx, plane, load, d)
		if err != nil {
			return fmt.Errorf("creating template %s: %w", d.Name, err)
		}
		templates[i], refs[i] = d, ref
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	session.Logf("%s: %d members joined and %d templates created (untimed) in %s", load.Name, load.Clusters, load.Bindings, report.Dur(time.Since(t)))
	return templates, refs, nil
}

// createTemplate creates d, or for a load of the Lua kind a template of that kind with
// d's body as the API server defaults it, and returns a reference to what it created.
func createTemplate(ctx context.Context, plane *controlplane.Plane, load loadSpec, d *appsv1.Deployment) (workv1alpha2.ObjectReference, error) {
	if !load.lua() {
		err := plane.Client.Create(ctx, d)
		return workload.DeploymentRef(d), err
	}
	if err := plane.Client.Create(ctx, d, client.DryRunAll); err != nil {
		return workv1alpha2.ObjectReference{}, err
	}
	q, err := workload.AsLuaKind(d)
	if err != nil {
		return workv1alpha2.ObjectReference{}, err
	}
	err = plane.Client.Create(ctx, q)
	return workv1alpha2.ObjectReference{APIVersion: q.GetAPIVersion(), Kind: q.GetKind(), Namespace: q.GetNamespace(), Name: q.GetName(), UID: q.GetUID()}, err
}

// bindingsFor returns load's bindings of refs and the keys of every Work they make.
func bindingsFor(load loadSpec, refs []workv1alpha2.ObjectReference) ([]*workv1alpha2.ResourceBinding, []string) {
	bindings := make([]*workv1alpha2.ResourceBinding, len(refs))
	var keys []string
	for i, ref := range refs {
		clusters := load.clustersOf(i)
		bindings[i] = workload.BindingOf(ref, ref.Name+"-"+strings.ToLower(ref.Kind), fmt.Sprintf("bench-%s-%05d", load.Name, i), clusters)
		keys = append(keys, workKeys(names.WorkName(ref.Kind, ref.Namespace, ref.Name), clusters)...)
	}
	return bindings, keys
}

func workKeys(work string, clusters []string) []string {
	keys := make([]string, len(clusters))
	for i, c := range clusters {
		keys[i] = localplane.WorkKey(names.ExecutionNamespace(c), work)
	}
	return keys
}

// startReady starts the controller on env and binds one small template of the load's
// kind (the canary) to member1: once its Work exists, the controller is up and its
// caches, the template kind's among them, are synced. Then it waits for quiet, so that
// what the controller does next is the load's.
func (p *propagation) startReady(ctx context.Context, env *runEnv, spec controller.Spec, load loadSpec, label, logName string) (*controller.Controller, error) {
	ctl, err := controller.Start(ctx, spec, env.kubeconfig, filepath.Join(env.plane.Dir, logName))
	if err != nil {
		return nil, err
	}
	ref, err := createTemplate(ctx, env.plane, load, workload.Deployment(canaryNamespace, "canary", 1, 0))
	if err == nil {
		err = env.plane.Client.Create(ctx, workload.BindingOf(ref, "canary-"+strings.ToLower(ref.Kind), "bench-canary", []string{workload.Member(0)}))
	}
	if err == nil {
		key := localplane.WorkKey(names.ExecutionNamespace(workload.Member(0)), names.WorkName(ref.Kind, canaryNamespace, "canary"))
		_, err = env.tracker.WaitAll(ctx, []string{key}, 2*time.Minute)
	}
	if err == nil {
		_, err = ctl.WaitQuiet(ctx, time.Second, 30*time.Second)
		err = wait.IgnoreTimeout(err)
	}
	if err != nil {
		_ = ctl.Stop()
		return nil, fmt.Errorf("%s: the canary: %w; log tail:\n%s", label, err, ctl.LogTail(20))
	}
	return ctl, nil
}

// createAndTime runs create for 0..n-1, atOnce at a time, and waits until every Work of
// keys exists, printing progress meanwhile. The clock starts with the first create;
// created is how long the creates took. A load that runs out of time is timing.TimedOut,
// not an error.
func (p *propagation) createAndTime(ctx context.Context, label string, tracker *localplane.WorkTracker, keys []string,
	n, atOnce int, create func(ctx context.Context, i int) error) (timing arrivalTiming, created time.Duration, err error) {
	done := make(chan struct{})
	defer close(done)
	go progress(label, tracker, keys, done)
	start := time.Now()
	if err := parallel(ctx, n, atOnce, create); err != nil {
		return timing, time.Since(start), fmt.Errorf("%s: creating: %w", label, err)
	}
	created = time.Since(start)
	arrival, err := tracker.WaitAll(ctx, keys, p.phaseTimeout)
	timing.Seen = arrival.Seen
	switch {
	case wait.IgnoreTimeout(err) != nil:
		return timing, created, err
	case err != nil:
		timing.TimedOut = true
		timing.Seen = tracker.Seen(keys)
	default:
		timing.Elapsed = arrival.Last.Sub(start)
		timing.WorksPerSec = float64(len(keys)) / timing.Elapsed.Seconds()
		timing.SteadyWorksPerSec = report.Num(steadyRate(tracker.FirstSeen(keys)))
	}
	return timing, created, nil
}

// steadyRate is the rate between the 10th and the 90th percentile of arrival times, in
// items per second: the throughput without the ramp-up and the tail (NaN under 10 items).
func steadyRate(times []time.Time) float64 {
	n := len(times)
	if n < 10 || !times[n*9/10-1].After(times[n/10]) {
		return math.NaN()
	}
	return float64(n*9/10-1-n/10) / times[n*9/10-1].Sub(times[n/10]).Seconds()
}

// progress prints how many of keys exist every 5s until done is closed.
func progress(label string, tracker *localplane.WorkTracker, keys []string, done <-chan struct{}) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	start := time.Now()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			session.Logf("%s: %d/%d Works after %s", label, tracker.Seen(keys), len(keys), report.Dur(time.Since(start)))
		}
	}
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
