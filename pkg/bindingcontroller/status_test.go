// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/bindingqueue"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func clusterRoleBinding() (*rbacv1.ClusterRole, *workv1alpha2.ClusterResourceBinding) {
	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "reader", UID: "uid-reader"},
	}
	crb := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader-clusterrole",
			Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "crb-1"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "reader"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}},
		},
	}
	return role, crb
}

// The success event names the binding as current Karmada does (capital R, and no stray
// slash before a cluster-scoped binding's name), on the binding and on its template.
func TestSyncWorkSucceedNamesTheBindingAsKarmadaDoes(t *testing.T) {
	t.Run("ResourceBinding", func(t *testing.T) {
		h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1"))
		if err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
		want := "Normal SyncWorkSucceed Sync work of ResourceBinding(default/nginx-deployment) successful."
		if evs := h.events(); !slices.Equal(evs, []string{want, want}) {
			t.Fatalf("events %q, want %q on the binding and on the template", evs, want)
		}
	})
	t.Run("ClusterResourceBinding", func(t *testing.T) {
		role, crb := clusterRoleBinding()
		h := newHarness(t, interceptor.Funcs{}, role, crb)
		r := NewReconciler(Config{Client: h.client, APIReader: h.client, Recorder: h.recorder, Kind: render.ClusterResourceBindingKind})
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: crb.Name}}); err != nil {
			t.Fatal(err)
		}
		want := "Normal SyncWorkSucceed Sync work of ClusterResourceBinding(reader-clusterrole) successful."
		if evs := h.events(); !slices.Equal(evs, []string{want, want}) {
			t.Fatalf("events %q, want %q on the binding and on the template", evs, want)
		}
	})
}

// A Work the binding no longer needs that cannot be deleted is Karmada's CleanupWorkFailed,
// on the binding alone; it is not a failure to sync the clusters that were synced.
func TestFailedOrphanDeleteIsACleanupWorkFailed(t *testing.T) {
	refuse := false
	h := newHarness(t, interceptor.Funcs{
		Delete: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if refuse && obj.GetNamespace() == "karmada-es-member2" {
				return apierrors.NewForbidden(worksGR, obj.GetName(), errors.New("denied by admission policy"))
			}
			return cl.Delete(ctx, obj, opts...)
		},
	}, seedDeployment(), seedBinding("member1", "member2"))
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	h.events()
	rb := &workv1alpha2.ResourceBinding{}
	if err := h.client.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}, rb); err != nil {
		t.Fatal(err)
	}
	rb.Spec.Clusters = rb.Spec.Clusters[:1]
	if err := h.client.Update(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	refuse = true
	before := karmadaSyncCount(t)
	err := h.reconcile()
	if err == nil {
		t.Fatal("Reconcile succeeded with an orphan left; want the delete retried")
	}
	want := "Warning CleanupWorkFailed " + err.Error()
	if evs := h.events(); !slices.Equal(evs, []string{want}) {
		t.Fatalf("events %q, want only %q (on the binding)", evs, want)
	}
	if after := karmadaSyncCount(t); !maps.Equal(after, before) {
		t.Fatalf("binding_sync_work_duration_seconds went from %v to %v, want unchanged: Karmada stops before the sync when an orphan delete fails",
			before, after)
	}
}

// karmadaSyncCount is how many syncs binding_sync_work_duration_seconds holds, by result.
func karmadaSyncCount(t *testing.T) map[string]uint64 {
	t.Helper()
	count := map[string]uint64{}
	for _, result := range []string{"success", "error"} {
		m := &dto.Metric{}
		if err := karmadaSyncWorkDuration.WithLabelValues(result).(prometheus.Histogram).Write(m); err != nil {
			t.Fatal(err)
		}
		count[result] = m.GetHistogram().GetSampleCount()
	}
	return count
}

func TestKarmadaSyncWorkDurationIsServed(t *testing.T) {
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1"))
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var family *dto.MetricFamily
	for _, f := range families {
		if f.GetName() == "binding_sync_work_duration_seconds" {
			family = f
		}
	}
	if family == nil {
		t.Fatal("binding_sync_work_duration_seconds is not served")
	}
	if family.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("type %v, want a histogram", family.GetType())
	}
	wantHelp := "Duration in seconds to sync works for ResourceBinding and ClusterResourceBinding objects. " +
		"By the result, 'error' means a binding failed to sync works. Otherwise 'success'."
	if family.GetHelp() != wantHelp {
		t.Errorf("help %q, want Karmada's %q", family.GetHelp(), wantHelp)
	}
	wantBuckets := []float64{0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048}
	for _, m := range family.GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		if !slices.Equal(labels, []string{"result=success"}) && !slices.Equal(labels, []string{"result=error"}) {
			t.Errorf("series %v, want only the label result, success or error", labels)
		}
		var buckets []float64
		for _, b := range m.GetHistogram().GetBucket() {
			buckets = append(buckets, b.GetUpperBound())
		}
		if !slices.Equal(buckets, wantBuckets) {
			t.Errorf("buckets %v, want Karmada's %v", buckets, wantBuckets)
		}
	}
}

// binding_sync_work_duration_seconds counts the syncs Karmada counts: those that render
// and write the targets' Works, labelled error when one of them failed; not a template
// that is missing or of a kind the API server does not serve.
func TestKarmadaSyncWorkDurationCountsTheSyncsKarmadaCounts(t *testing.T) {
	unserved := seedBinding("member1")
	unserved.Spec.Resource.APIVersion, unserved.Spec.Resource.Kind = "example.com/v1", "Widget"
	cases := []struct {
		name   string
		objs   []client.Object
		result string // "" when not observed
	}{
		{name: "synced", objs: []client.Object{seedDeployment(), seedBinding("member1", "member2")}, result: "success"},
		{name: "one cluster blocked", objs: []client.Object{seedDeployment(), seedBinding("member1", "member2"), terminatingWork("member1")}, result: "error"},
		{name: "template not found", objs: []client.Object{seedBinding("member1")}},
		{name: "kind not served", objs: []client.Object{unserved}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, interceptor.Funcs{}, tc.objs...)
			before := karmadaSyncCount(t)
			_ = h.reconcile()
			after := karmadaSyncCount(t)
			for _, result := range []string{"success", "error"} {
				want := uint64(0)
				if result == tc.result {
					want = 1
				}
				if got := after[result] - before[result]; got != want {
					t.Errorf("{result=%s} rose by %d, want %d", result, got, want)
				}
			}
		})
	}
}

func imagesPolicy(plaintext ...policyv1alpha1.PlaintextOverrider) *policyv1alpha1.OverridePolicy {
	return &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "images", Namespace: "default"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}},
				Overriders: policyv1alpha1.Overriders{
					ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: "Registry", Operator: "replace", Value: "mirror.example.com"}},
					Plaintext:      plaintext,
				},
			}},
		},
	}
}

// Each policy applied for a cluster is told on the template, in Karmada's words, when the
// Work it shaped is written; a resync that writes nothing tells nothing; a policy that
// fails to apply is told when it fails, and its repeats only spaced out (eventrepeats).
func TestOverridePolicyEvents(t *testing.T) {
	cop := &policyv1alpha1.ClusterOverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "labels"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{
				LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: "add", Value: map[string]string{"team": "web"}}}}}},
		},
	}
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1", "member2"), cop, imagesPolicy())
	h.r.Served.OverridePolicies = true
	h.recorder.IncludeObject = true
	const onTemplate = " involvedObject{kind=Deployment,apiVersion=apps/v1}"
	overrideEvents := func() []string {
		var out []string
		for _, e := range h.events() {
			if !strings.Contains(e, "SyncWork") {
				out = append(out, e)
			}
		}
		slices.Sort(out)
		return out
	}

	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Normal ApplyOverridePolicySucceed Apply cluster override policy(labels) for cluster(member1) succeed." + onTemplate,
		"Normal ApplyOverridePolicySucceed Apply cluster override policy(labels) for cluster(member2) succeed." + onTemplate,
		"Normal ApplyOverridePolicySucceed Apply override policy(default/images) for cluster(member2) succeed." + onTemplate,
	}
	if got := overrideEvents(); !slices.Equal(got, want) {
		t.Fatalf("first sync: events\n%q\nwant\n%q", got, want)
	}

	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := overrideEvents(); len(got) != 0 {
		t.Fatalf("a resync that wrote nothing raised %q", got)
	}

	broken := &policyv1alpha1.OverridePolicy{}
	if err := h.client.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "images"}, broken); err != nil {
		t.Fatal(err)
	}
	broken.Spec = imagesPolicy(policyv1alpha1.PlaintextOverrider{Path: "/spec/nothing/here", Operator: "remove"}).Spec
	if err := h.client.Update(context.Background(), broken); err != nil {
		t.Fatal(err)
	}
	wantFailed := []string{"Warning ApplyOverridePolicyFailed Apply override policy(default/images) for cluster(member2) failed." + onTemplate}
	_ = h.reconcile()
	if got := overrideEvents(); !slices.Equal(got, wantFailed) {
		t.Fatalf("a sync with a broken policy: events\n%q\nwant\n%q", got, wantFailed)
	}
	_ = h.reconcile()
	if got := overrideEvents(); len(got) != 0 {
		t.Fatalf("a second sync at once told the same failure again: %q", got)
	}
}

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

// isParked tells a sync that ended parked: no requeue, and a terminal error, which
// controller-runtime counts and does not retry.
func isParked(res ctrl.Result, err error) bool {
	return res.IsZero() && errors.Is(err, reconcile.TerminalError(nil))
}

// controller-runtime keeps the backoff of an item that ended with a terminal error; the
// Reconciler forgets it, so a parked binding whose input changes and then fails starts
// from the first step again, as after any sync that ended.
func TestAParkedBindingForgetsItsBackoff(t *testing.T) {
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1", "Bad_Cluster"))
	limiter := bindingqueue.NewRateLimiter(bindingqueue.DefaultRateLimiterOptions())
	for range 3 {
		limiter.When(request())
	}
	q := bindingqueue.New("parked-test", limiter, logr.Discard())
	defer q.ShutDown()
	h.r.queue = q
	if n := q.NumRequeues(request()); n != 3 {
		t.Fatalf("%d failures recorded before the sync, want 3", n)
	}
	res, err := h.r.Reconcile(context.Background(), request())
	if !isParked(res, err) {
		t.Fatalf("Reconcile = %v, %v; want parked", res, err)
	}
	if n := q.NumRequeues(request()); n != 0 {
		t.Errorf("%d failures still recorded after the binding was parked, want 0", n)
	}
}
