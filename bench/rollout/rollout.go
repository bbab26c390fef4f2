// SPDX-License-Identifier: Apache-2.0

// Package rollout is the rollout subcommand (make bench-rollout): what a staged rollout
// costs the controller. One plane and one controller process hold the bindings, each
// over every stage's clusters, with the execution side simulated writing every Work
// Applied and Healthy. Run A changes every template under no policy and waits until every
// Work carries the change; then a RolloutPolicy adopts the bindings, and run B changes
// every template again and waits until every rollout is Complete on the new revision.
package rollout

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/controlplane"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

const (
	namespace = "bench"
	limit     = 30 * time.Minute // on every wait
)

// bench is one invocation: its options, the plane and controller, the bindings and what
// times them.
type bench struct {
	common                  session.Common
	bindings                int
	stages                  [][]string
	soak, poll, simInterval time.Duration

	s       *session.Session
	plane   *controlplane.Plane
	ctl     *controller.Controller
	tracker *localplane.WorkTracker
	rec     *recorder
	binds   []*workv1alpha2.ResourceBinding
	keys    []string
}

func (b *bench) parse(args []string) (*flag.FlagSet, error) {
	fs := flag.NewFlagSet("rollout", flag.ContinueOnError)
	b.common.Register(fs, "rollout")
	fs.IntVar(&b.bindings, "bindings", 1000, "Deployments and ResourceBindings, each bound to every stage's clusters")
	stages := fs.String("stages", "1,3,6", "clusters per stage, in order: member1, member2, ...")
	fs.DurationVar(&b.soak, "soak", 5*time.Second, "every stage's minSuccessTime")
	fs.DurationVar(&b.poll, "poll", 5*time.Second, "the manager's --rollout-health-poll-interval")
	fs.DurationVar(&b.simInterval, "sim-interval", time.Second, "how often the simulated execution side writes the Works' status")
	if err := session.Parse(fs, args); err != nil {
		return nil, err
	}
	next := 0
	for _, s := range session.SplitList(*stages) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--stages: %q is not a number of clusters", s)
		}
		b.stages = append(b.stages, workload.Members(next + n)[next:])
		next += n
	}
	if b.bindings < 1 || next == 0 {
		return nil, fmt.Errorf("need a binding and a stage")
	}
	return fs, nil
}

// Run runs the rollout subcommand with its flags, args.
func Run(ctx context.Context, args []string) error {
	b := &bench{rec: newRecorder()}
	fs, err := b.parse(args)
	if err != nil {
		return err
	}
	b.s, err = b.common.Start(ctx, fs, "rollout")
	defer b.s.Finish()
	if err != nil {
		return err
	}
	if b.plane, err = controlplane.Start(controlplane.Options{Dir: filepath.Join(b.s.Dir, "plane")}); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); _ = b.plane.Stop() }()
	if err := b.setUp(ctx); err != nil {
		return err
	}
	defer func() { _ = b.ctl.Stop() }()
	a, err := b.measure(ctx, "no-policy", "nginx:1.28", "every Work changed", b.allWorksChangedSince)
	if err == nil {
		err = b.adopt(ctx)
	}
	if err != nil {
		return err
	}
	r, err := b.measure(ctx, "rollout", "nginx:1.29", "every rollout Complete", func(start time.Time) bool { return b.rec.completedSince(start) == b.bindings })
	if err != nil {
		return err
	}
	return b.report(a, r)
}

// setUp joins the members and starts the Work watch, the simulator, the rollout watch
// and the controller, then binds the templates and waits until every Work exists.
func (b *bench) setUp(ctx context.Context) error {
	clusters := slices.Concat(b.stages...)
	_, kubeconfig, err := b.plane.AddUser("bench-controller", -1, 0)
	if err == nil {
		err = errors.Join(b.plane.JoinMembers(ctx, clusters), b.plane.CreateNamespaces(ctx, []string{namespace}))
	}
	if err == nil {
		b.tracker, err = localplane.StartWorkTracker(ctx, b.plane.Metadata)
	}
	var watcher client.WithWatch
	if err == nil {
		watcher, err = client.NewWithWatch(b.plane.Admin, client.Options{Scheme: b.plane.Client.Scheme()})
	}
	if err != nil {
		return err
	}
	go b.rec.watchRollouts(ctx, watcher)
	sim := executionsim.New(b.plane.Client, b.simInterval)
	sim.ReportHealth(b.rec.health)
	go sim.Run(ctx)
	spec := controller.Spec{Label: "binding-controller", Binary: b.s.Binary,
		Args: append([]string{"--rollout-health-poll-interval=" + b.poll.String()}, b.common.ManagerArgs()...)}
	if b.ctl, err = controller.Start(ctx, spec, kubeconfig, filepath.Join(b.s.Dir, "controller.log")); err != nil {
		return err
	}
	session.Logf("controller up; binding %d templates to %d clusters", b.bindings, len(clusters))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	b.binds = make([]*workv1alpha2.ResourceBinding, b.bindings)
	for i := range b.binds {
		d := workload.Deployment(namespace, fmt.Sprintf("app-%05d", i), int32(len(clusters)), 0)
		for _, c := range clusters {
			b.keys = append(b.keys, workKey(c, d.Name))
		}
		g.Go(func() error {
			if err := b.plane.Client.Create(gctx, d); err != nil {
				return err
			}
			// Created, the template has the UID the binding refers to, as Karmada's detector sets it.
			b.binds[i] = workload.Binding(d, d.Name+"-deployment", fmt.Sprintf("bench-%05d", i), clusters)
			return b.plane.Client.Create(gctx, b.binds[i].DeepCopy())
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	_, err = b.tracker.WaitAll(ctx, b.keys, limit)
	return err
}

// change changes every template's image and then, as Karmada's detector does, its
// binding's spec.resource.resourceVersion.
func (b *bench) change(ctx context.Context, image string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	patch := client.RawPatch(types.StrategicMergePatchType,
		fmt.Appendf(nil, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image))
	for _, rb := range b.binds {
		g.Go(func() error {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: rb.Spec.Resource.Name}}
			if err := b.plane.Client.Patch(ctx, d, patch); err != nil {
				return err
			}
			bump := fmt.Appendf(nil, `{"spec":{"resource":{"resourceVersion":%q}}}`, d.ResourceVersion)
			if err := b.plane.Client.Patch(ctx, rb.DeepCopy(), client.RawPatch(types.MergePatchType, bump)); err != nil {
				return err
			}
			b.rec.mu.Lock()
			b.rec.changedAt[rb.Name] = time.Now()
			b.rec.mu.Unlock()
			return nil
		})
	}
	return g.Wait()
}

// measure changes every template and waits until done, and returns the controller's CPU
// and syncs from just before the change until it is quiet again.
func (b *bench) measure(ctx context.Context, label, image, what string, done func(start time.Time) bool) (run, error) {
	_, err := b.ctl.WaitQuiet(ctx, 2*time.Second, limit)
	before, scrapeErr := b.ctl.Scrape(ctx)
	if err = errors.Join(err, scrapeErr); err != nil {
		return run{}, err
	}
	cpu, _ := localplane.ReadCPU(b.ctl.Proc.Pid())
	session.Logf("%s: changing %d templates", label, b.bindings)
	start := time.Now()
	if err = b.change(ctx, image); err == nil {
		err = wait.Poll(ctx, 250*time.Millisecond, limit, what, func(context.Context) (bool, error) { return done(start), b.ctl.Alive() })
	}
	r := run{Label: label, Wall: time.Since(start).Seconds()}
	if err == nil {
		session.Logf("%s: %s after %.1fs; waiting for the controller to go quiet", label, what, r.Wall)
		_, err = b.ctl.WaitQuiet(ctx, 2*time.Second, limit)
	}
	after, scrapeErr := b.ctl.Scrape(ctx)
	if err = errors.Join(err, scrapeErr); err != nil {
		return r, err
	}
	now, _ := localplane.ReadCPU(b.ctl.Proc.Pid())
	r.CPU, r.Syncs = now-cpu, controller.Reconciles(after)-controller.Reconciles(before)
	const stage = "binding_controller_rollout_stage_duration_seconds"
	r.StageSum, r.StageCount = after.Sum(stage+"_sum", nil)-before.Sum(stage+"_sum", nil), after.Sum(stage+"_count", nil)-before.Sum(stage+"_count", nil)
	session.Logf("%s: controller CPU %.2fs over %.0f syncs", label, r.CPU, r.Syncs)
	return r, nil
}

func (b *bench) allWorksChangedSince(start time.Time) bool {
	return !slices.ContainsFunc(b.keys, func(k string) bool { return b.tracker.Get(k).GenerationAt.Before(start) })
}

// adopt creates the RolloutPolicy, a stage per --stages, and waits until every binding
// has a Complete rollout on its template as it is.
func (b *bench) adopt(ctx context.Context) error {
	p := &rolloutsv1alpha1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "bench"},
		Spec: rolloutsv1alpha1.RolloutPolicySpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}}}
	for i, clusters := range b.stages {
		p.Spec.Stages = append(p.Spec.Stages, rolloutsv1alpha1.RolloutStage{Name: fmt.Sprintf("stage-%d", i+1),
			Clusters: rolloutsv1alpha1.StageClusters{Names: clusters}, MinSuccessTime: &metav1.Duration{Duration: b.soak}})
	}
	if err := b.plane.Client.Create(ctx, p); err != nil {
		return err
	}
	return wait.Poll(ctx, 250*time.Millisecond, limit, "every binding adopted by the policy", func(context.Context) (bool, error) {
		return b.rec.completedSince(time.Time{}) == b.bindings, b.ctl.Alive()
	})
}

func workKey(cluster, template string) string {
	return localplane.WorkKey(names.ExecutionNamespace(cluster), names.WorkName("Deployment", namespace, template))
}
