// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/binding-controller/binding-controller/internal/testenv/selfsigned"
	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
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
	return &interpreterHarness{client: cl, recorder: rec, r: NewReconciler(Config{
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
	if !isParked(result, err) {
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

// A script past one of the sandbox's bounds (here the length of a string: a bound no
// busy machine can turn into the time limit, which is transient) fails the same way on
// every run: the binding is parked, as for a broken script, not retried, and its
// condition names the customization and the bound.
func TestAScriptPastItsBoundsIsParked(t *testing.T) {
	h := newInterpreterHarness(t, queueTemplate(), queueBinding(),
		queueCustomization("queue-replicas", `function ReviseReplica(obj, n) local s = "x" while true do s = s .. s end end`))
	if res, err := h.reconcile(t); !isParked(res, err) {
		t.Fatalf("result %+v, err %v; want the binding parked (a terminal error, no requeue)", res, err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := h.client.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "jobs-queue"}, rb); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.ConditionWorksSynced)
	if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, `ResourceInterpreterCustomization "queue-replicas"`) ||
		!strings.Contains(cond.Message, "would build a string of 2097152 bytes, longer than 1048576") {
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
	r := NewReconciler(Config{Client: cl, Kind: render.ResourceBindingKind, Served: ServedAPIs{Customizations: true}})
	got := r.bindingsInterpretedBy(context.Background(), queueCustomization("queue-replicas", "x"))
	if len(got) != 1 || got[0].Name != "jobs-queue" {
		t.Errorf("requests %v, want only default/jobs-queue", got)
	}
}

func webhookConfiguration(name string, rules ...configv1alpha1.RuleWithOperations) *configv1alpha1.ResourceInterpreterWebhookConfiguration {
	return &configv1alpha1.ResourceInterpreterWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name: "size.example.io", Rules: rules, TimeoutSeconds: ptr.To[int32](1), InterpreterContextVersions: []string{"v1alpha1"},
		}},
	}
}

func reviseRule(groups, versions, kinds []string, ops ...configv1alpha1.InterpreterOperation) configv1alpha1.RuleWithOperations {
	if len(ops) == 0 {
		ops = []configv1alpha1.InterpreterOperation{configv1alpha1.InterpreterOperationReviseReplica}
	}
	return configv1alpha1.RuleWithOperations{Operations: ops, Rule: configv1alpha1.Rule{APIGroups: groups, APIVersions: versions, Kinds: kinds}}
}

// A webhook configuration's change re-syncs the bindings of the kinds its ReviseReplica
// rules match: by index when they name kinds, by matching every binding when a "*" does.
func TestAWebhookConfigurationMapsToTheBindingsOfTheKindsItRevises(t *testing.T) {
	cl := fake.NewClientBuilder().WithScheme(testScheme(t)).WithRESTMapper(meta.NewDefaultRESTMapper(nil)).
		WithObjects(queueBinding(), seedBinding("member1")).
		WithIndex(&workv1alpha2.ResourceBinding{}, bindingByTemplateKindIndex, func(obj client.Object) []string {
			ref := obj.(*workv1alpha2.ResourceBinding).Spec.Resource
			return []string{kindKey(ref.APIVersion, ref.Kind)}
		}).Build()
	r := NewReconciler(Config{Client: cl, Kind: render.ResourceBindingKind, Served: ServedAPIs{Webhooks: true}})
	s := func(v ...string) []string { return v }
	for _, c := range []struct {
		name string
		rule configv1alpha1.RuleWithOperations
		want []string
	}{
		{"exact", reviseRule(s("example.io"), s("v1"), s("Queue")), s("jobs-queue")},
		{"any kind of a group", reviseRule(s("example.io"), s("*"), s("*")), s("jobs-queue")},
		{"any kind at all", reviseRule(s("*"), s("*"), s("*"), "*"), s("jobs-queue", "nginx-deployment")},
		{"another operation", reviseRule(s("*"), s("*"), s("*"), configv1alpha1.InterpreterOperationInterpretHealth), nil},
		{"another version", reviseRule(s("example.io"), s("v2"), s("Queue")), nil},
	} {
		var got []string
		for _, req := range r.bindingsRevisedByWebhooks(context.Background(), webhookConfiguration("hooks", c.rule)) {
			got = append(got, req.Name)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: requests %v, want %v", c.name, got, c.want)
		}
	}
}

// A webhook that fails for one cluster fails that cluster only, naming the webhook, with
// reason InterpreterFailed; the sync is returned for a retry, since the webhook may answer
// next time without any object changing.
func TestAFailingWebhookFailsOnlyItsClusterAndIsRetried(t *testing.T) {
	ca, err := selfsigned.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.StartServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var in struct {
			Request struct {
				UID      string `json:"uid"`
				Replicas int32  `json:"replicas"`
			} `json:"request"`
		}
		_ = json.Unmarshal(raw, &in)
		if in.Request.Replicas == 5 {
			http.Error(w, "five is too many", http.StatusInternalServerError)
			return
		}
		patch, _ := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec/size", "value": in.Request.Replicas}})
		_ = json.NewEncoder(w).Encode(map[string]any{"response": map[string]any{
			"uid": in.Request.UID, "successful": true, "patchType": "JSONPatch", "patch": patch}})
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := webhookConfiguration("queue-hooks", reviseRule([]string{"example.io"}, []string{"v1"}, []string{"Queue"}))
	cfg.Webhooks[0].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/revise"), CABundle: ca.PEM}

	h := newInterpreterHarness(t, queueTemplate(), queueBinding(), cfg)
	h.r.Served.Webhooks = true
	h.r.Interpreter = newInterpreter(h.client, ServedAPIs{Webhooks: true})
	before := testutil.ToFloat64(clusterSyncFailures.WithLabelValues("member2", interpreter.Reason))
	_, err = h.reconcile(t)
	hook := `webhook "size.example.io" of ResourceInterpreterWebhookConfiguration "queue-hooks"`
	if err == nil || !strings.Contains(err.Error(), hook) {
		t.Fatalf("err %v, want the webhook's failure returned for a retry", err)
	}
	if got := h.size(t, "member1"); got != 4 {
		t.Errorf("member1 size %d, want 4", got)
	}
	var failed string
	for len(h.recorder.Events) > 0 {
		if e := <-h.recorder.Events; strings.Contains(e, ReasonSyncWorkFailed) {
			failed = e
		}
	}
	for _, want := range []string{"cluster member2", "ReviseReplica", hook, "HTTP 500", "five is too many"} {
		if !strings.Contains(failed, want) {
			t.Errorf("SyncWorkFailed event %q does not say %q", failed, want)
		}
	}
	if got := testutil.ToFloat64(clusterSyncFailures.WithLabelValues("member2", interpreter.Reason)) - before; got != 1 {
		t.Errorf("InterpreterFailed failures of member2 rose by %v, want 1", got)
	}
}

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
	if res, err := live.r.Reconcile(context.Background(), request()); !isParked(res, err) {
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
	if !isParked(res, err) {
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
