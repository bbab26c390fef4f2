// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
)

// DefaultTimeout bounds a call to a webhook without timeoutSeconds. Karmada documents 10s
// but sets nothing; its calls then end at its webhook client's own limit, 30s, and so do
// ours.
const DefaultTimeout = 30 * time.Second

// maxResponseBytes bounds what is read of an answer: a patch of an object etcd could
// store, with room to spare.
const maxResponseBytes = 16 << 20

// ConfigurationLister returns the ResourceInterpreterWebhookConfigurations, from a cache.
// The caller must not modify them.
type ConfigurationLister interface {
	WebhookConfigurations(ctx context.Context) ([]configv1alpha1.ResourceInterpreterWebhookConfiguration, error)
}

// Reviser is the webhook step of ReviseReplica.
type Reviser struct {
	configs ConfigurationLister
	clients clients
	newUID  func() types.UID
}

// NewReviser returns a Reviser that calls the webhooks configs lists.
func NewReviser(configs ConfigurationLister) *Reviser {
	return &Reviser{configs: configs, newUID: uuid.NewUUID}
}

// Error is the failure of one webhook call.
type Error struct {
	Configuration string
	Webhook       string
	Err           error
}

// Hook names the webhook.
func (e *Error) Hook() string {
	return fmt.Sprintf("webhook %q of ResourceInterpreterWebhookConfiguration %q", e.Webhook, e.Configuration)
}

func (e *Error) Error() string { return e.Hook() + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ReviseReplica asks the first webhook that handles ReviseReplica for obj's kind to set its
// replicas, and applies its patch to a copy of obj. handled is false when no webhook
// handles the kind; then obj is returned as it is. obj is not modified.
func (r *Reviser) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, bool, error) {
	const op = configv1alpha1.InterpreterOperationReviseReplica
	configs, err := r.configs.WebhookConfigurations(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("listing the ResourceInterpreterWebhookConfigurations: %w", err)
	}
	hook, ok := FirstHook(configs, obj.GroupVersionKind(), op)
	if !ok {
		return obj, false, nil
	}
	revised, err := r.call(ctx, hook, op, obj, replicas)
	if err != nil {
		return nil, true, &Error{Configuration: hook.Configuration, Webhook: hook.Name, Err: err}
	}
	return revised, true, nil
}

func (r *Reviser) call(ctx context.Context, hook Hook, op configv1alpha1.InterpreterOperation, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	if !slices.Contains(hook.InterpreterContextVersions, ContextVersion) {
		return nil, fmt.Errorf("the webhook accepts no ResourceInterpreterContext version known (%s)", ContextVersion)
	}
	if replicas < 0 || replicas > math.MaxInt32 {
		return nil, fmt.Errorf("replicas %d do not fit the request", replicas)
	}
	desired := int32(replicas)
	raw, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	gvk := obj.GroupVersionKind()
	uid := r.newUID()
	body, err := json.Marshal(Context{TypeMeta: contextTypeMeta, Request: &Request{
		UID: uid, Kind: metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Name: obj.GetName(), Namespace: obj.GetNamespace(), Operation: op, Object: raw, DesiredReplicas: &desired,
	}})
	if err != nil {
		return nil, err
	}
	answer, err := r.post(ctx, hook, body)
	if err != nil {
		return nil, err
	}
	if err := verify(answer, uid); err != nil {
		return nil, fmt.Errorf("received invalid webhook response: %w", err)
	}
	res := answer.Response
	if !res.Successful {
		return nil, fmt.Errorf("webhook call failed, get status code: %d, msg: %s", res.Status.Code, res.Status.Message)
	}
	revised, err := applyPatch(raw, res)
	if err != nil {
		return nil, fmt.Errorf("applying the webhook's patch: %w", err)
	}
	return revised, nil
}

// post sends body to the webhook within its timeout and decodes the answer.
func (r *Reviser) post(ctx context.Context, hook Hook, body []byte) (*Context, error) {
	u, err := endpointURL(hook.ClientConfig)
	if err != nil {
		return nil, err
	}
	hc, err := r.clients.get(hook.ClientConfig)
	if err != nil {
		return nil, err
	}
	timeout := DefaultTimeout
	if hook.TimeoutSeconds != nil && *hook.TimeoutSeconds > 0 {
		timeout = time.Duration(*hook.TimeoutSeconds) * time.Second
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// As Kubernetes' REST client tells a server how long the caller waits.
	u.RawQuery = "timeout=" + timeout.String()
	req, err := http.NewRequestWithContext(callCtx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := hc.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("no answer within the webhook's timeout of %s: %w", timeout, err)
		}
		return nil, fmt.Errorf("failed to call webhook: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the webhook's answer: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("the webhook answered HTTP %d: %s", resp.StatusCode, snippet(data))
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("the webhook's answer is over %d bytes", maxResponseBytes)
	}
	answer := &Context{}
	if err := json.Unmarshal(data, answer); err != nil {
		return nil, fmt.Errorf("decoding the webhook's answer: %w", err)
	}
	return answer, nil
}

// verify checks an answer as Karmada does before it uses one.
func verify(answer *Context, uid types.UID) error {
	if (answer.APIVersion != "" && answer.APIVersion != contextTypeMeta.APIVersion) || (answer.Kind != "" && answer.Kind != contextTypeMeta.Kind) {
		return fmt.Errorf("unexpected response type %s %s", answer.APIVersion, answer.Kind)
	}
	res := answer.Response
	switch {
	case res == nil:
		return errors.New("webhook response was absent")
	case res.UID != uid:
		return fmt.Errorf("expected response.uid %q, got %q", uid, res.UID)
	case !res.Successful:
		if res.Status == nil {
			return errors.New("webhook require response.status when response.successful is false")
		}
		return nil
	case len(res.Patch) == 0 && res.PatchType == nil:
		return nil
	case res.PatchType == nil:
		return errors.New("webhook returned nil response.patchType")
	case len(res.Patch) == 0:
		return errors.New("webhook returned empty response.patch")
	case *res.PatchType != PatchTypeJSONPatch:
		return fmt.Errorf("webhook returned invalid response.patchType of %q", *res.PatchType)
	}
	return nil
}

// snippet is the start of a body, for an error message.
func snippet(data []byte) string {
	const max = 256
	s := string(bytes.TrimSpace(data))
	if len(s) > max {
		s = s[:max] + "..."
	}
	if s == "" {
		return "(no body)"
	}
	return s
}
