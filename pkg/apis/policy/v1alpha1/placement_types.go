// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Placement is the rule that selects the member clusters a resource propagates to.
// The binding controller only reads ReplicaScheduling; the rest is modelled so that it
// survives a round trip through the Go types.
type Placement struct {
	// ClusterAffinity restricts scheduling to a set of clusters.
	// It cannot co-exist with ClusterAffinities.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`

	// ClusterAffinities is an ordered list of cluster groups; the scheduler uses the
	// first group that satisfies the scheduling restrictions.
	// +optional
	ClusterAffinities []ClusterAffinityTerm `json:"clusterAffinities,omitempty"`

	// ClusterTolerations are the taints of clusters that are tolerated.
	// +optional
	ClusterTolerations []corev1.Toleration `json:"clusterTolerations,omitempty"`

	// SpreadConstraints is a list of scheduling spread constraints.
	// +optional
	SpreadConstraints []SpreadConstraint `json:"spreadConstraints,omitempty"`

	// ReplicaScheduling is the policy for dividing the replicas of workloads between
	// member clusters.
	// +optional
	ReplicaScheduling *ReplicaSchedulingStrategy `json:"replicaScheduling,omitempty"`

	// WorkloadAffinity holds inter-workload affinity and anti-affinity rules.
	// +optional
	WorkloadAffinity *WorkloadAffinity `json:"workloadAffinity,omitempty"`
}

// ClusterAffinity is a filter that selects member clusters.
type ClusterAffinity struct {
	// LabelSelector selects member clusters by their labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// FieldSelector selects member clusters by fields (provider, region, zone) with
	// the operators In and NotIn.
	// +optional
	FieldSelector *FieldSelector `json:"fieldSelector,omitempty"`

	// ClusterNames lists the clusters to select.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`

	// ExcludeClusters lists the clusters to ignore.
	// +optional
	ExcludeClusters []string `json:"exclude,omitempty"`
}

// ClusterAffinityTerm is a named cluster group of Placement.ClusterAffinities.
type ClusterAffinityTerm struct {
	// AffinityName is the name of the cluster group.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +required
	AffinityName string `json:"affinityName"`

	ClusterAffinity `json:",inline"`

	// OverflowAffinities are further cluster groups that the scheduler may add, in
	// order, when the primary group (the inline ClusterAffinity) lacks resources.
	// +optional
	OverflowAffinities []OverflowClusterAffinity `json:"overflowAffinities,omitempty"`
}

// OverflowClusterAffinity is one overflow tier of candidate clusters.
type OverflowClusterAffinity struct {
	// AffinityName is the name of the cluster group.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +required
	AffinityName string `json:"affinityName"`

	ClusterAffinity `json:",inline"`
}

// FieldSelector selects clusters by their fields.
type FieldSelector struct {
	// MatchExpressions is a list of field selector requirements.
	// +optional
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// SpreadFieldValue is a cluster field used to group clusters for spreading.
type SpreadFieldValue string

// Values of SpreadFieldValue.
const (
	SpreadByFieldCluster  SpreadFieldValue = "cluster"
	SpreadByFieldRegion   SpreadFieldValue = "region"
	SpreadByFieldZone     SpreadFieldValue = "zone"
	SpreadByFieldProvider SpreadFieldValue = "provider"
)

// SpreadConstraint is a spread constraint on the selected clusters.
type SpreadConstraint struct {
	// SpreadByField is the cluster field used to group clusters.
	// It cannot co-exist with SpreadByLabel.
	// +kubebuilder:validation:Enum=cluster;region;zone;provider
	// +optional
	SpreadByField SpreadFieldValue `json:"spreadByField,omitempty"`

	// SpreadByLabel is the cluster label key used to group clusters.
	// It cannot co-exist with SpreadByField.
	// +optional
	SpreadByLabel string `json:"spreadByLabel,omitempty"`

	// MaxGroups is the maximum number of cluster groups to select.
	// +optional
	MaxGroups int `json:"maxGroups,omitempty"`

	// MinGroups is the minimum number of cluster groups to select (defaults to 1).
	// +optional
	MinGroups int `json:"minGroups,omitempty"`
}

// ReplicaSchedulingType is how the replicas of a workload are scheduled.
type ReplicaSchedulingType string

// Values of ReplicaSchedulingType.
const (
	// ReplicaSchedulingTypeDuplicated gives every selected cluster the full replicas.
	ReplicaSchedulingTypeDuplicated ReplicaSchedulingType = "Duplicated"
	// ReplicaSchedulingTypeDivided divides the replicas between the selected clusters.
	ReplicaSchedulingTypeDivided ReplicaSchedulingType = "Divided"
)

// ReplicaDivisionPreference is how replicas are divided under Divided scheduling.
type ReplicaDivisionPreference string

// Values of ReplicaDivisionPreference.
const (
	ReplicaDivisionPreferenceAggregated ReplicaDivisionPreference = "Aggregated"
	ReplicaDivisionPreferenceWeighted   ReplicaDivisionPreference = "Weighted"
)

// ReplicaSchedulingStrategy is the policy for scheduling the replicas of a workload.
type ReplicaSchedulingStrategy struct {
	// ReplicaSchedulingType is Duplicated or Divided (the default).
	// +kubebuilder:validation:Enum=Duplicated;Divided
	// +kubebuilder:default=Divided
	// +optional
	ReplicaSchedulingType ReplicaSchedulingType `json:"replicaSchedulingType,omitempty"`

	// ReplicaDivisionPreference is Aggregated or Weighted; used with Divided.
	// +kubebuilder:validation:Enum=Aggregated;Weighted
	// +optional
	ReplicaDivisionPreference ReplicaDivisionPreference `json:"replicaDivisionPreference,omitempty"`

	// WeightPreference holds the cluster weights used with Weighted division.
	// +optional
	WeightPreference *ClusterPreferences `json:"weightPreference,omitempty"`
}

// DynamicWeightFactor is the factor a dynamic weight list is computed from.
type DynamicWeightFactor string

// DynamicWeightByAvailableReplicas weighs clusters by their available replicas.
const DynamicWeightByAvailableReplicas DynamicWeightFactor = "AvailableReplicas"

// ClusterPreferences holds the weights of clusters or groups of clusters.
type ClusterPreferences struct {
	// StaticWeightList is a static list of cluster weights.
	// +optional
	StaticWeightList []StaticClusterWeight `json:"staticWeightList,omitempty"`

	// DynamicWeight computes the weights dynamically; when set StaticWeightList is ignored.
	// +kubebuilder:validation:Enum=AvailableReplicas
	// +optional
	DynamicWeight DynamicWeightFactor `json:"dynamicWeight,omitempty"`
}

// StaticClusterWeight is the static weight of the clusters selected by TargetCluster.
type StaticClusterWeight struct {
	// TargetCluster selects the clusters.
	// +required
	TargetCluster ClusterAffinity `json:"targetCluster"`

	// Weight is the weight of the selected clusters.
	// +kubebuilder:validation:Minimum=1
	// +required
	Weight int64 `json:"weight"`
}

// WorkloadAffinity holds inter-workload affinity and anti-affinity scheduling rules.
type WorkloadAffinity struct {
	// Affinity co-locates workloads of the same affinity group.
	// +optional
	Affinity *WorkloadAffinityTerm `json:"affinity,omitempty"`

	// AntiAffinity separates workloads of the same anti-affinity group.
	// +optional
	AntiAffinity *WorkloadAntiAffinityTerm `json:"antiAffinity,omitempty"`
}

// WorkloadAffinityTerm groups workloads by a label of the resource template.
type WorkloadAffinityTerm struct {
	// GroupByLabelKey is the template label key whose value names the affinity group.
	// +required
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// WorkloadAntiAffinityTerm groups workloads by a label of the resource template.
type WorkloadAntiAffinityTerm struct {
	// GroupByLabelKey is the template label key whose value names the anti-affinity group.
	// +required
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// ConflictResolution is how a conflict with a resource that already exists in a member
// cluster is handled.
type ConflictResolution string

// Values of ConflictResolution.
const (
	// ConflictOverwrite overwrites the existing resource in the member cluster.
	ConflictOverwrite ConflictResolution = "Overwrite"
	// ConflictAbort stops propagating to that cluster (the default).
	ConflictAbort ConflictResolution = "Abort"
)

// PurgeMode is how the application on a cluster it is migrated away from is removed.
type PurgeMode string

// Values of PurgeMode.
const (
	// PurgeModeDirectly removes the legacy application at once.
	PurgeModeDirectly PurgeMode = "Directly"
	// PurgeModeGracefully removes the legacy application once the application is healthy
	// on its new cluster, or once a grace period has passed.
	PurgeModeGracefully PurgeMode = "Gracefully"
	// PurgeModeNever never removes the legacy application.
	PurgeModeNever PurgeMode = "Never"
)

// Suspension declares which parts of propagation are suspended.
type Suspension struct {
	// Dispatching suspends dispatching to all clusters when true.
	// It cannot co-exist with DispatchingOnClusters.
	// +optional
	Dispatching *bool `json:"dispatching,omitempty"`

	// DispatchingOnClusters suspends dispatching to the listed clusters.
	// It cannot co-exist with Dispatching.
	// +optional
	DispatchingOnClusters *SuspendClusters `json:"dispatchingOnClusters,omitempty"`
}

// SuspendClusters lists the clusters a suspension applies to.
type SuspendClusters struct {
	// ClusterNames is the list of clusters.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// FailoverBehavior is how applications are migrated when failures happen.
type FailoverBehavior struct {
	// Application is the failover behaviour on application failure; nil disables it.
	// +optional
	Application *ApplicationFailoverBehavior `json:"application,omitempty"`

	// Cluster is the failover behaviour on cluster failure.
	// +optional
	Cluster *ClusterFailoverBehavior `json:"cluster,omitempty"`
}

// ApplicationFailoverBehavior is the failover behaviour on application failure.
type ApplicationFailoverBehavior struct {
	// DecisionConditions must all hold before a failover happens.
	// +required
	DecisionConditions DecisionConditions `json:"decisionConditions"`

	// PurgeMode is how the legacy application is removed (default Gracefully).
	// +kubebuilder:validation:Enum=Directly;Gracefully;Never
	// +kubebuilder:default=Gracefully
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// GracePeriodSeconds is the longest wait before the legacy application is removed
	// under Gracefully purging.
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// StatePreservation is the policy for carrying state over to the new cluster.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// DecisionConditions are the conditions of a failover decision.
type DecisionConditions struct {
	// TolerationSeconds is how long to wait after an unhealthy state is observed
	// (default 300).
	// +kubebuilder:default=300
	// +optional
	TolerationSeconds *int32 `json:"tolerationSeconds,omitempty"`
}

// ClusterFailoverBehavior is the failover behaviour on cluster failure.
type ClusterFailoverBehavior struct {
	// PurgeMode is how the legacy application is removed (default Gracefully).
	// +kubebuilder:validation:Enum=Directly;Gracefully
	// +kubebuilder:default=Gracefully
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// StatePreservation is the policy for carrying state over to the new cluster.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// StatePreservation is the policy for preserving state data across a failover.
type StatePreservation struct {
	// Rules lists the pieces of state to preserve.
	// +required
	Rules []StatePreservationRule `json:"rules"`
}

// StatePreservationRule preserves the value at JSONPath as the label AliasLabelName.
type StatePreservationRule struct {
	// AliasLabelName is the label key the preserved value is passed on as.
	// +required
	AliasLabelName string `json:"aliasLabelName"`

	// JSONPath selects the value to preserve from the resource's status.
	// +required
	JSONPath string `json:"jsonPath"`
}
