// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/rolloutpolicy"
	"github.com/binding-controller/binding-controller/pkg/templaterevision"
)

// The rollout's status is its only memory: a decision never starts from a cached copy
// that may lag behind this process's own last write, except when the copy shows the
// rollout over and the template unchanged since.
func TestARolloutIsDecidedFromItsLiveStatus(t *testing.T) {
	rb := seedBinding("member1")
	rb.UID = "uid-rb"
	template := &unstructured.Unstructured{}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(seedDeployment())
	if err != nil {
		t.Fatal(err)
	}
	template.Object = obj
	current, err := templaterevision.NameOf(rb, template)
	if err != nil {
		t.Fatal(err)
	}
	rollout := func(phase rolloutsv1alpha1.RolloutPhase, revision string) *rolloutsv1alpha1.BindingRollout {
		return &rolloutsv1alpha1.BindingRollout{ObjectMeta: rb.ObjectMeta,
			Spec:   rolloutsv1alpha1.BindingRolloutSpec{Binding: rolloutsv1alpha1.BindingReference{Name: rb.Name, UID: rb.UID}},
			Status: rolloutsv1alpha1.BindingRolloutStatus{Phase: phase, Revision: revision}}
	}
	for _, tc := range []struct {
		name        string
		cached      *rolloutsv1alpha1.BindingRollout // nil: the cache has none yet
		live        *rolloutsv1alpha1.BindingRollout
		want        rolloutsv1alpha1.RolloutPhase // "" for no rollout
		wantLiveGet bool
	}{
		{"the cache lags behind a halt", rollout(rolloutsv1alpha1.PhaseProgressing, current), rollout(rolloutsv1alpha1.PhaseRolledBack, current), rolloutsv1alpha1.PhaseRolledBack, true},
		{"the cache has not seen the rollout created", nil, rollout(rolloutsv1alpha1.PhaseComplete, "web-old"), rolloutsv1alpha1.PhaseComplete, true},
		{"complete on the template as it is: the cache is enough", rollout(rolloutsv1alpha1.PhaseComplete, current), rollout(rolloutsv1alpha1.PhaseComplete, current), rolloutsv1alpha1.PhaseComplete, false},
		{"complete, but the template changed since", rollout(rolloutsv1alpha1.PhaseComplete, "web-old"), rollout(rolloutsv1alpha1.PhaseProgressing, "web-old"), rolloutsv1alpha1.PhaseProgressing, true},
		{"none at all", nil, nil, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scheme := testScheme(t)
			cache := fake.NewClientBuilder().WithScheme(scheme)
			if tc.cached != nil {
				cache = cache.WithObjects(tc.cached)
			}
			liveGets := 0
			api := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					liveGets++
					return c.Get(ctx, key, obj, opts...)
				}})
			if tc.live != nil {
				api = api.WithObjects(tc.live)
			}
			r := NewReconciler(Config{Client: cache.Build(), APIReader: api.Build()})
			s := newScope(resourceBinding, rb)
			s.template = template
			got, err := r.readRollout(context.Background(), s, current)
			if err != nil {
				t.Fatal(err)
			}
			phase := rolloutsv1alpha1.RolloutPhase("")
			if got != nil {
				phase = got.RolloutStatus().Phase
			}
			if phase != tc.want {
				t.Errorf("decided from phase %q, want %q", phase, tc.want)
			}
			if (liveGets > 0) != tc.wantLiveGet {
				t.Errorf("%d live reads, want any: %v", liveGets, tc.wantLiveGet)
			}
		})
	}
}

// A rollout that is complete on the template as it is costs a sync nothing beyond the
// cache: no read of the API server, neither of the rollout, its revisions nor its Works.
func TestACompleteRolloutCostsASyncNoRequest(t *testing.T) {
	rb := seedBinding("member1", "member2")
	rb.UID = "uid-rb"
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(seedDeployment())
	if err != nil {
		t.Fatal(err)
	}
	template := &unstructured.Unstructured{Object: obj}
	current, err := templaterevision.NameOf(rb, template)
	if err != nil {
		t.Fatal(err)
	}
	policy := &rolloutsv1alpha1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "all"},
		Spec: rolloutsv1alpha1.RolloutPolicySpec{Stages: []rolloutsv1alpha1.RolloutStage{
			{Name: "canary", Clusters: rolloutsv1alpha1.StageClusters{Names: []string{"member1"}}}}}}
	complete := &rolloutsv1alpha1.BindingRollout{ObjectMeta: rb.ObjectMeta,
		Spec: rolloutsv1alpha1.BindingRolloutSpec{Binding: rolloutsv1alpha1.BindingReference{Name: rb.Name, UID: rb.UID}},
		Status: rolloutsv1alpha1.BindingRolloutStatus{Phase: rolloutsv1alpha1.PhaseComplete, Revision: current,
			Clusters: []rolloutsv1alpha1.ClusterRolloutStatus{
				{Name: "member1", Stage: "canary", Revision: current, State: rolloutsv1alpha1.ClusterHealthy},
				{Name: "member2", Stage: rolloutpolicy.UnstagedName, Revision: current, State: rolloutsv1alpha1.ClusterHealthy}}}}
	requests := 0
	count := func() { requests++ }
	api := fake.NewClientBuilder().WithScheme(testScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			count()
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			count()
			return c.List(ctx, list, opts...)
		}}).Build()
	cache := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(policy, complete).Build()
	r := NewReconciler(Config{Client: cache, APIReader: api, Served: ServedAPIs{Rollouts: true}})
	s := newScope(resourceBinding, rb)
	s.template = template
	s.plan()
	if !r.planRollout(context.Background(), s) {
		t.Fatalf("the rollout phase stopped the sync: %v", s.stopped.err)
	}
	if requests != 0 {
		t.Errorf("%d requests to the API server, want none", requests)
	}
	if s.rollout == nil || s.rollout.step.Status.Phase != rolloutsv1alpha1.PhaseComplete || len(s.rollout.templates) != 0 {
		t.Errorf("rollout %+v, want it complete with every cluster on the template as it is", s.rollout)
	}
}

// rolloutFixture is an API server holding a binding whose rollout is complete on
// nginx:1, a policy of two stages (canary: member1; rest: the others), and what a sync's
// rollout phase asks of the API server itself, counted.
type rolloutFixture struct {
	t     *testing.T
	rb    *workv1alpha2.ResourceBinding
	store client.WithWatch
	// cache reads from store, but for the BindingRollout while stale is set: a cache that
	// lags with that copy.
	cache, api client.WithWatch
	stale      *rolloutsv1alpha1.BindingRollout
	// failStatusWrites makes every write of the rollout's status fail.
	failStatusWrites bool

	mu                                   sync.Mutex
	rolloutGets, revisionLists, workGets int
	inFlightWorkGets, mostWorkGetsAtOnce int
	workGetsHeldUntil                    int
}

func newRolloutFixture(t *testing.T, clusters ...string) *rolloutFixture {
	f := &rolloutFixture{t: t, rb: seedBinding(clusters...)}
	f.rb.UID = "uid-rb"
	policy := &rolloutsv1alpha1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "staged"},
		Spec: rolloutsv1alpha1.RolloutPolicySpec{Stages: []rolloutsv1alpha1.RolloutStage{
			{Name: "canary", Clusters: rolloutsv1alpha1.StageClusters{Names: clusters[:1]}},
			{Name: "rest", Clusters: rolloutsv1alpha1.StageClusters{Names: clusters[1:]}}}}}
	scheme := testScheme(t)
	f.store = fake.NewClientBuilder().WithScheme(scheme).WithObjects(policy).
		WithStatusSubresource(&rolloutsv1alpha1.BindingRollout{}).Build()
	ctx := context.Background()
	v1 := f.template("nginx:1", 1)
	store := templaterevision.Store{Client: f.store}
	rev, _, err := store.Ensure(ctx, f.rb, workv1alpha2.GroupVersion.WithKind("ResourceBinding"), "default", v1, nil)
	if err != nil {
		t.Fatal(err)
	}
	complete := &rolloutsv1alpha1.BindingRollout{ObjectMeta: metav1.ObjectMeta{Namespace: f.rb.Namespace, Name: f.rb.Name},
		Spec: rolloutsv1alpha1.BindingRolloutSpec{Binding: rolloutsv1alpha1.BindingReference{Name: f.rb.Name, UID: f.rb.UID}}}
	if err := f.store.Create(ctx, complete); err != nil {
		t.Fatal(err)
	}
	complete.Status = rolloutsv1alpha1.BindingRolloutStatus{Phase: rolloutsv1alpha1.PhaseComplete, Revision: rev.Name}
	for i, c := range clusters {
		stage := "rest"
		if i == 0 {
			stage = "canary"
		}
		complete.Status.Clusters = append(complete.Status.Clusters,
			rolloutsv1alpha1.ClusterRolloutStatus{Name: c, Stage: stage, Revision: rev.Name, State: rolloutsv1alpha1.ClusterHealthy})
	}
	if err := f.store.Status().Update(ctx, complete); err != nil {
		t.Fatal(err)
	}
	f.cache = interceptor.NewClient(f.store, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if ro, ok := obj.(*rolloutsv1alpha1.BindingRollout); ok && f.stale != nil {
				f.stale.DeepCopyInto(ro)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if f.failStatusWrites {
				return apierrors.NewServiceUnavailable("etcd leader changed")
			}
			return c.Status().Update(ctx, obj, opts...)
		}})
	f.api = interceptor.NewClient(f.store, interceptor.Funcs{Get: f.countGet, List: f.countList})
	return f
}

// template is the Deployment at image, of metadata.generation generation.
func (f *rolloutFixture) template(image string, generation int64) *unstructured.Unstructured {
	d := seedDeployment()
	d.Generation = generation
	d.Spec.Template.Spec.Containers[0].Image = image
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		f.t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func (f *rolloutFixture) countGet(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	f.mu.Lock()
	switch obj.(type) {
	case *rolloutsv1alpha1.BindingRollout:
		f.rolloutGets++
	case *workv1alpha1.Work:
		f.workGets++
		f.inFlightWorkGets++
		f.mostWorkGetsAtOnce = max(f.mostWorkGetsAtOnce, f.inFlightWorkGets)
		defer func() { f.mu.Lock(); f.inFlightWorkGets--; f.mu.Unlock() }()
		// Held until that many are in flight at once (or a while has passed): read one
		// after the other, they never are.
		for deadline := time.Now().Add(2 * time.Second); f.mostWorkGetsAtOnce < f.workGetsHeldUntil && time.Now().Before(deadline); {
			f.mu.Unlock()
			time.Sleep(time.Millisecond)
			f.mu.Lock()
		}
	}
	f.mu.Unlock()
	return c.Get(ctx, key, obj, opts...)
}

func (f *rolloutFixture) countList(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*appsv1.ControllerRevisionList); ok {
		f.mu.Lock()
		f.revisionLists++
		f.mu.Unlock()
	}
	return c.List(ctx, list, opts...)
}

// sync runs the rollout phase of a sync of the binding on template, and reports it as a
// sync does once its Works are written; it returns what was decided and the requests
// the API server itself got (rollout GETs, revision LISTs, Work GETs).
func (f *rolloutFixture) sync(r *Reconciler, template *unstructured.Unstructured) (*rollout, [3]int, error) {
	f.mu.Lock()
	f.rolloutGets, f.revisionLists, f.workGets = 0, 0, 0
	f.mu.Unlock()
	s := newScope(resourceBinding, f.rb.DeepCopy())
	s.template = template
	s.plan()
	ctx := context.Background()
	if !r.planRollout(ctx, s) {
		return nil, [3]int{}, s.stopped.err
	}
	err := r.reportRollout(ctx, s, &ctrl.Result{})
	f.mu.Lock()
	defer f.mu.Unlock()
	return s.rollout, [3]int{f.rolloutGets, f.revisionLists, f.workGets}, err
}

func (f *rolloutFixture) mustSync(r *Reconciler, template *unstructured.Unstructured) (*rollout, [3]int) {
	f.t.Helper()
	ro, requests, err := f.sync(r, template)
	if err != nil {
		f.t.Fatal(err)
	}
	return ro, requests
}

// The health of a stage's clusters is read a bounded number of Works at once
// (ClusterSyncConcurrency), not one after the other.
func TestAStagesHealthIsReadAFewWorksAtOnce(t *testing.T) {
	clusters := []string{"member1", "member2", "member3", "member4", "member5", "member6", "member7"}
	f := newRolloutFixture(t, clusters...)
	r := NewReconciler(Config{Client: f.cache, APIReader: f.api, Served: ServedAPIs{Rollouts: true}, ClusterSyncConcurrency: 3})
	f.mustSync(r, f.template("nginx:2", 2))
	// The canary stage is done once its soak (none) is: the rest, six clusters, roll out.
	status := &rolloutsv1alpha1.BindingRollout{}
	if err := f.store.Get(context.Background(), client.ObjectKeyFromObject(f.rb), status); err != nil {
		t.Fatal(err)
	}
	status.Status.Stage = "rest"
	for i := range status.Status.Clusters {
		status.Status.Clusters[i].Revision = status.Status.Revision
	}
	if err := f.store.Status().Update(context.Background(), status); err != nil {
		t.Fatal(err)
	}
	f.workGetsHeldUntil = 3
	_, requests := f.mustSync(r, f.template("nginx:2", 2))
	if requests[2] != len(clusters) || f.mostWorkGetsAtOnce != 3 {
		t.Errorf("%d Works read, at most %d at once; want %d, 3 at once", requests[2], f.mostWorkGetsAtOnce, len(clusters))
	}
}
