// SPDX-License-Identifier: Apache-2.0

package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/binding-controller/binding-controller/internal/testenv/selfsigned"
	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/interpreter/webhook"
)

type staticConfigs []configv1alpha1.ResourceInterpreterWebhookConfiguration

func (s staticConfigs) WebhookConfigurations(context.Context) ([]configv1alpha1.ResourceInterpreterWebhookConfiguration, error) {
	return s, nil
}

func queue(consumers int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "queues.example.io/v1", "kind": "Queue",
		"metadata": map[string]any{"name": "jobs", "namespace": "default"},
		"spec":     map[string]any{"consumers": consumers, "labels": map[string]any{}},
	}}
}

// queueConfig is a configuration whose one webhook revises Queues at url, trusting caBundle.
func queueConfig(url string, caBundle []byte) configv1alpha1.ResourceInterpreterWebhookConfiguration {
	return configv1alpha1.ResourceInterpreterWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "queue-hooks"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name:         "consumers.queues.example.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url), CABundle: caBundle},
			Rules: []configv1alpha1.RuleWithOperations{{
				Operations: []configv1alpha1.InterpreterOperation{configv1alpha1.InterpreterOperationReviseReplica},
				Rule:       configv1alpha1.Rule{APIGroups: []string{"queues.example.io"}, APIVersions: []string{"v1"}, Kinds: []string{"Queue"}},
			}},
			TimeoutSeconds:             ptr.To[int32](1),
			InterpreterContextVersions: []string{"v1beta2", "v1alpha1"},
		}},
	}
}

// server is an HTTPS webhook whose answer answer builds from the request it got; code 0
// is no answer at all.
type server struct {
	*httptest.Server
	ca *selfsigned.CA
	mu sync.Mutex
	// got is the last request: its raw body and query.
	got      map[string]any
	gotQuery string
	gotType  string
}

func newServer(t *testing.T, answer func(req map[string]any) (int, any)) *server {
	t.Helper()
	ca, err := selfsigned.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ca: ca}
	s.Server, err = ca.StartServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req map[string]any
		_ = json.Unmarshal(raw, &req)
		s.mu.Lock()
		s.got, s.gotQuery, s.gotType = req, r.URL.RawQuery, r.Header.Get("Content-Type")
		s.mu.Unlock()
		code, body := answer(req)
		if code == 0 {
			// No answer: hang until the client gives up and closes the connection.
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(body)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// respond answers a request with response, its uid copied over.
func respond(req map[string]any, response map[string]any) map[string]any {
	response["uid"] = req["request"].(map[string]any)["uid"]
	return map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext", "response": response}
}

// setConsumers is a webhook that revises spec.consumers to the desired replicas.
func setConsumers(req map[string]any) (int, any) {
	n := req["request"].(map[string]any)["replicas"]
	patch, _ := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec/consumers", "value": n}})
	return 200, respond(req, map[string]any{"successful": true, "patchType": "JSONPatch", "patch": patch})
}

func TestTheWebhookRevisesReplicasWithAJSONPatch(t *testing.T) {
	srv := newServer(t, setConsumers)
	r := webhook.NewReviser(staticConfigs{queueConfig(srv.URL+"/revise", srv.ca.PEM)})
	in := queue(9)
	before := in.DeepCopy()
	got, handled, err := r.ReviseReplica(context.Background(), in, 4)
	if err != nil || !handled {
		t.Fatalf("handled %v, err %v", handled, err)
	}
	want := queue(4)
	if diff := cmp.Diff(want.Object, got.Object); diff != "" {
		t.Errorf("revised (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before.Object, in.Object); diff != "" {
		t.Errorf("the input was modified:\n%s", diff)
	}

	// The request is Karmada's ResourceInterpreterContext, field for field.
	srv.mu.Lock()
	defer srv.mu.Unlock()
	req := srv.got["request"].(map[string]any)
	if uid, _ := req["uid"].(string); uid == "" {
		t.Errorf("request without a uid: %v", req)
	}
	delete(req, "uid")
	wantBody := map[string]any{
		"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext",
		"request": map[string]any{
			"kind": map[string]any{"group": "queues.example.io", "version": "v1", "kind": "Queue"},
			"name": "jobs", "namespace": "default", "operation": "ReviseReplica", "replicas": float64(4),
			"object": map[string]any{"apiVersion": "queues.example.io/v1", "kind": "Queue",
				"metadata": map[string]any{"name": "jobs", "namespace": "default"},
				"spec":     map[string]any{"consumers": float64(9), "labels": map[string]any{}}},
		},
	}
	if diff := cmp.Diff(wantBody, srv.got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if srv.gotQuery != "timeout=1s" || srv.gotType != "application/json" {
		t.Errorf("query %q content type %q, want timeout=1s and application/json", srv.gotQuery, srv.gotType)
	}
}

func TestASuccessfulAnswerWithoutAPatchLeavesTheObjectAsItIs(t *testing.T) {
	srv := newServer(t, func(req map[string]any) (int, any) {
		return 200, respond(req, map[string]any{"successful": true})
	})
	r := webhook.NewReviser(staticConfigs{queueConfig(srv.URL, srv.ca.PEM)})
	got, handled, err := r.ReviseReplica(context.Background(), queue(9), 4)
	if err != nil || !handled {
		t.Fatalf("handled %v, err %v", handled, err)
	}
	if diff := cmp.Diff(queue(9).Object, got.Object); diff != "" {
		t.Errorf("revised (-want +got):\n%s", diff)
	}
}

func TestKindsNoWebhookHandlesAreLeftToTheNextStep(t *testing.T) {
	srv := newServer(t, setConsumers)
	r := webhook.NewReviser(staticConfigs{queueConfig(srv.URL, srv.ca.PEM)})
	obj := queue(9)
	obj.SetAPIVersion("queues.example.io/v2")
	got, handled, err := r.ReviseReplica(context.Background(), obj, 4)
	if err != nil || handled || got != obj {
		t.Fatalf("handled %v, err %v, same object %v; want unhandled", handled, err, got == obj)
	}
}

func patchAnswer(patchType string, patch string) func(map[string]any) (int, any) {
	return func(req map[string]any) (int, any) {
		res := map[string]any{"successful": true}
		if patchType != "" {
			res["patchType"] = patchType
		}
		if patch != "" {
			res["patch"] = []byte(patch)
		}
		return 200, respond(req, res)
	}
}

// Every way a webhook can fail fails the call with an error that names the webhook.
func TestAFailingWebhookIsAnErrorNamingIt(t *testing.T) {
	cases := []struct {
		name   string
		answer func(map[string]any) (int, any)
		// url overrides the server's URL; caBundle the server's CA.
		url      string
		caBundle []byte
		want     string
	}{
		{name: "not successful", answer: func(req map[string]any) (int, any) {
			return 200, respond(req, map[string]any{"successful": false, "status": map[string]any{"code": 422, "message": "queues cannot shrink"}})
		}, want: "webhook call failed, get status code: 422, msg: queues cannot shrink"},
		{name: "not successful without a status", answer: func(req map[string]any) (int, any) {
			return 200, respond(req, map[string]any{"successful": false})
		}, want: "webhook require response.status when response.successful is false"},
		{name: "another request's uid", answer: func(req map[string]any) (int, any) {
			a := setConsumers
			_, body := a(req)
			body.(map[string]any)["response"].(map[string]any)["uid"] = "someone-else"
			return 200, body
		}, want: `expected response.uid`},
		{name: "no response", answer: func(map[string]any) (int, any) { return 200, map[string]any{} }, want: "webhook response was absent"},
		{name: "HTTP error", answer: func(map[string]any) (int, any) { return 503, map[string]any{"message": "overloaded"} },
			want: `the webhook answered HTTP 503: {"message":"overloaded"}`},
		{name: "patch type other than JSONPatch", answer: patchAnswer("MergePatch", `{"spec":{"consumers":4}}`), want: `invalid response.patchType of "MergePatch"`},
		{name: "patch without a type", answer: patchAnswer("", `[]`), want: "webhook returned nil response.patchType"},
		{name: "type without a patch", answer: patchAnswer("JSONPatch", ""), want: "webhook returned empty response.patch"},
		{name: "patch that is no JSON patch", answer: patchAnswer("JSONPatch", `{"op":"replace"}`), want: "applying the webhook's patch"},
		{name: "patch of a path that is not there", answer: patchAnswer("JSONPatch", `[{"op":"replace","path":"/spec/nothing/here","value":4}]`),
			want: "applying the webhook's patch"},
		{name: "patch that makes it no object", answer: patchAnswer("JSONPatch", `[{"op":"remove","path":"/kind"}]`), want: "applying the webhook's patch"},
		{name: "timeout", answer: func(map[string]any) (int, any) { return 0, nil },
			want: "no answer within the webhook's timeout of 1s"},
		{name: "untrusted certificate", answer: setConsumers, caBundle: mustCA(t).PEM, want: "certificate signed by unknown authority"},
		{name: "no CA bundle", answer: setConsumers, caBundle: []byte{}, want: "certificate signed by unknown authority"},
		{name: "http", answer: setConsumers, url: "http://127.0.0.1:1/revise", want: "is not https"},
		{name: "connection refused", answer: setConsumers, url: "https://127.0.0.1:1/revise", want: "connection refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, c.answer)
			cfg := queueConfig(srv.URL, srv.ca.PEM)
			if c.url != "" {
				cfg.Webhooks[0].ClientConfig.URL = ptr.To(c.url)
			}
			if c.caBundle != nil {
				cfg.Webhooks[0].ClientConfig.CABundle = c.caBundle
			}
			_, handled, err := webhook.NewReviser(staticConfigs{cfg}).ReviseReplica(context.Background(), queue(9), 4)
			var we *webhook.Error
			if !errors.As(err, &we) || !handled {
				t.Fatalf("handled %v, error %v; want a webhook.Error", handled, err)
			}
			for _, want := range []string{`webhook "consumers.queues.example.io" of ResourceInterpreterWebhookConfiguration "queue-hooks"`, c.want} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestAWebhookThatAcceptsNoKnownContextVersionIsNotCalled(t *testing.T) {
	srv := newServer(t, setConsumers)
	cfg := queueConfig(srv.URL, srv.ca.PEM)
	cfg.Webhooks[0].InterpreterContextVersions = []string{"v1"}
	_, _, err := webhook.NewReviser(staticConfigs{cfg}).ReviseReplica(context.Background(), queue(9), 4)
	if err == nil || !strings.Contains(err.Error(), "accepts no ResourceInterpreterContext version known (v1alpha1)") {
		t.Fatalf("error %v", err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.got != nil {
		t.Errorf("the webhook was called")
	}
}

func mustCA(t *testing.T) *selfsigned.CA {
	t.Helper()
	ca, err := selfsigned.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	return ca
}
