// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"strings"
	"testing"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
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
	r := NewReconciler(Config{Client: h.client, APIReader: h.client, Kind: render.ClusterResourceBindingKind})
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

// failDeletesIn fails every Work DELETE in namespace while *failing holds.
func failDeletesIn(namespace string, failing *bool) interceptor.Funcs {
	return interceptor.Funcs{Delete: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
		if *failing && obj.GetNamespace() == namespace {
			return apierrors.NewServiceUnavailable("etcd leader changed")
		}
		return cl.Delete(ctx, obj, opts...)
	}}
}

// A sync that writes no Work still deletes orphans first. When such a delete fails it must
// be retried with backoff and shown, whatever holds back the rest of the sync: an
// unserved template kind is parked until the binding changes, and a purge waits for the
// evicted Works, but the failed DELETE is transient.
func TestFailedDeletesOfSyncsThatWriteNoWorkAreRetriedAndShown(t *testing.T) {
	ours := map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-new"}
	// evicted is the Work of a cluster evicted with purgeMode Directly; the execution
	// side holds it, so the purge keeps waiting for it.
	evicted := orphanWork("member3", ours)
	evicted.Finalizers = []string{workv1alpha1.ExecutionControllerFinalizer}
	purging := seedBinding("member1")
	purging.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "member3", PurgeMode: policyv1alpha1.PurgeModeDirectly}}
	unserved := seedBinding("member1")
	unserved.Spec.Resource.APIVersion, unserved.Spec.Resource.Kind = "example.com/v1", "Widget"

	cases := []struct {
		name    string
		objs    []client.Object
		failing string // the cluster whose Work DELETE fails
		reason  string // of the WorksSynced condition, before and after
		// stillThere: the Work stays (terminating) once deleted, as the evicted one does.
		stillThere bool
	}{
		{name: "orphan of a binding whose template kind is not served", failing: "member2", reason: ReasonSyncFailed,
			objs: []client.Object{unserved, orphanWork("member2", ours)}},
		{name: "orphan of a binding waiting for a purge", failing: "member2", reason: ReasonWaitingForEviction,
			objs: []client.Object{seedDeployment(), purging, evicted, orphanWork("member2", ours)}},
		{name: "evicted Work of a binding waiting for its purge", failing: "member3", reason: ReasonWaitingForEviction, stillThere: true,
			objs: []client.Object{seedDeployment(), purging, evicted}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			failing := true
			objs := make([]client.Object, 0, len(tc.objs))
			for _, o := range tc.objs {
				objs = append(objs, o.DeepCopyObject().(client.Object))
			}
			h := newHarness(t, failDeletesIn("karmada-es-"+tc.failing, &failing), objs...)
			failures := clusterSyncFailures.WithLabelValues(tc.failing, "ServiceUnavailable")
			before := testutil.ToFloat64(failures)

			err := h.reconcile()
			if err == nil || !strings.Contains(err.Error(), "cluster "+tc.failing+": deleting work") {
				t.Fatalf("Reconcile error = %v, want the failed delete in %s returned, so that it is retried with backoff", err, tc.failing)
			}
			cond := h.worksSynced()
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != tc.reason ||
				!strings.Contains(cond.Message, tc.failing+": deleting work karmada-es-"+tc.failing+"/"+seedWorkName) {
				t.Errorf("WorksSynced = %+v, want %s naming the failed delete in %s", cond, tc.reason, tc.failing)
			}
			if got := testutil.ToFloat64(failures) - before; got != 1 {
				t.Errorf("failure counter {cluster=%s, reason=ServiceUnavailable} rose by %v, want 1", tc.failing, got)
			}
			if !h.liveWork(tc.failing) {
				t.Fatalf("the Work in %s is gone although its delete failed", tc.failing)
			}

			// The fault clears; the retry deletes the Work and the condition forgets it.
			failing = false
			deletes := testutil.ToFloat64(workWrites.WithLabelValues("delete"))
			if err := h.reconcile(); err != nil && !isParked(ctrl.Result{}, err) {
				t.Fatalf("retry: %v", err)
			}
			if h.liveWork(tc.failing) {
				t.Fatalf("the retry left the Work in %s live", tc.failing)
			}
			w := &workv1alpha1.Work{}
			err = h.client.Get(context.Background(), types.NamespacedName{Namespace: "karmada-es-" + tc.failing, Name: seedWorkName}, w)
			if gone := apierrors.IsNotFound(err); gone == tc.stillThere {
				t.Errorf("Work in %s: get = %v, want it there (terminating) = %v", tc.failing, err, tc.stillThere)
			}
			if got := testutil.ToFloat64(workWrites.WithLabelValues("delete")) - deletes; got != 1 {
				t.Errorf("work writes {operation=delete} rose by %v on the retry, want 1", got)
			}
			if cond := h.worksSynced(); cond == nil || cond.Reason != tc.reason || strings.Contains(cond.Message, "deleting work") {
				t.Errorf("WorksSynced after the retry = %+v, want %s without the failed delete", cond, tc.reason)
			}
		})
	}
}
