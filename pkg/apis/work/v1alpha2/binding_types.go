// SPDX-License-Identifier: Apache-2.0

package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=resourcebindings,scope=Namespaced,shortName=rb,categories=karmada-io,singular=resourcebinding
// +kubebuilder:printcolumn:name="SCHEDULED",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FULLYAPPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
// +kubebuilder:printcolumn:name="WORKS-SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=="WorksSynced")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// ResourceBinding binds a namespaced resource template to the member clusters it is
// scheduled to.
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the binding.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// Status is the observed state of the binding.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceBindingList is a list of ResourceBinding.
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceBinding `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=clusterresourcebindings,scope=Cluster,shortName=crb,categories=karmada-io,singular=clusterresourcebinding
// +kubebuilder:printcolumn:name="SCHEDULED",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FULLYAPPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
// +kubebuilder:printcolumn:name="WORKS-SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=="WorksSynced")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterResourceBinding binds a cluster-scoped resource template to the member
// clusters it is scheduled to.
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the binding.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// Status is the observed state of the binding.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourceBindingList is a list of ClusterResourceBinding.
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceBinding `json:"items"`
}

// ResourceBindingSpec is the desired state of a ResourceBinding or
// ClusterResourceBinding.
type ResourceBindingSpec struct {
	// Resource is the resource template being propagated.
	// +required
	Resource ObjectReference `json:"resource"`

	// PropagateDeps tells whether the resources the template depends on are propagated
	// along with it.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// ReplicaRequirements are the resource and scheduling requirements of each replica.
	// +optional
	ReplicaRequirements *ReplicaRequirements `json:"replicaRequirements,omitempty"`

	// Replicas is the replica count of the resource template.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Components are the requirements of each pod template of a multi-template workload.
	// +optional
	Components []Component `json:"components,omitempty"`

	// Clusters is the scheduling result: the member clusters to deploy to.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`

	// Placement is the rule for selecting clusters.
	// +optional
	Placement *policyv1alpha1.Placement `json:"placement,omitempty"`

	// GracefulEvictionTasks are the evictions that are performed gracefully: the
	// evicted cluster keeps its Work until the task ends.
	// +optional
	GracefulEvictionTasks []GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`

	// RequiredBy lists the bindings that depend on the referenced resource, with their
	// clusters.
	// +optional
	RequiredBy []BindingSnapshot `json:"requiredBy,omitempty"`

	// SchedulerName is the scheduler that schedules the binding.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// Failover is how applications are migrated on failures.
	// +optional
	Failover *policyv1alpha1.FailoverBehavior `json:"failover,omitempty"`

	// ConflictResolution is how a resource that already exists in a member cluster is
	// handled: Abort (the default) or Overwrite.
	// +kubebuilder:validation:Enum=Abort;Overwrite
	// +kubebuilder:default=Abort
	// +optional
	ConflictResolution policyv1alpha1.ConflictResolution `json:"conflictResolution,omitempty"`

	// RescheduleTriggeredAt is when a rescheduling was last requested.
	// +optional
	RescheduleTriggeredAt *metav1.Time `json:"rescheduleTriggeredAt,omitempty"`

	// Suspension declares which parts of propagation are suspended; nil means none.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`

	// PreserveResourcesOnDeletion keeps the resources on the member clusters when the
	// binding is deleted.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// SchedulePriority is the scheduling priority of the binding.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`

	// WorkloadAffinityGroups are the affinity groups computed from
	// spec.placement.workloadAffinity.
	// +optional
	WorkloadAffinityGroups *WorkloadAffinityGroups `json:"workloadAffinityGroups,omitempty"`
}

// ObjectReference references the resource template of a binding.
type ObjectReference struct {
	// APIVersion of the referent.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind of the referent.
	// +required
	Kind string `json:"kind"`

	// Namespace of the referent; empty for cluster-scoped resources.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the referent.
	// +required
	Name string `json:"name"`

	// UID of the referent.
	// +optional
	UID types.UID `json:"uid,omitempty"`

	// ResourceVersion of the referent.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// ReplicaRequirements are the requirements of each replica.
type ReplicaRequirements struct {
	// NodeClaim is the node affinity, node selector and tolerations of each replica.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`

	// ResourceRequest is the resources each replica requests.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`

	// Namespace of the resource.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// PriorityClassName of the resource.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// ComponentReplicaRequirements are the requirements of each replica of a component.
type ComponentReplicaRequirements struct {
	// NodeClaim is the node affinity, node selector and tolerations of each replica.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`

	// ResourceRequest is the resources each replica requests.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`

	// PriorityClassName of the component.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// NodeClaim is the node affinity, node selector and tolerations of a replica.
type NodeClaim struct {
	// HardNodeAffinity is the required node affinity of the pods.
	// +optional
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`

	// NodeSelector is the node selector of the pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations are the tolerations of the pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Component is the requirements of one pod template of a workload.
type Component struct {
	// Name of the component, unique within the resource.
	// +kubebuilder:validation:MaxLength=32
	// +required
	Name string `json:"name"`

	// Replicas of the component.
	// +required
	Replicas int32 `json:"replicas"`

	// ReplicaRequirements are the requirements of each replica of the component.
	// +optional
	ReplicaRequirements *ComponentReplicaRequirements `json:"replicaRequirements,omitempty"`
}

// TargetCluster is a member cluster a binding is scheduled to.
type TargetCluster struct {
	// Name of the cluster.
	// +required
	Name string `json:"name"`

	// Replicas assigned to the cluster.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Components is the per-component replica assignment in the cluster.
	// +optional
	Components []TargetComponent `json:"components,omitempty"`
}

// TargetComponent is the replicas of one component assigned to a cluster.
type TargetComponent struct {
	// Name of the component (spec.components[*].name).
	// +required
	Name string `json:"name"`

	// Replicas of the component assigned to the cluster.
	// +required
	Replicas int32 `json:"replicas"`
}

// GracefulEvictionTask is an eviction of the binding's resource from a cluster that is
// performed gracefully.
type GracefulEvictionTask struct {
	// FromCluster is the cluster the resource is evicted from.
	// +required
	FromCluster string `json:"fromCluster"`

	// PurgeMode is how the evicted application is removed.
	// +kubebuilder:validation:Enum=Directly;Gracefully;Never
	// +optional
	PurgeMode policyv1alpha1.PurgeMode `json:"purgeMode,omitempty"`

	// Replicas is the number of replicas evicted.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Reason is a CamelCase identifier of the reason of the eviction.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`
	// +required
	Reason string `json:"reason"`

	// Message is a human-readable message about the eviction.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`

	// Producer is the controller that triggered the eviction.
	// +required
	Producer string `json:"producer"`

	// GracePeriodSeconds is the longest wait before the evicted resource is deleted.
	// It cannot co-exist with SuppressDeletion.
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// SuppressDeletion keeps the evicted resource until a tool or a human ends the task.
	// +optional
	SuppressDeletion *bool `json:"suppressDeletion,omitempty"`

	// PreservedLabelState is the state collected from the original cluster, injected
	// into the new cluster as labels.
	// +optional
	PreservedLabelState map[string]string `json:"preservedLabelState,omitempty"`

	// ClustersBeforeFailover are the clusters the application ran on before failover.
	// +optional
	ClustersBeforeFailover []string `json:"clustersBeforeFailover,omitempty"`

	// CreationTimestamp is the server time the task was created at.
	// +optional
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
}

// BindingSnapshot is a snapshot of a (Cluster)ResourceBinding that depends on the
// resource.
type BindingSnapshot struct {
	// Namespace of the binding; empty for a ClusterResourceBinding.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the binding.
	// +required
	Name string `json:"name"`

	// Clusters is the scheduling result of the binding.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`
}

// Suspension declares which parts of propagation of a binding are suspended.
type Suspension struct {
	policyv1alpha1.Suspension `json:",inline"`

	// Scheduling pauses the scheduling of the binding when true.
	// +optional
	Scheduling *bool `json:"scheduling,omitempty"`
}

// SchedulePriority is the scheduling priority of a binding.
type SchedulePriority struct {
	// Priority of the binding; higher values are scheduled first.
	// +kubebuilder:default=0
	// +optional
	Priority int32 `json:"priority,omitempty"`
}

// WorkloadAffinityGroups are the affinity groups of a workload.
type WorkloadAffinityGroups struct {
	// AffinityGroup is the affinity group name.
	// +optional
	AffinityGroup string `json:"affinityGroup,omitempty"`

	// AntiAffinityGroup is the anti-affinity group name.
	// +optional
	AntiAffinityGroup string `json:"antiAffinityGroup,omitempty"`
}

// ResourceBindingStatus is the observed state of a ResourceBinding or
// ClusterResourceBinding.
type ResourceBindingStatus struct {
	// SchedulerObservedGeneration is the metadata.generation the scheduler last observed.
	// +optional
	SchedulerObservedGeneration int64 `json:"schedulerObservedGeneration,omitempty"`

	// SchedulerObservedAffinityName is the name of the affinity term the current
	// scheduling result is based on.
	// +optional
	SchedulerObservedAffinityName string `json:"schedulerObservingAffinityName,omitempty"`

	// LastScheduledTime is when the scheduler last finished a scheduling.
	// +optional
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty"`

	// Conditions of the binding (Scheduled, FullyApplied, WorksSynced, ...).
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// AggregatedStatus is the status of the resource in each member cluster.
	// +optional
	AggregatedStatus []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
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

// AggregatedStatusItem is the status of the resource in one member cluster.
type AggregatedStatusItem struct {
	// ClusterName is the member cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// Status is the status of the resource in the member cluster.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`

	// Applied tells whether the resource was applied on the cluster.
	// +optional
	Applied bool `json:"applied,omitempty"`

	// AppliedMessage is a human-readable message about the apply (the error when it
	// failed).
	// +optional
	AppliedMessage string `json:"appliedMessage,omitempty"`

	// Health is the health of the resource in the member cluster.
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
}
