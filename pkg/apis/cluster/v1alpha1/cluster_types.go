// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clusters,scope=Cluster,singular=cluster
// +kubebuilder:printcolumn:name="VERSION",type=string,JSONPath=`.status.kubernetesVersion`
// +kubebuilder:printcolumn:name="MODE",type=string,JSONPath=`.spec.syncMode`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// Cluster is a member cluster of the Karmada federation.
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the specification of the member cluster.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +required
	Spec ClusterSpec `json:"spec"`

	// Status is the observed state of the member cluster.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterList is a list of Cluster.
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

// ClusterSpec is the specification of a member cluster.
type ClusterSpec struct {
	// ID is the unique identifier of the cluster (usually the UID of its kube-system
	// namespace).
	// +optional
	ID string `json:"id,omitempty"`

	// SyncMode is how the cluster is synced: SyncModePush or SyncModePull.
	// +kubebuilder:validation:Enum=Push;Pull
	// +optional
	SyncMode string `json:"syncMode,omitempty"`

	// APIEndpoint is the API endpoint of the member cluster.
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`

	// SecretRef references the secret holding the credentials of the cluster.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`

	// ImpersonatorSecretRef references the secret holding the impersonation token.
	// +optional
	ImpersonatorSecretRef *LocalSecretReference `json:"impersonatorSecretRef,omitempty"`

	// InsecureSkipTLSVerification skips verifying the cluster's serving certificate.
	// +optional
	InsecureSkipTLSVerification bool `json:"insecureSkipTLSVerification,omitempty"`

	// ProxyURL is the proxy used to reach the cluster.
	// +optional
	ProxyURL string `json:"proxyURL,omitempty"`

	// ProxyHeader holds headers sent to the proxy.
	// +optional
	ProxyHeader map[string]string `json:"proxyHeader,omitempty"`

	// Provider is the cloud provider of the cluster.
	// +optional
	Provider string `json:"provider,omitempty"`

	// Region is the region the cluster is in.
	// +optional
	Region string `json:"region,omitempty"`

	// Zone is the zone the cluster is in.
	//
	// Deprecated: use Zones.
	// +optional
	Zone string `json:"zone,omitempty"`

	// Zones are the zones the cluster spans.
	// +optional
	Zones []string `json:"zones,omitempty"`

	// Taints of the cluster.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
}

// LocalSecretReference references a secret by namespace and name.
type LocalSecretReference struct {
	// Namespace of the secret.
	// +required
	Namespace string `json:"namespace"`

	// Name of the secret.
	// +required
	Name string `json:"name"`
}

// ClusterStatus is the observed state of a member cluster.
type ClusterStatus struct {
	// KubernetesVersion is the Kubernetes version of the cluster.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// Conditions of the cluster (Ready, ...).
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
