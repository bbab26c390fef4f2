// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

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
			if err := h.reconcile(); err != nil {
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
