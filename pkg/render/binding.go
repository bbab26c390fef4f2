// SPDX-License-Identifier: Apache-2.0

// Package render turns a binding, its resource template and one target cluster into the
// Work that cluster should have. It is a pure function of its inputs: no client, no
// clock, so every rule is pinned by table and golden tests without a server.
package render

import (
	"sort"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// BindingKind tells a namespaced ResourceBinding from a ClusterResourceBinding; they
// label and annotate their Works differently.
type BindingKind string

const (
	ResourceBindingKind        BindingKind = "ResourceBinding"
	ClusterResourceBindingKind BindingKind = "ClusterResourceBinding"
)

// Binding is what rendering needs to know of a ResourceBinding or ClusterResourceBinding.
type Binding struct {
	Kind      BindingKind
	Namespace string // empty for a ClusterResourceBinding
	Name      string
	// PermanentID is the binding's own permanent-id label value; Works carry it so
	// Karmada's status controllers find their binding.
	PermanentID string
	Spec        *workv1alpha2.ResourceBindingSpec
}

// PermanentIDLabel is the label key under which this kind of binding's permanent id is kept.
func (k BindingKind) PermanentIDLabel() string {
	if k == ClusterResourceBindingKind {
		return workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	return workv1alpha2.ResourceBindingPermanentIDLabel
}

// Annotations returns the annotations that point a Work (and its workload) back to the binding.
func (b Binding) Annotations() map[string]string {
	if b.Kind == ClusterResourceBindingKind {
		return map[string]string{workv1alpha2.ClusterResourceBindingNameAnnotation: b.Name}
	}
	return map[string]string{
		workv1alpha2.ResourceBindingNamespaceAnnotation: b.Namespace,
		workv1alpha2.ResourceBindingNameAnnotation:      b.Name,
	}
}

// Labels returns the labels a Work of this binding carries.
func (b Binding) Labels() map[string]string {
	if b.PermanentID == "" {
		return map[string]string{}
	}
	return map[string]string{b.Kind.PermanentIDLabel(): b.PermanentID}
}

// Target is one cluster a binding's workload goes to, with that cluster's share of replicas.
type Target struct {
	Cluster  string
	Replicas int32
}

// Targets returns the clusters that must hold a Work: the scheduler's clusters merged with
// the clusters that dependants require. The first entry naming a cluster wins, so a
// scheduled cluster keeps its own replicas and a cluster only a requiredBy snapshot brings
// keeps the replicas that snapshot gives it (Karmada: pkg/controllers/binding/common.go
// mergeTargetClusters); a cluster listed twice counts once, so one Work per cluster is
// written. The order is the scheduler's, then requiredBy's, so errors and events read in
// a stable order.
func Targets(spec *workv1alpha2.ResourceBindingSpec) []Target {
	seen := map[string]bool{}
	var targets []Target
	add := func(tc workv1alpha2.TargetCluster) {
		if seen[tc.Name] {
			return
		}
		seen[tc.Name] = true
		targets = append(targets, Target{Cluster: tc.Name, Replicas: tc.Replicas})
	}
	for _, tc := range spec.Clusters {
		add(tc)
	}
	for _, snapshot := range spec.RequiredBy {
		for _, tc := range snapshot.Clusters {
			add(tc)
		}
	}
	return targets
}

// EvictingClusters returns the clusters of graceful eviction tasks whose Works must stay
// while the task runs, and those (purgeMode Directly) whose Works must go first.
func EvictingClusters(spec *workv1alpha2.ResourceBindingSpec) (keep, purge map[string]bool) {
	keep, purge = map[string]bool{}, map[string]bool{}
	for _, task := range spec.GracefulEvictionTasks {
		if task.PurgeMode == policyv1alpha1.PurgeModeDirectly {
			purge[task.FromCluster] = true
			continue
		}
		keep[task.FromCluster] = true
	}
	return keep, purge
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// executionFinalizers is what a new Work carries: the execution side removes it once the
// workload is gone from the member cluster.
func executionFinalizers() []string {
	return []string{workv1alpha1.ExecutionControllerFinalizer}
}
