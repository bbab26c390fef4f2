// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
)

// Annotations on a binding that steer its rollout (kubectl annotate).
const (
	// PausedAnnotation "true" freezes the binding's rollout: no cluster gets a revision it
	// does not already have until the annotation goes.
	PausedAnnotation = "rollouts.binding-controller.io/paused"
	// ApproveAnnotation names the stage whose gate (requireApproval) is opened.
	ApproveAnnotation = "rollouts.binding-controller.io/approve"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=rolloutpolicies,scope=Namespaced,shortName=rop,categories=binding-controller,singular=rolloutpolicy
// +kubebuilder:printcolumn:name="Rollback",type=boolean,JSONPath=`.spec.rollbackOnFailure`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// RolloutPolicy rolls out the changes of the templates it selects in its namespace stage
// by stage across their clusters.
type RolloutPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec RolloutPolicySpec `json:"spec"`
}

// +kubebuilder:object:root=true

// RolloutPolicyList is a list of RolloutPolicy.
type RolloutPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RolloutPolicy `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterrolloutpolicies,scope=Cluster,shortName=crop,categories=binding-controller,singular=clusterrolloutpolicy
// +kubebuilder:printcolumn:name="Rollback",type=boolean,JSONPath=`.spec.rollbackOnFailure`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterRolloutPolicy rolls out the changes of the templates it selects, in any
// namespace or none, stage by stage across their clusters.
type ClusterRolloutPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec RolloutPolicySpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ClusterRolloutPolicyList is a list of ClusterRolloutPolicy.
type ClusterRolloutPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterRolloutPolicy `json:"items"`
}

// RolloutPolicySpec says which templates roll out and how.
type RolloutPolicySpec struct {
	// ResourceSelectors select the templates, as an OverridePolicy's do; empty selects
	// every template the policy can see.
	// +optional
	ResourceSelectors []policyv1alpha1.ResourceSelector `json:"resourceSelectors,omitempty"`

	// Stages in order. A binding's clusters that no stage selects form a last stage of
	// their own.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +listType=map
	// +listMapKey=name
	Stages []RolloutStage `json:"stages"`

	// ProgressDeadline is how long a cluster has to become healthy on a new revision
	// before it has failed.
	// +optional
	// +kubebuilder:default="10m"
	ProgressDeadline *metav1.Duration `json:"progressDeadline,omitempty"`

	// MaxFailures is how many failed clusters are tolerated before the rollout halts.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	MaxFailures *int32 `json:"maxFailures,omitempty"`

	// RollbackOnFailure gives the clusters already updated the previous revision's Works
	// back when the rollout halts.
	// +optional
	RollbackOnFailure bool `json:"rollbackOnFailure,omitempty"`

	// RevisionHistoryLimit is how many earlier revisions of a template are kept as
	// ControllerRevisions beside the current one.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
}

// RolloutStage is a set of clusters that get a new revision together.
type RolloutStage struct {
	// Name of the stage, unique in the policy; the approve annotation names it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Clusters of the binding that belong to this stage; a cluster belongs to the first
	// stage that selects it.
	// +required
	Clusters StageClusters `json:"clusters"`

	// MaxConcurrency is how many of the stage's clusters are updated at once: a number or
	// a percentage of the stage's clusters (rounded up, at least 1). Default: all of them.
	// +optional
	// +kubebuilder:validation:XIntOrString
	MaxConcurrency *intstr.IntOrString `json:"maxConcurrency,omitempty"`

	// MinSuccessTime is how long every cluster of the stage must stay healthy (the soak)
	// before the next stage starts.
	// +optional
	MinSuccessTime *metav1.Duration `json:"minSuccessTime,omitempty"`

	// RequireApproval holds the stage until the binding's approve annotation names it.
	// +optional
	RequireApproval bool `json:"requireApproval,omitempty"`
}

// StageClusters selects member clusters by name or by the labels of their Cluster
// objects, as Karmada's clusterAffinity does; both set means either.
type StageClusters struct {
	// +optional
	Names []string `json:"names,omitempty"`
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}
