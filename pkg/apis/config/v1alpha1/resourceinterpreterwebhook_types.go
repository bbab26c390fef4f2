// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=resourceinterpreterwebhookconfigurations,scope="Cluster",categories={karmada-io}
// +kubebuilder:storageversion

// ResourceInterpreterWebhookConfiguration lists webhooks that interpret resources of the
// kinds their rules match.
type ResourceInterpreterWebhookConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Webhooks are the webhooks and the kinds and operations they handle.
	// +required
	Webhooks []ResourceInterpreterWebhook `json:"webhooks"`
}

// ResourceInterpreterWebhook is one webhook: where it is and what it handles.
type ResourceInterpreterWebhook struct {
	// Name of the webhook, qualified like "replicas.example.io".
	// +required
	Name string `json:"name"`

	// ClientConfig says how to reach the webhook: a URL, or a Service; with the CA
	// bundle that signs its serving certificate.
	// +required
	ClientConfig admissionregistrationv1.WebhookClientConfig `json:"clientConfig"`

	// Rules are the operations and kinds the webhook handles.
	// +optional
	Rules []RuleWithOperations `json:"rules,omitempty"`

	// TimeoutSeconds bounds a call to the webhook (1 to 30; default 10).
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// InterpreterContextVersions are the ResourceInterpreterContext versions the webhook
	// accepts, in order of preference.
	InterpreterContextVersions []string `json:"interpreterContextVersions"`
}

// RuleWithOperations is a rule with the operations it applies to.
type RuleWithOperations struct {
	// Operations the webhook handles for the matched kinds; "*" is every operation.
	// +required
	Operations []InterpreterOperation `json:"operations"`

	// Rule matches kinds by group, version and kind.
	Rule `json:",inline"`
}

// InterpreterOperation is one operation of the resource interpreter.
type InterpreterOperation string

// The interpreter operations.
const (
	InterpreterOperationAll                 InterpreterOperation = "*"
	InterpreterOperationInterpretReplica    InterpreterOperation = "InterpretReplica"
	InterpreterOperationInterpretComponent  InterpreterOperation = "InterpretComponent"
	InterpreterOperationReviseReplica       InterpreterOperation = "ReviseReplica"
	InterpreterOperationInterpretStatus     InterpreterOperation = "InterpretStatus"
	InterpreterOperationPrune               InterpreterOperation = "Prune"
	InterpreterOperationRetain              InterpreterOperation = "Retain"
	InterpreterOperationAggregateStatus     InterpreterOperation = "AggregateStatus"
	InterpreterOperationInterpretHealth     InterpreterOperation = "InterpretHealth"
	InterpreterOperationInterpretDependency InterpreterOperation = "InterpretDependency"
)

// Rule matches kinds; "*" in a list matches everything.
type Rule struct {
	// APIGroups of the kinds; "" is the core group.
	// +required
	APIGroups []string `json:"apiGroups"`

	// APIVersions of the kinds.
	// +required
	APIVersions []string `json:"apiVersions"`

	// Kinds matched, e.g. "Deployment".
	// +required
	Kinds []string `json:"kinds"`
}

// +kubebuilder:object:root=true

// ResourceInterpreterWebhookConfigurationList is a list of ResourceInterpreterWebhookConfiguration.
type ResourceInterpreterWebhookConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ResourceInterpreterWebhookConfiguration `json:"items"`
}
