/*
Copyright 2026 The binding-controller Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

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
