// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
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
