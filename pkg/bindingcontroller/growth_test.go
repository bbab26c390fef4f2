// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// Bindings and clusters come and go for as long as the controller runs. What it keeps per
// binding (stuck warnings, blocked clusters) and per cluster (the blocked gauge, the
// failure counter) must go with them, and a binding naming clusters that cannot exist
// must not add series at all.
func TestTrackersAndSeriesDoNotGrowAsBindingsAndClustersComeAndGo(t *testing.T) {
	const bindings = 60
	ctx := context.Background()
	key := func(i int) types.NamespacedName {
		return types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("soak-%d", i)}
	}
	blockedCluster := func(i int) string { return fmt.Sprintf("soak-blocked-%d", i) }
	objs := []client.Object{seedDeployment()}
	for i := 0; i < bindings; i++ {
		// One cluster each that a terminating Work blocks (for half of them for longer than
		// StuckWorkWarningAfter), and two names no cluster can have.
		rb := seedBinding(blockedCluster(i), fmt.Sprintf("Bad_Name_%d", i), strings.Repeat("long", 80)+fmt.Sprint(i))
		rb.Name = key(i).Name
		old := terminatingWork(blockedCluster(i))
		old.Annotations[workv1alpha2.ResourceBindingNameAnnotation] = rb.Name
		if i%2 == 0 {
			old.DeletionTimestamp = &metav1.Time{Time: time.Now().Add(-10 * time.Minute)}
		}
		objs = append(objs, rb, old)
	}
	// The fake client keeps a deletionTimestamp only of objects it starts with.
	h := newHarness(t, interceptor.Funcs{}, objs...)
	gaugeBefore := testutil.CollectAndCount(blockedBindingsGauge)
	failuresBefore := testutil.CollectAndCount(clusterSyncFailures)
	reconcile := func(i int) {
		t.Helper()
		if _, err := h.r.Reconcile(ctx, ctrl.Request{NamespacedName: key(i)}); err != nil {
			t.Fatalf("binding %d: %v", i, err)
		}
		h.events() // the fake recorder blocks once full
	}
	for i := 0; i < bindings; i++ {
		reconcile(i)
	}
	if got := len(h.r.deletionWaits.byCluster); got != bindings {
		t.Fatalf("%d clusters tracked as blocking, want %d", got, bindings)
	}
	if got := len(h.r.stuck.warned); got != bindings/2 {
		t.Fatalf("%d bindings with stuck warnings, want %d", got, bindings/2)
	}

	// Everything goes: the bindings, their Works once the execution side lets them go,
	// and the blocked clusters.
	for i := 0; i < bindings; i++ {
		rb := &workv1alpha2.ResourceBinding{}
		if err := h.client.Get(ctx, key(i), rb); err != nil {
			t.Fatal(err)
		}
		if err := h.client.Delete(ctx, rb); err != nil {
			t.Fatal(err)
		}
		reconcile(i)
		if err := h.client.Get(ctx, key(i), rb); !apierrors.IsNotFound(err) {
			t.Fatalf("binding %d still there: %v", i, err)
		}
	}
	works := &workv1alpha1.WorkList{}
	if err := h.client.List(ctx, works); err != nil {
		t.Fatal(err)
	}
	for i := range works.Items {
		w := &works.Items[i]
		w.Finalizers = nil
		if err := h.client.Update(ctx, w); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	for i := 0; i < bindings; i++ {
		reconcile(i) // the binding's deletion event: reconcileGone
	}
	clusterGone := forgetDeletedClusters()
	for i := 0; i < bindings; i++ {
		cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: blockedCluster(i)}}
		clusterGone.Delete(ctx, event.DeleteEvent{Object: cluster}, nil)
	}

	if n := len(h.r.deletionWaits.byCluster); n != 0 {
		t.Errorf("%d clusters still tracked as blocking after everything went, want 0", n)
	}
	if n := len(h.r.stuck.warned); n != 0 {
		t.Errorf("%d deleted bindings still have stuck warnings remembered, want 0", n)
	}
	if n := testutil.CollectAndCount(blockedBindingsGauge); n != gaugeBefore {
		t.Errorf("blocked_bindings has %d series after everything went, want %d as before", n, gaugeBefore)
	}
	// At most one new series: {cluster="<invalid>", reason="RenderFailed"} for all the
	// names no cluster can have.
	if n := testutil.CollectAndCount(clusterSyncFailures); n > failuresBefore+1 {
		t.Errorf("cluster_sync_failures_total has %d series after %d bindings came and went, want at most %d",
			n, bindings, failuresBefore+1)
	}
	if got := testutil.ToFloat64(clusterSyncFailures.WithLabelValues(invalidClusterLabel, workapply.ReasonRenderFailed)); got < 2*bindings {
		t.Errorf("failures counted under %q = %v, want at least %d", invalidClusterLabel, got, 2*bindings)
	}
}
