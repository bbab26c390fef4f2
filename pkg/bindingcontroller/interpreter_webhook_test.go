// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/test/selfsigned"
)

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
	r := NewReconciler(Reconciler{Client: cl, Kind: render.ResourceBindingKind, Served: ServedAPIs{Webhooks: true}})
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
