// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=resourceinterpretercustomizations,scope="Cluster",shortName=ric,categories={karmada-io}
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.spec.target.apiVersion`,name="TARGET-API-VERSION",type=string
// +kubebuilder:printcolumn:JSONPath=`.spec.target.kind`,name="TARGET-KIND",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="AGE",type=date

// ResourceInterpreterCustomization describes, in Lua, how Karmada interprets one kind of
// resource: its replicas, how to revise them per cluster, its status and health, and its
// dependencies.
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the kind it applies to and the scripts.
	// +required
	Spec ResourceInterpreterCustomizationSpec `json:"spec"`
}

// ResourceInterpreterCustomizationSpec is the target kind and its scripts.
type ResourceInterpreterCustomizationSpec struct {
	// Target is the kind the scripts interpret.
	// +required
	Target CustomizationTarget `json:"target"`

	// Customizations are the scripts, one per interpreter operation.
	// +required
	Customizations CustomizationRules `json:"customizations"`
}

// CustomizationTarget names a kind by apiVersion and kind.
type CustomizationTarget struct {
	// APIVersion of the target kind, e.g. "apps.kruise.io/v1alpha1".
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind of the target, e.g. "CloneSet".
	// +required
	Kind string `json:"kind"`
}

// CustomizationRules holds one script per interpreter operation; each is optional.
type CustomizationRules struct {
	// Retention keeps values that member clusters changed (function Retain).
	// +optional
	Retention *LocalValueRetention `json:"retention,omitempty"`

	// ReplicaResource reports the replicas and per-replica requirements (function GetReplicas).
	// +optional
	ReplicaResource *ReplicaResourceRequirement `json:"replicaResource,omitempty"`

	// ComponentResource reports the components of a multi-component workload (function GetComponents).
	// +optional
	ComponentResource *ComponentResourceRequirement `json:"componentResource,omitempty"`

	// ReplicaRevision sets the replicas a member cluster gets (function ReviseReplica).
	// +optional
	ReplicaRevision *ReplicaRevision `json:"replicaRevision,omitempty"`

	// StatusReflection picks the status reported from a member cluster (function ReflectStatus).
	// +optional
	StatusReflection *StatusReflection `json:"statusReflection,omitempty"`

	// StatusAggregation merges the member clusters' statuses (function AggregateStatus).
	// +optional
	StatusAggregation *StatusAggregation `json:"statusAggregation,omitempty"`

	// HealthInterpretation tells whether a member cluster's object is healthy (function InterpretHealth).
	// +optional
	HealthInterpretation *HealthInterpretation `json:"healthInterpretation,omitempty"`

	// DependencyInterpretation lists the objects the resource depends on (function GetDependencies).
	// +optional
	DependencyInterpretation *DependencyInterpretation `json:"dependencyInterpretation,omitempty"`
}

// LocalValueRetention is the Lua script of function Retain(desiredObj, observedObj).
type LocalValueRetention struct {
	// LuaScript defines function Retain.
	// +required
	LuaScript string `json:"luaScript"`
}

// ReplicaResourceRequirement is the Lua script of function GetReplicas(desiredObj).
type ReplicaResourceRequirement struct {
	// LuaScript defines function GetReplicas.
	// +required
	LuaScript string `json:"luaScript"`
}

// ComponentResourceRequirement is the Lua script of function GetComponents(desiredObj).
type ComponentResourceRequirement struct {
	// LuaScript defines function GetComponents.
	// +required
	LuaScript string `json:"luaScript"`
}

// ReplicaRevision is the Lua script of function ReviseReplica(desiredObj, desiredReplica),
// which returns the object with its replicas set to desiredReplica.
type ReplicaRevision struct {
	// LuaScript defines function ReviseReplica.
	// +required
	LuaScript string `json:"luaScript"`
}

// StatusReflection is the Lua script of function ReflectStatus(observedObj).
type StatusReflection struct {
	// LuaScript defines function ReflectStatus.
	// +required
	LuaScript string `json:"luaScript"`
}

// StatusAggregation is the Lua script of function AggregateStatus(desiredObj, statusItems).
type StatusAggregation struct {
	// LuaScript defines function AggregateStatus.
	// +required
	LuaScript string `json:"luaScript"`
}

// HealthInterpretation is the Lua script of function InterpretHealth(observedObj).
type HealthInterpretation struct {
	// LuaScript defines function InterpretHealth.
	// +required
	LuaScript string `json:"luaScript"`
}

// DependencyInterpretation is the Lua script of function GetDependencies(desiredObj).
type DependencyInterpretation struct {
	// LuaScript defines function GetDependencies.
	// +required
	LuaScript string `json:"luaScript"`
}

// +kubebuilder:object:root=true

// ResourceInterpreterCustomizationList is a list of ResourceInterpreterCustomization.
type ResourceInterpreterCustomizationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceInterpreterCustomization `json:"items"`
}
