// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=overridepolicies,scope=Namespaced,shortName=op,categories=karmada-io,singular=overridepolicy

// OverridePolicy is a namespaced policy that overrides resources of its namespace when
// they are propagated to member clusters.
type OverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the override specification.
	// +required
	Spec OverrideSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// OverridePolicyList is a list of OverridePolicy.
type OverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OverridePolicy `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusteroverridepolicies,scope=Cluster,shortName=cop,categories=karmada-io,singular=clusteroverridepolicy

// ClusterOverridePolicy is a cluster-wide policy that overrides resources when they are
// propagated to member clusters.
type ClusterOverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the override specification.
	// +required
	Spec OverrideSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ClusterOverridePolicyList is a list of ClusterOverridePolicy.
type ClusterOverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterOverridePolicy `json:"items"`
}

// OverrideSpec is the specification of an OverridePolicy or ClusterOverridePolicy.
type OverrideSpec struct {
	// ResourceSelectors restricts the resources the policy applies to; empty means all.
	// +optional
	ResourceSelectors []ResourceSelector `json:"resourceSelectors,omitempty"`

	// OverrideRules is the list of override rules, each for a set of clusters.
	// +optional
	OverrideRules []RuleWithCluster `json:"overrideRules,omitempty"`

	// TargetCluster selects the clusters the deprecated Overriders apply to.
	//
	// Deprecated: use OverrideRules.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// Overriders are the overriders applied to TargetCluster.
	//
	// Deprecated: use OverrideRules.
	// +optional
	Overriders Overriders `json:"overriders,omitempty"`
}

// ResourceSelector selects resources.
type ResourceSelector struct {
	// APIVersion of the target resources.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind of the target resources.
	// +required
	Kind string `json:"kind"`

	// Namespace of the target resource; defaults to the policy's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the target resource; empty means all resources of the kind.
	// +optional
	Name string `json:"name,omitempty"`

	// LabelSelector selects resources by labels; ignored when Name is set.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// RuleWithCluster is a set of overriders for the clusters selected by TargetCluster.
type RuleWithCluster struct {
	// TargetCluster selects the clusters; nil means all clusters.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// Overriders are the overriders applied to the selected clusters.
	// +required
	Overriders Overriders `json:"overriders"`
}

// Overriders are the override operations. They are applied in the order
// Plaintext, ImageOverrider, CommandOverrider, ArgsOverrider, LabelsOverrider,
// AnnotationsOverrider, FieldOverrider.
type Overriders struct {
	// Plaintext is a list of JSON-patch-like operations on the resource.
	// +optional
	Plaintext []PlaintextOverrider `json:"plaintext,omitempty"`

	// ImageOverrider overrides container images.
	// +optional
	ImageOverrider []ImageOverrider `json:"imageOverrider,omitempty"`

	// CommandOverrider overrides container commands.
	// +optional
	CommandOverrider []CommandArgsOverrider `json:"commandOverrider,omitempty"`

	// ArgsOverrider overrides container args.
	// +optional
	ArgsOverrider []CommandArgsOverrider `json:"argsOverrider,omitempty"`

	// LabelsOverrider overrides labels.
	// +optional
	LabelsOverrider []LabelAnnotationOverrider `json:"labelsOverrider,omitempty"`

	// AnnotationsOverrider overrides annotations.
	// +optional
	AnnotationsOverrider []LabelAnnotationOverrider `json:"annotationsOverrider,omitempty"`

	// FieldOverrider overrides fields inside embedded JSON or YAML documents
	// (for example inside a ConfigMap's data).
	// +optional
	FieldOverrider []FieldOverrider `json:"fieldOverrider,omitempty"`
}

// OverriderOperator is the operation of an overrider.
type OverriderOperator string

// Values of OverriderOperator.
const (
	OverriderOpAdd     OverriderOperator = "add"
	OverriderOpRemove  OverriderOperator = "remove"
	OverriderOpReplace OverriderOperator = "replace"
)

// PlaintextOverrider is a JSON-patch-like operation on the resource.
type PlaintextOverrider struct {
	// Path is the JSON pointer of the target field.
	// +required
	Path string `json:"path"`

	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// Value is the value to apply; ignored by remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// ImageComponent is a component of a container image reference.
type ImageComponent string

// Values of ImageComponent.
const (
	Registry   ImageComponent = "Registry"
	Repository ImageComponent = "Repository"
	Tag        ImageComponent = "Tag"
)

// ImageOverrider overrides a component of container images.
type ImageOverrider struct {
	// Predicate selects the image field to override; nil means the images of the
	// workload's pod template(s).
	// +optional
	Predicate *ImagePredicate `json:"predicate,omitempty"`

	// Component is the image component to override: Registry, Repository or Tag.
	// +kubebuilder:validation:Enum=Registry;Repository;Tag
	// +required
	Component ImageComponent `json:"component"`

	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// Value is the value to apply; ignored by remove.
	// +optional
	Value string `json:"value,omitempty"`
}

// ImagePredicate selects an image field.
type ImagePredicate struct {
	// Path is the JSON pointer of the image field.
	// +required
	Path string `json:"path"`
}

// CommandArgsOverrider overrides the command or the args of a container.
type CommandArgsOverrider struct {
	// ContainerName is the name of the container.
	// +required
	ContainerName string `json:"containerName"`

	// Operator is add or remove.
	// +kubebuilder:validation:Enum=add;remove
	// +required
	Operator OverriderOperator `json:"operator"`

	// Value is the list of items to add or remove.
	// +optional
	Value []string `json:"value,omitempty"`
}

// LabelAnnotationOverrider overrides labels or annotations.
type LabelAnnotationOverrider struct {
	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// Value holds the keys and values to apply.
	// +required
	Value map[string]string `json:"value"`
}

// FieldOverrider overrides a field that holds a JSON or YAML document.
type FieldOverrider struct {
	// FieldPath is the JSON pointer of the field holding the document.
	// +required
	FieldPath string `json:"fieldPath"`

	// JSON is the list of operations on a JSON document.
	// +optional
	JSON []JSONPatchOperation `json:"json,omitempty"`

	// YAML is the list of operations on a YAML document.
	// +optional
	YAML []YAMLPatchOperation `json:"yaml,omitempty"`
}

// JSONPatchOperation is an operation on a JSON document.
type JSONPatchOperation struct {
	// SubPath is the JSON pointer inside the document.
	// +required
	SubPath string `json:"subPath"`

	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// Value is the value to apply; ignored by remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// YAMLPatchOperation is an operation on a YAML document.
type YAMLPatchOperation struct {
	// SubPath is the JSON pointer inside the document.
	// +required
	SubPath string `json:"subPath"`

	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// Value is the value to apply; ignored by remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}
