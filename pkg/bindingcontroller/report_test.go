// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/render"
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
		r := NewReconciler(Reconciler{Client: h.client, APIReader: h.client, Recorder: h.recorder, Kind: render.ClusterResourceBindingKind})
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
// fails to apply is told on every sync it fails.
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
	for sync := 1; sync <= 2; sync++ {
		_ = h.reconcile()
		if got := overrideEvents(); !slices.Equal(got, wantFailed) {
			t.Fatalf("sync %d with a broken policy: events\n%q\nwant\n%q", sync, got, wantFailed)
		}
	}
}
