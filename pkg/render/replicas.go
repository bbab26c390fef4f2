package render

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// setReplicas gives obj the cluster's share of the binding's replicas. Bindings of
// workloads without replicas (spec.replicas 0) leave the template's own values alone.
func setReplicas(obj *unstructured.Unstructured, spec *workv1alpha2.ResourceBindingSpec, target Target) error {
	if spec.Replicas <= 0 {
		return nil
	}
	if target.Replicas < 0 {
		return fmt.Errorf("cluster %s is assigned %d replicas; replicas cannot be negative", target.Cluster, target.Replicas)
	}
	switch obj.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps", "StatefulSet.apps", "ReplicaSet.apps":
		return unstructured.SetNestedField(obj.Object, int64(target.Replicas), "spec", "replicas")
	case "Job.batch":
		if err := unstructured.SetNestedField(obj.Object, int64(target.Replicas), "spec", "parallelism"); err != nil {
			return err
		}
		return divideCompletions(obj, spec, target)
	}
	return nil
}

// divideCompletions splits a Job's completions across the clusters in proportion to their
// replicas when the scheduler divides replicas, so the Job as a whole still completes
// the number of times its template asks for.
func divideCompletions(obj *unstructured.Unstructured, spec *workv1alpha2.ResourceBindingSpec, target Target) error {
	if spec.Placement == nil || spec.Placement.ReplicaScheduling == nil ||
		spec.Placement.ReplicaScheduling.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDivided {
		return nil
	}
	completions, found, err := unstructured.NestedInt64(obj.Object, "spec", "completions")
	if err != nil {
		return fmt.Errorf("reading spec.completions: %w", err)
	}
	if !found {
		return nil
	}
	shares := divide(completions, spec.Clusters)
	return unstructured.SetNestedField(obj.Object, shares[target.Cluster], "spec", "completions")
}

// divide splits total across clusters in proportion to their replicas by the largest
// remainder method: the shares sum to total, and equal remainders go to clusters in
// name order, so every cluster's render agrees on the split.
func divide(total int64, clusters []workv1alpha2.TargetCluster) map[string]int64 {
	var weight int64
	for _, c := range clusters {
		weight += int64(c.Replicas)
	}
	shares := make(map[string]int64, len(clusters))
	if weight <= 0 {
		return shares
	}
	type part struct {
		name      string
		remainder int64
	}
	parts := make([]part, 0, len(clusters))
	var given int64
	for _, c := range clusters {
		if _, dup := shares[c.Name]; dup {
			continue
		}
		exact := total * int64(c.Replicas)
		shares[c.Name] = exact / weight
		given += exact / weight
		parts = append(parts, part{c.Name, exact % weight})
	}
	sort.SliceStable(parts, func(i, j int) bool {
		if parts[i].remainder != parts[j].remainder {
			return parts[i].remainder > parts[j].remainder
		}
		return parts[i].name < parts[j].name
	})
	for i := 0; given < total && len(parts) > 0; i = (i + 1) % len(parts) {
		shares[parts[i].name]++
		given++
	}
	return shares
}
