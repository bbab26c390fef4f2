// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/render"
)

var seedKey = types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}

// The API server can hard-delete a binding whose finalizer was added while a DELETE was in
// flight (kubernetes/kubernetes#77988). The sync that added the finalizer then writes
// Works for a binding that is gone; the next reconcile must delete them.
func TestWorksOfABindingGoneDespiteItsFinalizerAreDeleted(t *testing.T) {
	raced := false
	h := newHarness(t, interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := cl.Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			if !raced {
				// The concurrent DELETE wins although the finalizer patch succeeded.
				raced = true
				gone := &workv1alpha2.ResourceBinding{}
				if err := cl.Get(ctx, seedKey, gone); err != nil {
					return err
				}
				controllerutil.RemoveFinalizer(gone, workv1alpha2.BindingControllerFinalizer)
				if err := cl.Update(ctx, gone); err != nil {
					return err
				}
				return cl.Delete(ctx, gone)
			}
			return nil
		},
	}, seedDeployment(), seedBinding("member1", "member2", "member3"))
	before := testutil.ToFloat64(orphanWorksDeleted)

	if err := h.reconcile(); err == nil {
		t.Fatal("the sync's status patch must fail: the binding is gone")
	}
	if !h.liveWork("member1") {
		t.Fatal("the sync should have written its Works before finding the binding gone")
	}
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"member1", "member2", "member3"} {
		if h.liveWork(c) {
			t.Errorf("cluster %s still holds a live Work of a binding that is gone", c)
		}
	}
	if got := testutil.ToFloat64(orphanWorksDeleted) - before; got != 3 {
		t.Errorf("orphan works deleted counter rose by %v, want 3", got)
	}
}

// orphanWork is a live Work whose annotations name the seed binding.
func orphanWork(cluster string, labels map[string]string) *workv1alpha1.Work {
	return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
		Name: seedWorkName, Namespace: "karmada-es-" + cluster, UID: types.UID("uid-" + cluster),
		Labels: labels,
		Annotations: map[string]string{
			workv1alpha2.ResourceBindingNamespaceAnnotation: seedKey.Namespace,
			workv1alpha2.ResourceBindingNameAnnotation:      seedKey.Name,
		},
	}}
}

func TestGoneBindingLeavesWorksItDidNotWriteAlone(t *testing.T) {
	// No permanent-id label and not written by this process: not the controller's Work.
	h := newHarness(t, interceptor.Funcs{}, orphanWork("member1", nil))
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if !h.liveWork("member1") {
		t.Fatal("a Work the controller did not write was deleted")
	}
}

func TestWorksOfABindingTheCacheHasNotSeenAreKept(t *testing.T) {
	ours := map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-new"}
	h := newHarness(t, interceptor.Funcs{}, orphanWork("member1", ours))
	// The API server has the binding; the cache (h.client) does not yet.
	live := newHarness(t, interceptor.Funcs{}, seedBinding("member1"))
	h.r.APIReader = live.client
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if !h.liveWork("member1") {
		t.Fatal("the Work of a binding the API server still has was deleted")
	}

	h.r.APIReader = h.client
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if h.liveWork("member1") {
		t.Fatal("the Work of a binding that is gone was kept")
	}
}

func TestAGoneBindingsWorksAlreadyDeletedCostNoRequest(t *testing.T) {
	deletes := 0
	lagging := false
	ours := map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-new"}
	h := newHarness(t, interceptor.Funcs{
		Delete: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			deletes++
			return cl.Delete(ctx, obj, opts...)
		},
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := cl.List(ctx, list, opts...); err != nil {
				return err
			}
			if works, ok := list.(*metav1.PartialObjectMetadataList); ok && lagging {
				// A cache that lags shows the deleted Work alive a moment longer.
				w := orphanWork("member1", ours)
				works.Items = append(works.Items, metav1.PartialObjectMetadata{TypeMeta: works.TypeMeta, ObjectMeta: w.ObjectMeta})
			}
			return nil
		},
	}, orphanWork("member1", ours))
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if deletes != 1 || h.liveWork("member1") {
		t.Fatalf("%d deletes, live Work %v; want the orphan deleted once", deletes, h.liveWork("member1"))
	}
	lagging = true
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if deletes != 1 {
		t.Fatalf("%d deletes, want 1: the Work this process deleted was deleted again", deletes)
	}
}

func TestWorksOfAGoneClusterResourceBindingAreDeleted(t *testing.T) {
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
		Name: "reader-5b5c8bd9c4", Namespace: "karmada-es-member1", UID: "uid-crb-work",
		Labels:      map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "crb-1"},
		Annotations: map[string]string{workv1alpha2.ClusterResourceBindingNameAnnotation: "reader-clusterrole"},
	}}
	// A ResourceBinding's Work of the same binding name must stay: it is not this kind's.
	rbWork := orphanWork("member2", map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-1"})
	rbWork.Annotations[workv1alpha2.ResourceBindingNameAnnotation] = "reader-clusterrole"
	h := newHarness(t, interceptor.Funcs{}, work, rbWork)
	r := NewReconciler(Reconciler{Client: h.client, APIReader: h.client, Kind: render.ClusterResourceBindingKind})
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: "reader-clusterrole"}}); err != nil {
		t.Fatal(err)
	}
	if err := h.client.Get(context.Background(), client.ObjectKeyFromObject(work), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Work of a ClusterResourceBinding that is gone is still there: %v", err)
	}
	if !h.liveWork("member2") {
		t.Fatal("a ResourceBinding's Work was deleted by the ClusterResourceBinding controller")
	}
}
