// SPDX-License-Identifier: Apache-2.0

package v1alpha2

// Kinds and resources (plurals) of this group version.
const (
	ResourceKindResourceBinding          = "ResourceBinding"
	ResourcePluralResourceBinding        = "resourcebindings"
	ResourceKindClusterResourceBinding   = "ClusterResourceBinding"
	ResourcePluralClusterResourceBinding = "clusterresourcebindings"
)

// Labels holding a binding's permanent ID; copied to its Works and workloads.
const (
	ResourceBindingPermanentIDLabel        = "resourcebinding.karmada.io/permanent-id"
	ClusterResourceBindingPermanentIDLabel = "clusterresourcebinding.karmada.io/permanent-id"
)

// WorkPermanentIDLabel is a Work's own ID, a random UUID that Karmada's Work webhook
// assigns when the Work has none and copies into each of the Work's manifests.
const WorkPermanentIDLabel = "work.karmada.io/permanent-id"

// Annotations naming the binding a Work (and its workload) belongs to.
const (
	ResourceBindingNamespaceAnnotation   = "resourcebinding.karmada.io/namespace"
	ResourceBindingNameAnnotation        = "resourcebinding.karmada.io/name"
	ClusterResourceBindingNameAnnotation = "clusterresourcebinding.karmada.io/name"
)

// Finalizers of the bindings, held until every Work of the binding is deleted.
const (
	BindingControllerFinalizer                = "karmada.io/binding-controller"
	ClusterResourceBindingControllerFinalizer = "karmada.io/cluster-resource-binding-controller"
)

// Condition types of a binding.
const (
	// ConditionWorksSynced is this controller's condition: whether the Works of every
	// target cluster are in sync with the binding.
	ConditionWorksSynced = "WorksSynced"
	// ConditionScheduled is set by Karmada's scheduler.
	ConditionScheduled = "Scheduled"
	// ConditionFullyApplied is set by Karmada's status controller when the resource is
	// applied on every target cluster.
	ConditionFullyApplied = "FullyApplied"
)
