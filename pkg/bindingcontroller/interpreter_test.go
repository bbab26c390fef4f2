// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

var queueGVK = schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Queue"}

func queueTemplate() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "jobs", "namespace": "default", "uid": "uid-jobs"},
		"spec":     map[string]any{"size": int64(9)},
	}}
	u.SetGroupVersionKind(queueGVK)
	return u
}

func queueBinding() *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "jobs-queue", Namespace: "default",
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-q"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "example.io/v1", Kind: "Queue", Namespace: "default", Name: "jobs"},
			Replicas: 9,
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 4}, {Name: "member2", Replicas: 5}},
		},
	}
}

func queueCustomization(name, lua string) *configv1alpha1.ResourceInterpreterCustomization {
	c := &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: name}}
	c.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "example.io/v1", Kind: "Queue"}
	c.Spec.Customizations.ReplicaRevision = &configv1alpha1.ReplicaRevision{LuaScript: lua}
	return c
}

type interpreterHarness struct {
	client   client.Client
	recorder *record.FakeRecorder
	r        *Reconciler
}

func newInterpreterHarness(t *testing.T, objs ...client.Object) *interpreterHarness {
	t.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(queueGVK, meta.RESTScopeNamespace)
	cl := fake.NewClientBuilder().WithScheme(testScheme(t)).WithRESTMapper(mapper).
		WithObjects(objs...).
		WithStatusSubresource(&workv1alpha2.ResourceBinding{}).
		WithIndex(workapply.WorkMetadata(), workByBindingIndex, indexWorkByBinding).
		WithIndex(&configv1alpha1.ResourceInterpreterCustomization{}, customizationByTargetIndex, func(obj client.Object) []string {
			t := obj.(*configv1alpha1.ResourceInterpreterCustomization).Spec.Target
			return []string{kindKey(t.APIVersion, t.Kind)}
		}).Build()
	rec := record.NewFakeRecorder(100)
	return &interpreterHarness{client: cl, recorder: rec, r: NewReconciler(Reconciler{
		Client: cl, APIReader: cl, Recorder: rec, Kind: render.ResourceBindingKind, ClusterSyncConcurrency: 4,
		Served: ServedAPIs{Customizations: true}, Interpreter: newInterpreter(cl, ServedAPIs{Customizations: true}),
	})}
}

func (h *interpreterHarness) reconcile(t *testing.T) (ctrl.Result, error) {
	t.Helper()
	return h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "jobs-queue"}})
}

func (h *interpreterHarness) size(t *testing.T, cluster string) int64 {
	t.Helper()
	works := &workv1alpha1.WorkList{}
	if err := h.client.List(context.Background(), works, client.InNamespace("karmada-es-"+cluster)); err != nil {
		t.Fatal(err)
	}
	if len(works.Items) != 1 {
		t.Fatalf("cluster %s holds %d Works, want 1", cluster, len(works.Items))
	}
	var obj map[string]any
	if err := json.Unmarshal(works.Items[0].Spec.Workload.Manifests[0].Raw, &obj); err != nil {
		t.Fatal(err)
	}
	v, _, _ := unstructured.NestedFieldNoCopy(obj, "spec", "size")
	return int64(v.(float64))
}

// A kind revised by a customization gets each cluster's replicas: 4 and 5 of 9.
func TestACustomizationRevisesEachClustersReplicas(t *testing.T) {
	h := newInterpreterHarness(t, queueTemplate(), queueBinding(),
		queueCustomization("queue-replicas", `function ReviseReplica(obj, n) obj.spec.size = n return obj end`))
	if _, err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := []int64{h.size(t, "member1"), h.size(t, "member2")}; got[0] != 4 || got[1] != 5 {
		t.Errorf("sizes %v, want [4 5]", got)
	}
}

// A script that fails for one cluster fails that cluster only, with an error naming the
// customization, the operation and the cluster, in the event, the condition and the
// metrics (reason InterpreterFailed). It is bad input: parked, not retried.
func TestABrokenScriptFailsOnlyItsCluster(t *testing.T) {
	h := newInterpreterHarness(t, queueTemplate(), queueBinding(), queueCustomization("queue-replicas", `
function ReviseReplica(obj, n)
  if n == 5 then error("five is too many") end
  obj.spec.size = n
  return obj
end`))
	before := testutil.ToFloat64(clusterSyncFailures.WithLabelValues("member2", interpreter.Reason))
	result, err := h.reconcile(t)
	if err != nil || result.RequeueAfter != 0 {
		t.Fatalf("result %+v, err %v: a broken script is parked until its customization or the binding changes", result, err)
	}
	if got := h.size(t, "member1"); got != 4 {
		t.Errorf("member1 size %d, want 4", got)
	}
	works := &workv1alpha1.WorkList{}
	if err := h.client.List(context.Background(), works, client.InNamespace("karmada-es-member2")); err != nil || len(works.Items) != 0 {
		t.Fatalf("member2 holds %d Works (err %v), want none", len(works.Items), err)
	}
	want := []string{"member2", "ReviseReplica", `ResourceInterpreterCustomization "queue-replicas"`, "five is too many"}
	var failedEvents []string
	for len(h.recorder.Events) > 0 {
		if e := <-h.recorder.Events; strings.Contains(e, ReasonSyncWorkFailed) {
			failedEvents = append(failedEvents, e)
		}
	}
	if len(failedEvents) == 0 {
		t.Fatal("no SyncWorkFailed event")
	}
	for _, w := range want {
		if !strings.Contains(failedEvents[0], w) {
			t.Errorf("event %q does not name %q", failedEvents[0], w)
		}
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := h.client.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "jobs-queue"}, rb); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.ConditionWorksSynced)
	if cond == nil || cond.Reason != ReasonPartiallySynced || !strings.Contains(cond.Message, `ResourceInterpreterCustomization "queue-replicas"`) {
		t.Errorf("WorksSynced condition %+v", cond)
	}
	if got := testutil.ToFloat64(clusterSyncFailures.WithLabelValues("member2", interpreter.Reason)) - before; got != 1 {
		t.Errorf("InterpreterFailed failures of member2 rose by %v, want 1", got)
	}
}

// A script past one of the sandbox's bounds (here ten million instructions) fails the
// same way on every run: the binding is parked, as for a broken script, not retried, and
// its condition names the customization and the bound.
func TestAScriptPastItsBoundsIsParked(t *testing.T) {
	h := newInterpreterHarness(t, queueTemplate(), queueBinding(),
		queueCustomization("queue-replicas", `function ReviseReplica(obj, n) while true do end end`))
	if res, err := h.reconcile(t); err != nil || !res.IsZero() {
		t.Fatalf("result %+v, err %v; want the binding parked (no error, no requeue)", res, err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := h.client.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "jobs-queue"}, rb); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.ConditionWorksSynced)
	if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, `ResourceInterpreterCustomization "queue-replicas"`) ||
		!strings.Contains(cond.Message, "it ran more than 10000000 instructions") {
		t.Errorf("WorksSynced condition %+v, want it to name the customization and the bound", cond)
	}
}

// A customization's change re-syncs the bindings of its target kind, found by index.
func TestACustomizationMapsToTheBindingsOfItsKind(t *testing.T) {
	other := seedBinding("member1")
	mapper := meta.NewDefaultRESTMapper(nil)
	cl := fake.NewClientBuilder().WithScheme(testScheme(t)).WithRESTMapper(mapper).WithObjects(queueBinding(), other).
		WithIndex(&workv1alpha2.ResourceBinding{}, bindingByTemplateKindIndex, func(obj client.Object) []string {
			ref := obj.(*workv1alpha2.ResourceBinding).Spec.Resource
			return []string{kindKey(ref.APIVersion, ref.Kind)}
		}).Build()
	r := NewReconciler(Reconciler{Client: cl, Kind: render.ResourceBindingKind, Served: ServedAPIs{Customizations: true}})
	got := r.bindingsInterpretedBy(context.Background(), queueCustomization("queue-replicas", "x"))
	if len(got) != 1 || got[0].Name != "jobs-queue" {
		t.Errorf("requests %v, want only default/jobs-queue", got)
	}
}
