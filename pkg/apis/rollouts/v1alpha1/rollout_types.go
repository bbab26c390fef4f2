// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=bindingrollouts,scope=Namespaced,shortName=bro,categories=binding-controller,singular=bindingrollout
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.revision`
// +kubebuilder:printcolumn:name="Stage",type=string,JSONPath=`.status.stage`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Updated",type=integer,JSONPath=`.status.updatedClusters`
// +kubebuilder:printcolumn:name="Healthy",type=integer,JSONPath=`.status.healthyClusters`
// +kubebuilder:printcolumn:name="Total",type=integer,JSONPath=`.status.totalClusters`
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=`.spec.policy.name`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// BindingRollout is the rollout of one ResourceBinding's template: same namespace and
// name as the binding, owned by it.
type BindingRollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec BindingRolloutSpec `json:"spec,omitempty"`
	// +optional
	Status BindingRolloutStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BindingRolloutList is a list of BindingRollout.
type BindingRolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BindingRollout `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clusterbindingrollouts,scope=Cluster,shortName=cbro,categories=binding-controller,singular=clusterbindingrollout
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.revision`
// +kubebuilder:printcolumn:name="Stage",type=string,JSONPath=`.status.stage`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Updated",type=integer,JSONPath=`.status.updatedClusters`
// +kubebuilder:printcolumn:name="Healthy",type=integer,JSONPath=`.status.healthyClusters`
// +kubebuilder:printcolumn:name="Total",type=integer,JSONPath=`.status.totalClusters`
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=`.spec.policy.name`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterBindingRollout is the rollout of one ClusterResourceBinding's template: same
// name as the binding, owned by it.
type ClusterBindingRollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec BindingRolloutSpec `json:"spec,omitempty"`
	// +optional
	Status BindingRolloutStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterBindingRolloutList is a list of ClusterBindingRollout.
type ClusterBindingRolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterBindingRollout `json:"items"`
}

// BindingRolloutSpec names the binding and the policy its rollout follows.
type BindingRolloutSpec struct {
	// +optional
	Binding BindingReference `json:"binding,omitempty"`
	// +optional
	Policy PolicyReference `json:"policy,omitempty"`
}

// BindingReference names the binding, by name and UID: a binding recreated under the
// same name is another binding, with a rollout of its own.
type BindingReference struct {
	Name string    `json:"name,omitempty"`
	UID  types.UID `json:"uid,omitempty"`
}

// PolicyReference names a RolloutPolicy (with its namespace) or a ClusterRolloutPolicy.
type PolicyReference struct {
	// +kubebuilder:validation:Enum=RolloutPolicy;ClusterRolloutPolicy
	Kind string `json:"kind,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// RolloutPhase is where a rollout stands.
// +kubebuilder:validation:Enum=Progressing;Paused;WaitingForApproval;Halted;RolledBack;Complete
type RolloutPhase string

// Phases of a rollout.
const (
	PhaseProgressing        RolloutPhase = "Progressing"
	PhasePaused             RolloutPhase = "Paused"
	PhaseWaitingForApproval RolloutPhase = "WaitingForApproval"
	PhaseHalted             RolloutPhase = "Halted"
	PhaseRolledBack         RolloutPhase = "RolledBack"
	PhaseComplete           RolloutPhase = "Complete"
)

// ClusterRolloutState is where one cluster stands in a rollout.
// +kubebuilder:validation:Enum=Pending;Updating;Healthy;Failed;RolledBack
type ClusterRolloutState string

// States of a cluster in a rollout.
const (
	// ClusterPending: the cluster keeps the previous revision until its stage comes.
	ClusterPending ClusterRolloutState = "Pending"
	// ClusterUpdating: its Work carries the new revision; it is not healthy on it yet.
	ClusterUpdating ClusterRolloutState = "Updating"
	// ClusterHealthy: applied, healthy, and the member object observed the revision.
	ClusterHealthy ClusterRolloutState = "Healthy"
	// ClusterFailed: unhealthy, or not healthy within the progress deadline.
	ClusterFailed ClusterRolloutState = "Failed"
	// ClusterRolledBack: given the previous revision back after the rollout halted.
	ClusterRolledBack ClusterRolloutState = "RolledBack"
)

// BindingRolloutStatus is the state of one binding's rollout. It is written by the
// controller alone, and is what a restart resumes from.
type BindingRolloutStatus struct {
	// ObservedGeneration is the binding's generation this status was written for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase of the rollout.
	// +optional
	Phase RolloutPhase `json:"phase,omitempty"`
	// Revision is the ControllerRevision being rolled out (the template as it is now).
	// +optional
	Revision string `json:"revision,omitempty"`
	// PreviousRevision is the ControllerRevision the rollout started from, the last one
	// every cluster ran: a cluster joining before its stage is done gets it.
	// +optional
	PreviousRevision string `json:"previousRevision,omitempty"`
	// Stage is the name of the stage in progress.
	// +optional
	Stage string `json:"stage,omitempty"`
	// StageStarted is when the stage in progress began; SoakStarted when every cluster
	// of it became healthy.
	// +optional
	StageStarted *metav1.Time `json:"stageStarted,omitempty"`
	// +optional
	SoakStarted *metav1.Time `json:"soakStarted,omitempty"`
	// UpdatedClusters, HealthyClusters and TotalClusters count the binding's clusters
	// whose Work carries Revision, those healthy on it, and all of them.
	// +optional
	UpdatedClusters int32 `json:"updatedClusters"`
	// +optional
	HealthyClusters int32 `json:"healthyClusters"`
	// +optional
	TotalClusters int32 `json:"totalClusters"`
	// Clusters is each cluster's live revision and state, ordered by stage then name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Clusters []ClusterRolloutStatus `json:"clusters,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterRolloutStatus is one cluster's place in a rollout.
type ClusterRolloutStatus struct {
	Name string `json:"name"`
	// Stage the cluster belongs to.
	// +optional
	Stage string `json:"stage,omitempty"`
	// Revision its Work carries.
	// +optional
	Revision string `json:"revision,omitempty"`
	// PreviousRevision is the revision its Work carried before this rollout reached it:
	// what a rollback gives it back.
	// +optional
	PreviousRevision string `json:"previousRevision,omitempty"`
	// +optional
	State ClusterRolloutState `json:"state,omitempty"`
	// Since is when the cluster entered State.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// Message says why, for a failed cluster.
	// +optional
	Message string `json:"message,omitempty"`
}

// RolloutSpec and RolloutStatus let the controller handle a BindingRollout and a
// ClusterBindingRollout alike: they differ only in scope.
func (r *BindingRollout) RolloutSpec() *BindingRolloutSpec { return &r.Spec }

// RolloutStatus: see RolloutSpec.
func (r *BindingRollout) RolloutStatus() *BindingRolloutStatus { return &r.Status }

// RolloutSpec: see BindingRollout.RolloutSpec.
func (r *ClusterBindingRollout) RolloutSpec() *BindingRolloutSpec { return &r.Spec }

// RolloutStatus: see BindingRollout.RolloutSpec.
func (r *ClusterBindingRollout) RolloutStatus() *BindingRolloutStatus { return &r.Status }
