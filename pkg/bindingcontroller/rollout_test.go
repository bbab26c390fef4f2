// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"slices"
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
	"github.com/binding-controller/binding-controller/pkg/rolloutplan"
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

// reconciler is a new process's: it remembers nothing.
func (f *rolloutFixture) reconciler() *Reconciler {
	return NewReconciler(Config{Client: f.cache, APIReader: f.api, Served: ServedAPIs{Rollouts: true}})
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

// healthy reports cluster's Work applied and healthy, as the execution side does.
func (f *rolloutFixture) healthy(cluster string) {
	f.t.Helper()
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-" + cluster, Name: seedWorkName},
		Status: workv1alpha1.WorkStatus{
			Conditions: []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, Reason: "AppliedSuccessful",
				LastTransitionTime: metav1.Now()}},
			ManifestStatuses: []workv1alpha1.ManifestStatus{{Health: workv1alpha1.ResourceHealthy,
				Status: &runtime.RawExtension{Raw: []byte(`{"phase":"Running"}`)}}}}}
	if err := f.store.Create(context.Background(), work); err != nil {
		f.t.Fatal(err)
	}
}

// rolled is the image cluster's Work is rendered with, and its template generation.
func rolled(ro *rollout, cluster string, current *unstructured.Unstructured) (string, int64) {
	t := current
	if held, ok := ro.templates[cluster]; ok {
		t = held
	}
	containers, _, _ := unstructured.NestedSlice(t.Object, "spec", "template", "spec", "containers")
	image, _, _ := unstructured.NestedString(containers[0].(map[string]any), "image")
	return image, t.GetGeneration()
}

func startedAgain(ro *rollout) bool {
	return slices.ContainsFunc(ro.step.Events, func(e rolloutplan.Event) bool { return e.Reason == rolloutplan.ReasonRolloutStarted })
}

// A binding polled mid-rollout asks the API server only for the health of the Works on
// the new revision: its rollout comes from the cache once the cache shows this process's
// own last write of it, and the held-back clusters' revision from what the sync that
// started the rollout listed. A new process remembers nothing, and reads both live.
func TestAPollMidRolloutReadsOnlyTheHealthLive(t *testing.T) {
	f := newRolloutFixture(t, "member1", "member2", "member3")
	v2 := f.template("nginx:2", 2)
	r := f.reconciler()
	ro, requests := f.mustSync(r, v2)
	if !startedAgain(ro) || requests != [3]int{1, 1, 0} {
		t.Fatalf("the change: started %v, requests (rollout, revision lists, works) %v, want a start, a rollout read and a list", startedAgain(ro), requests)
	}
	for poll := 1; poll <= 2; poll++ {
		ro, requests = f.mustSync(r, v2)
		if requests != [3]int{0, 0, 1} {
			t.Errorf("poll %d: requests (rollout, revision lists, works) %v, want the canary's Work alone", poll, requests)
		}
		if startedAgain(ro) || ro.step.Status.Phase != rolloutsv1alpha1.PhaseProgressing {
			t.Errorf("poll %d: decided %s with events %v, want it progressing as it was", poll, ro.step.Status.Phase, ro.step.Events)
		}
		for cluster, want := range map[string]string{"member1": "nginx:2", "member2": "nginx:1", "member3": "nginx:1"} {
			image, generation := rolled(ro, cluster, v2)
			if image != want || (want == "nginx:1") != (generation == 1) {
				t.Errorf("poll %d: %s renders %s of template generation %d, want %s of its own", poll, cluster, image, generation, want)
			}
		}
	}
	if _, requests = f.mustSync(f.reconciler(), v2); requests != [3]int{1, 1, 1} {
		t.Errorf("a restarted process: requests (rollout, revision lists, works) %v, want one of each", requests)
	}
}

// The cache is believed only when it shows the rollout as this process last wrote it:
// behind that write, or after a write that failed (it may have been made), the rollout
// is read live, and the decision comes from it.
func TestACacheBehindTheLastWriteIsNotBelieved(t *testing.T) {
	f := newRolloutFixture(t, "member1", "member2")
	v2 := f.template("nginx:2", 2)
	before := &rolloutsv1alpha1.BindingRollout{}
	if err := f.store.Get(context.Background(), client.ObjectKeyFromObject(f.rb), before); err != nil {
		t.Fatal(err)
	}
	r := f.reconciler()
	f.mustSync(r, v2)

	f.stale = before
	ro, requests := f.mustSync(r, v2)
	if requests[0] != 1 || startedAgain(ro) {
		t.Errorf("a cache still on the complete rollout: %d live reads of it, started again %v; want one, and not", requests[0], startedAgain(ro))
	}

	f.stale = nil
	f.healthy("member1")
	f.failStatusWrites = true
	if _, _, err := f.sync(r, v2); err == nil {
		t.Fatal("the canary's health was recorded although the status write failed")
	}
	f.failStatusWrites = false
	ro, requests = f.mustSync(r, v2)
	if requests[0] != 1 || ro.step.Status.Clusters[0].State != rolloutsv1alpha1.ClusterHealthy {
		t.Errorf("after a failed write: %d live reads of the rollout, canary %s; want one, and Healthy", requests[0], ro.step.Status.Clusters[0].State)
	}
}

// A template changed mid-rollout makes a new revision: the sync lists the revisions and
// keeps the new one, whatever it remembers, and the clusters it has not reached keep
// what they run.
func TestAChangeMidRolloutListsAndKeepsItsRevision(t *testing.T) {
	f := newRolloutFixture(t, "member1", "member2")
	r := f.reconciler()
	f.mustSync(r, f.template("nginx:2", 2))
	v3 := f.template("nginx:3", 3)
	ro, requests := f.mustSync(r, v3)
	if requests[1] != 1 {
		t.Errorf("%d lists of the revisions, want one", requests[1])
	}
	name, err := templaterevision.NameOf(f.rb, v3)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, &appsv1.ControllerRevision{}); err != nil {
		t.Errorf("the revision of nginx:3: %v", err)
	}
	if image, _ := rolled(ro, "member2", v3); image != "nginx:1" {
		t.Errorf("member2 renders %s, want nginx:1, which it runs", image)
	}
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

// Once the canary's stage is done, a poll reads the Works of the stage under way alone:
// the canary's health no longer changes anything.
func TestAPollReadsTheWorksOfTheStageUnderWayAlone(t *testing.T) {
	f := newRolloutFixture(t, "member1", "member2", "member3")
	v2 := f.template("nginx:2", 2)
	r := f.reconciler()
	f.mustSync(r, v2)
	f.healthy("member1")
	ro, _ := f.mustSync(r, v2)
	if ro.step.Status.Stage != "rest" {
		t.Fatalf("stage %q, want rest: the canary is healthy", ro.step.Status.Stage)
	}
	if _, requests := f.mustSync(r, v2); requests[2] != 2 {
		t.Errorf("%d Works read, want 2: member2's and member3's", requests[2])
	}
}
