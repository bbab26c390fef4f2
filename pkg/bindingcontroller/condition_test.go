// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

func TestWorksSyncedTrueKeepsOtherConditions(t *testing.T) {
	rb := seedBinding("member1", "member2")
	scheduled := metav1.Condition{Type: "Scheduled", Status: metav1.ConditionTrue, Reason: "Success",
		Message: "Binding has been scheduled successfully.", LastTransitionTime: metav1.NewTime(time.Unix(1700000000, 0))}
	rb.Status.Conditions = []metav1.Condition{scheduled}
	rb.Generation = 4
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), rb)
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	cond := h.worksSynced()
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != ReasonSynced ||
		cond.Message != "2/2 clusters synced" || cond.ObservedGeneration != 4 {
		t.Fatalf("WorksSynced = %+v", cond)
	}
	got := &workv1alpha2.ResourceBinding{}
	_ = h.client.Get(context.Background(), client.ObjectKeyFromObject(rb), got)
	if len(got.Status.Conditions) != 2 || !got.Status.Conditions[0].LastTransitionTime.Equal(&scheduled.LastTransitionTime) ||
		got.Status.Conditions[0].Message != scheduled.Message {
		t.Fatalf("other conditions changed: %+v", got.Status.Conditions)
	}
}

func TestConditionIsNotRewrittenWhenUnchanged(t *testing.T) {
	statusWrites := 0
	h := newHarness(t, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			statusWrites++
			return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}, seedDeployment(), seedBinding("member1"))
	for i := 0; i < 3; i++ {
		if err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
	}
	if statusWrites != 1 {
		t.Fatalf("status written %d times over 3 identical syncs, want 1", statusWrites)
	}
}

func TestConditionMessageIsBoundedAndOrderedByCluster(t *testing.T) {
	var results []workapply.Result
	for i := 199; i >= 0; i-- {
		c := fmt.Sprintf("member%03d", i)
		results = append(results, workapply.Result{Cluster: c, Outcome: workapply.Failed, Err: fmt.Errorf("cluster %s: boom", c)})
	}
	cond := worksSynced(len(results), results)
	if len(cond.Message) > maxConditionMessage {
		t.Fatalf("message is %d bytes, want at most %d", len(cond.Message), maxConditionMessage)
	}
	if !strings.HasPrefix(cond.Message, "0/200 clusters synced; member000: boom; member001: boom") ||
		!strings.Contains(cond.Message, " more") || cond.Reason != ReasonSyncFailed {
		t.Fatalf("condition %+v", cond)
	}
}

func TestBlockedGaugeRisesAndFalls(t *testing.T) {
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1", "member2"), terminatingWork("member1"))
	if _, err := h.r.Reconcile(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(blockedBindingsGauge.WithLabelValues("member1")); got != 1 {
		t.Fatalf("blocked bindings on member1 = %v, want 1", got)
	}
	// The execution side lets the old Work go.
	old := &workv1alpha1.Work{}
	_ = h.client.Get(context.Background(), types.NamespacedName{Namespace: "karmada-es-member1", Name: seedWorkName}, old)
	old.Finalizers = nil
	if err := h.client.Update(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	if _, err := h.r.Reconcile(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(blockedBindingsGauge.WithLabelValues("member1")); got != 0 {
		t.Fatalf("blocked bindings on member1 = %v after unblocking, want 0", got)
	}
	if !h.liveWork("member1") {
		t.Fatal("member1 did not get its Work once unblocked")
	}
}

func TestStuckWorkIsReportedOnce(t *testing.T) {
	old := terminatingWork("member1")
	old.DeletionTimestamp = &metav1.Time{Time: time.Now().Add(-7 * time.Minute)}
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1", "member2"), old)
	stuck := 0
	for i := 0; i < 3; i++ {
		if _, err := h.r.Reconcile(context.Background(), request()); err != nil {
			t.Fatal(err)
		}
		for _, e := range h.events() {
			if strings.HasPrefix(e, "Warning WorkStuckDeleting") {
				stuck++
				for _, part := range []string{"work karmada-es-member1/nginx-687f7fb96f has been terminating for 7m",
					"finalizers still holding it: [karmada.io/execution-controller]"} {
					if !strings.Contains(e, part) {
						t.Errorf("event %q lacks %q", e, part)
					}
				}
			}
		}
	}
	if stuck != 1 {
		t.Fatalf("%d WorkStuckDeleting events over 3 syncs, want 1", stuck)
	}
}

func TestStuckWarningIsScheduledWhenDueBeforeTheRecheck(t *testing.T) {
	old := terminatingWork("member1")
	old.DeletionTimestamp = &metav1.Time{Time: time.Now().Add(-4*time.Minute - 50*time.Second)}
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1"), old)
	res, err := h.r.Reconcile(context.Background(), request())
	if err != nil || res.RequeueAfter <= 0 || res.RequeueAfter > 11*time.Second {
		t.Fatalf("Reconcile = %v, %v; want a recheck when the 5m warning falls due (~10s)", res, err)
	}
}

func TestOtherFailuresKeepTheBackoff(t *testing.T) {
	h := newHarness(t, rejectCreatesIn("karmada-es-member2", errors.New("boom")),
		seedDeployment(), seedBinding("member1", "member2"), terminatingWork("member1"))
	res, err := h.r.Reconcile(context.Background(), request())
	if err == nil || res.RequeueAfter != 0 {
		t.Fatalf("Reconcile = %v, %v; a failure other than a blocked cluster must return its error for backoff", res, err)
	}
}

func request() ctrl.Request {
	return ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}}
}

func TestDirectlyPurgedClusterIsEmptiedBeforeAnyNewWork(t *testing.T) {
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member2"))
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	_ = h.client.Get(context.Background(), request().NamespacedName, rb)
	rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}}
	rb.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "member2", PurgeMode: "Directly"}}
	if err := h.client.Update(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	res, err := h.r.Reconcile(context.Background(), request())
	if err != nil || res.RequeueAfter != 5*time.Second {
		t.Fatalf("Reconcile = %v, %v; want a 5s recheck while the purged Work goes", res, err)
	}
	if h.liveWork("member2") || h.liveWork("member1") {
		t.Fatalf("member2 live %v, member1 live %v: the purged Work must be deleted and no new Work written yet",
			h.liveWork("member2"), h.liveWork("member1"))
	}
	if cond := h.worksSynced(); cond.Reason != ReasonWaitingForEviction || !strings.HasSuffix(cond.Message, ": member2") {
		t.Fatalf("WorksSynced = %+v", cond)
	}
	// The execution side lets member2's Work go; now member1 gets its Work.
	old := &workv1alpha1.Work{}
	_ = h.client.Get(context.Background(), types.NamespacedName{Namespace: "karmada-es-member2", Name: seedWorkName}, old)
	old.Finalizers = nil
	if err := h.client.Update(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if !h.liveWork("member1") {
		t.Fatal("member1 got no Work once the purge finished")
	}
}

func TestWithoutTheWorkWatchABlockedClusterBacksOff(t *testing.T) {
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1", "member2"), terminatingWork("member1"))
	h.r.watchesWorks = false
	res, err := h.r.Reconcile(context.Background(), request())
	if err == nil || res.RequeueAfter != 0 {
		t.Fatalf("Reconcile = %v, %v; with no Work event to wait for, a blocked cluster must back off", res, err)
	}
}
