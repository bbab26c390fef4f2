// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
)

// ContextVersion is the only ResourceInterpreterContext version there is, and the one
// webhooks must list in interpreterContextVersions.
const ContextVersion = "v1alpha1"

// The wire types below are Karmada's ResourceInterpreterContext
// (config.karmada.io/v1alpha1), with the fields ReviseReplica sends and reads. They are
// not an API resource: nothing stores them, so they live here and not in pkg/apis.

// Context is the body of a webhook call and of its answer.
type Context struct {
	metav1.TypeMeta `json:",inline"`
	Request         *Request  `json:"request,omitempty"`
	Response        *Response `json:"response,omitempty"`
}

// Request is what the webhook is asked.
type Request struct {
	// UID pairs the response with the request.
	UID       types.UID                           `json:"uid"`
	Kind      metav1.GroupVersionKind             `json:"kind"`
	Name      string                              `json:"name"`
	Namespace string                              `json:"namespace,omitempty"`
	Operation configv1alpha1.InterpreterOperation `json:"operation"`
	Object    json.RawMessage                     `json:"object,omitempty"`
	// DesiredReplicas is the cluster's replicas, for ReviseReplica. Karmada names it
	// "replicas" on the wire.
	DesiredReplicas *int32 `json:"replicas,omitempty"`
}

// Response is the webhook's answer.
type Response struct {
	UID        types.UID      `json:"uid"`
	Successful bool           `json:"successful"`
	Status     *RequestStatus `json:"status,omitempty"`
	// Patch is the JSON patch (RFC 6902) of the object; base64 on the wire, as any []byte.
	Patch     []byte     `json:"patch,omitempty"`
	PatchType *PatchType `json:"patchType,omitempty"`
}

// RequestStatus says why a request did not succeed.
type RequestStatus struct {
	Message string `json:"message,omitempty"`
	Code    int32  `json:"code,omitempty"`
}

// PatchType is the kind of patch a response carries.
type PatchType string

// PatchTypeJSONPatch is RFC 6902, the only patch type Karmada accepts.
const PatchTypeJSONPatch PatchType = "JSONPatch"

// contextTypeMeta is the apiVersion and kind of every Context sent.
var contextTypeMeta = metav1.TypeMeta{APIVersion: configv1alpha1.GroupVersion.String(), Kind: "ResourceInterpreterContext"}
