// SPDX-License-Identifier: Apache-2.0

package v1alpha1

// Kind and resource (plural) of Cluster.
const (
	ResourceKindCluster   = "Cluster"
	ResourcePluralCluster = "clusters"
)

// Values of ClusterSpec.SyncMode.
const (
	// SyncModePush: the control plane pushes resources to the member cluster.
	SyncModePush = "Push"
	// SyncModePull: an agent in the member cluster pulls resources.
	SyncModePull = "Pull"
)

// Condition types of a Cluster.
const (
	// ClusterConditionReady tells whether the cluster is healthy and ready.
	ClusterConditionReady = "Ready"
)

// TaintClusterUnreachable and TaintClusterNotReady are the taints Karmada puts on
// unreachable / not-ready clusters.
const (
	TaintClusterUnreachable = "cluster.karmada.io/unreachable"
	TaintClusterNotReady    = "cluster.karmada.io/not-ready"
)
