// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=works,scope=Namespaced,shortName=wk,categories=karmada-io,singular=work
// +kubebuilder:printcolumn:name="WORKLOAD-KIND",type=string,JSONPath=`.spec.workload.manifests[*].kind`
// +kubebuilder:printcolumn:name="APPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// Work is the list of resources to deploy on one member cluster. It lives in the
// cluster's execution namespace (ExecutionNamespacePrefix + cluster name).
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the Work.
	// +required
	Spec WorkSpec `json:"spec"`

	// Status is the observed state of the Work.
	// +optional
	Status WorkStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkList is a list of Work.
type WorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Work `json:"items"`
}

// WorkSpec is the desired state of a Work.
type WorkSpec struct {
	// Workload holds the manifests to deploy on the member cluster.
	// +optional
	Workload WorkloadTemplate `json:"workload,omitempty"`

	// SuspendDispatching stops propagating the Work to its member cluster when true
	// (status collection continues); nil means not suspended.
	// +optional
	SuspendDispatching *bool `json:"suspendDispatching,omitempty"`

	// PreserveResourcesOnDeletion keeps the resources on the member cluster when the
	// Work is deleted; the default (false) deletes them with the Work.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`
}

// WorkloadTemplate is the workload deployed on a member cluster.
type WorkloadTemplate struct {
	// Manifests is the list of Kubernetes resources to deploy.
	// +optional
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is one resource to deploy on a member cluster, as a raw (JSON) object.
type Manifest struct {
	// +kubebuilder:pruning:PreserveUnknownFields
	runtime.RawExtension `json:",inline"`
}

// WorkStatus is the observed state of a Work.
type WorkStatus struct {
	// Conditions of the Work. Karmada sets Applied, Progressing, Available and Degraded.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ManifestStatuses is the status of each manifest of the spec.
	// +optional
	ManifestStatuses []ManifestStatus `json:"manifestStatuses,omitempty"`
}

// ResourceHealth is the health of a resource.
// +kubebuilder:validation:Enum=Healthy;Unhealthy;Unknown
type ResourceHealth string

// Values of ResourceHealth.
const (
	ResourceHealthy   ResourceHealth = "Healthy"
	ResourceUnhealthy ResourceHealth = "Unhealthy"
	ResourceUnknown   ResourceHealth = "Unknown"
)

// ManifestStatus is the status of one manifest of a Work.
type ManifestStatus struct {
	// Identifier links the status to a manifest of the spec.
	// +required
	Identifier ResourceIdentifier `json:"identifier"`

	// Status is the status of the resource on the member cluster.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`

	// Health is the health of the resource on the member cluster.
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
}

// ResourceIdentifier identifies a manifest of a Work.
type ResourceIdentifier struct {
	// Ordinal is the index of the manifest in spec.workload.manifests, so a status can
	// be linked to a manifest that could not be parsed.
	// +required
	Ordinal int `json:"ordinal"`

	// Group of the resource.
	// +optional
	Group string `json:"group,omitempty"`

	// Version of the resource.
	// +required
	Version string `json:"version"`

	// Kind of the resource.
	// +required
	Kind string `json:"kind"`

	// Resource is the plural resource type.
	// +required
	Resource string `json:"resource"`

	// Namespace of the resource; empty for cluster-scoped resources.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the resource.
	// +required
	Name string `json:"name"`
}
