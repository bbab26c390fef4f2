// SPDX-License-Identifier: Apache-2.0

// Package workwebhook stands in for karmada-webhook's mutation of Works, so that tests,
// 'make run' and the bench can put the binding controller behind what a real Karmada
// control plane does to every Work it writes. It is test infrastructure: product code
// never imports it.
//
// On every CREATE and UPDATE of a Work, as karmada-webhook (pkg/webhook/work) does:
//   - the Work gets the label work.karmada.io/permanent-id, a random UUID, when it has none;
//   - each manifest is pruned as rendering prunes it;
//   - unless the Work's label propagation.karmada.io/instruction is "suppressed", each
//     manifest gets the Work's permanent-id label, and its managed-labels and
//     managed-annotations bookkeeping annotations are recorded again.
//
// Use with envtest: put Configuration() in WebhookInstallOptions.MutatingWebhooks before
// the environment starts (envtest makes a CA, serving certificates and a port, and points
// the configuration at them), then Serve(&env.WebhookInstallOptions) once it has.
package workwebhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/render"
)

// Path is where the webhook is served, as karmada-webhook serves it.
const Path = "mutate-work"

// ConfigurationName is the name of the MutatingWebhookConfiguration.
const ConfigurationName = "karmada-webhook-work"

// Configuration returns the MutatingWebhookConfiguration of karmada-webhook's Work rule:
// CREATE and UPDATE of works.work.karmada.io, failing closed. Its client config names a
// service path only; envtest turns it into a URL of its local serving address and sets
// the CA bundle.
func Configuration() *admissionv1.MutatingWebhookConfiguration {
	return &admissionv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName},
		Webhooks: []admissionv1.MutatingWebhook{{
			Name: "work.karmada.io",
			Rules: []admissionv1.RuleWithOperations{{
				Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
				Rule: admissionv1.Rule{
					APIGroups:   []string{workv1alpha1.GroupVersion.Group},
					APIVersions: []string{"*"},
					Resources:   []string{workv1alpha1.ResourcePluralWork},
					Scope:       ptr.To(admissionv1.NamespacedScope),
				},
			}},
			ClientConfig: admissionv1.WebhookClientConfig{
				Service: &admissionv1.ServiceReference{Namespace: "karmada-system", Name: "karmada-webhook", Path: ptr.To(Path)},
			},
			FailurePolicy:           ptr.To(admissionv1.Fail),
			SideEffects:             ptr.To(admissionv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](3),
		}},
	}
}

// Mutate does to work what karmada-webhook does to a Work it admits.
func Mutate(work *workv1alpha1.Work) error {
	if work.Labels[workv1alpha2.WorkPermanentIDLabel] == "" {
		if work.Labels == nil {
			work.Labels = map[string]string{}
		}
		work.Labels[workv1alpha2.WorkPermanentIDLabel] = string(uuid.NewUUID())
	}
	id := work.Labels[workv1alpha2.WorkPermanentIDLabel]
	labelManifests := work.Labels[workv1alpha1.PropagationInstructionLabel] != workv1alpha1.PropagationInstructionSuppressed
	for i := range work.Spec.Workload.Manifests {
		workload := &unstructured.Unstructured{}
		if err := workload.UnmarshalJSON(work.Spec.Workload.Manifests[i].Raw); err != nil {
			return fmt.Errorf("manifest %d: %w", i, err)
		}
		if err := render.PruneWorkload(workload); err != nil {
			return fmt.Errorf("manifest %d: %w", i, err)
		}
		if labelManifests {
			labels := workload.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[workv1alpha2.WorkPermanentIDLabel] = id
			workload.SetLabels(labels)
			render.RecordManagedKeys(workload)
		}
		raw, err := workload.MarshalJSON()
		if err != nil {
			return fmt.Errorf("manifest %d: %w", i, err)
		}
		work.Spec.Workload.Manifests[i] = workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
	}
	return nil
}

// Handler answers admission requests for Works with Mutate's changes as a JSON patch.
type Handler struct{}

var _ admission.Handler = Handler{}

// Handle mutates the Work of one request.
func (Handler) Handle(_ context.Context, req admission.Request) admission.Response {
	work := &workv1alpha1.Work{}
	if err := json.Unmarshal(req.Object.Raw, work); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if err := Mutate(work); err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	mutated, err := json.Marshal(work)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, mutated)
}

// Server is the running webhook.
type Server struct {
	cancel context.CancelFunc
	done   chan error
}

// Serve serves the webhook over HTTPS on the address and with the certificates envtest
// allotted in opts, and returns once it accepts connections.
func Serve(opts *envtest.WebhookInstallOptions) (*Server, error) {
	srv := webhook.NewServer(webhook.Options{
		Host:    opts.LocalServingHost,
		Port:    opts.LocalServingPort,
		CertDir: opts.LocalServingCertDir,
	})
	srv.Register("/"+Path, &webhook.Admission{Handler: Handler{}})
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- srv.Start(ctx) }()
	started := srv.StartedChecker()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := started(nil)
		if err == nil {
			return s, nil
		}
		select {
		case serveErr := <-s.done:
			cancel()
			return nil, fmt.Errorf("serving the Work webhook: %w", errors.Join(serveErr, err))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("the Work webhook does not accept connections: %w", err)
		}
	}
}

// Stop stops serving and waits until the server is down.
func (s *Server) Stop() {
	if s == nil || s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done //nolint:errcheck // the server's error on shutdown says nothing
	s.cancel = nil
}
