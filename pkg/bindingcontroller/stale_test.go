// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// A parked binding synced again from a cache that has not seen its own condition yet
// (under load the cache lags this process's writes) must stay parked: the condition patch
// conflicts, the live binding already carries the condition, and nothing is requeued. The
// flaky "no retry loop" specs saw one more sync than expected for this reason.
func TestAStaleCachedBindingIsNotRequeuedForItsOwnLastWrite(t *testing.T) {
	parked := func() client.Object {
		rb := seedBinding("member1", "Bad_Cluster", "member3")
		rb.UID = "uid-rb"
		return rb
	}
	// The API server's binding: the first sync parked it and wrote its condition.
	live := newHarness(t, interceptor.Funcs{}, seedDeployment(), parked())
	if res, err := live.r.Reconcile(context.Background(), request()); err != nil || !res.IsZero() {
		t.Fatalf("first sync = %v, %v; want parked", res, err)
	}

	// This process's cache still holds the binding without its condition; a patch from it conflicts.
	patches := 0
	stale := newHarness(t, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			return apierrors.NewConflict(schema.GroupResource{Group: "work.karmada.io", Resource: "resourcebindings"}, obj.GetName(),
				errorString("the object has been modified; please apply your changes to the latest version and try again"))
		},
	}, seedDeployment(), parked())
	stale.r.APIReader = live.client

	res, err := stale.r.Reconcile(context.Background(), request())
	if err != nil || !res.IsZero() {
		t.Fatalf("sync from a stale cache = %v, %v; want parked with no requeue: the live binding already says so", res, err)
	}
	if patches != 1 {
		t.Errorf("%d status patches, want 1: the live binding's condition is current, so the retry sends nothing", patches)
	}
}

// A conflict with a binding whose spec moved on leaves the condition to that spec: its own
// event syncs it, and this sync's results describe an older spec. Nothing is returned, so
// nothing is logged as a Reconciler error or requeued.
func TestAConflictWithANewerSpecLeavesTheConditionToItsSync(t *testing.T) {
	rb := seedBinding("member1")
	rb.UID = "uid-rb"
	newer := rb.DeepCopy()
	newer.Generation = 2
	live := newHarness(t, interceptor.Funcs{}, seedDeployment(), newer)
	patches := 0
	stale := newHarness(t, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			return apierrors.NewConflict(schema.GroupResource{Group: "work.karmada.io", Resource: "resourcebindings"}, obj.GetName(), errorString("modified"))
		},
	}, seedDeployment(), rb)
	stale.r.APIReader = live.client
	res, err := stale.r.Reconcile(context.Background(), request())
	if err != nil || !res.IsZero() {
		t.Fatalf("Reconcile = %v, %v; want no error and no requeue", res, err)
	}
	if patches != 1 {
		t.Errorf("%d status patches, want 1: the older spec's condition is not written over the newer spec", patches)
	}
}

// Another writer of the binding's status (Karmada's scheduler, its binding status
// controller) makes the condition patch conflict again and again: each conflict is read
// and the patch made again on the live binding, in place, until it lands. The sync
// returns no error, so the binding is neither requeued nor logged as a Reconciler error.
func TestRepeatedStatusConflictsAreResolvedInPlace(t *testing.T) {
	rb := seedBinding("member1")
	rb.UID = "uid-rb"
	patches := 0
	h := newHarness(t, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			if patches <= 4 {
				return apierrors.NewConflict(schema.GroupResource{Group: "work.karmada.io", Resource: "resourcebindings"}, obj.GetName(), errorString("modified"))
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}, seedDeployment(), rb)
	res, err := h.r.Reconcile(context.Background(), request())
	if err != nil || !res.IsZero() {
		t.Fatalf("Reconcile = %v, %v; want no error and no requeue", res, err)
	}
	if patches != 5 {
		t.Errorf("%d status patches, want 5: four conflicts, then the patch that lands", patches)
	}
	if c := h.worksSynced(); c == nil || c.Reason != ReasonSynced {
		t.Errorf("WorksSynced = %+v, want Synced", c)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
