// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
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
				phase = got.Status.Phase
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
