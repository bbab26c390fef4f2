// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// setReplicas gives obj, the copy of a workload binding's template (reviseReplicas has
// checked that and refused negative counts), the cluster's share of the replicas, by
// Karmada's native ReviseReplica (pkg/resourceinterpreter/default/native/revisereplica.go):
// the field is set when the template has it (helper.ApplyReplica), and left out when it
// does not.
func setReplicas(obj *unstructured.Unstructured, target Target) error {
	switch obj.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps", "StatefulSet.apps", "ReplicaSet.apps":
		return applyReplica(obj, int64(target.Replicas), "replicas")
	case "Job.batch":
		return applyReplica(obj, int64(target.Replicas), "parallelism")
	}
	return nil
}

// applyReplica sets spec.<field> to replicas when the template has that field.
func applyReplica(obj *unstructured.Unstructured, replicas int64, field string) error {
	_, found, err := unstructured.NestedInt64(obj.Object, "spec", field)
	if err != nil || !found {
		return err
	}
	return unstructured.SetNestedField(obj.Object, replicas, "spec", field)
}

// divideCompletions gives the cluster its share of a Job's completions when the scheduler
// divides replicas, so the Job as a whole still completes as often as its template asks.
// The split is of the template's completions over every target cluster, requiredBy's
// included, weighted by each one's replicas (Karmada: pkg/controllers/binding/common.go
// ensureWork, divideReplicasByJobCompletions, applyJobCompletions). As in Karmada it
// applies to every kind named Job, whatever its group and whichever hook revised its
// replicas, and only where the revised object still has completions: a work queue Job
// keeps none.
func divideCompletions(obj, template *unstructured.Unstructured, spec *workv1alpha2.ResourceBindingSpec, target Target) error {
	// Karmada's needReviseJobCompletions: a binding with replicas, scheduled Divided.
	if template.GetKind() != "Job" || spec.Replicas <= 0 || spec.Placement == nil || spec.Placement.ReplicaScheduling == nil ||
		spec.Placement.ReplicaScheduling.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDivided {
		return nil
	}
	completions, found, err := unstructured.NestedInt64(template.Object, "spec", "completions")
	if err != nil {
		return fmt.Errorf("reading spec.completions: %w", err)
	}
	if !found {
		return nil
	}
	// Job completions is an int32 in the API; Karmada divides it as one.
	shares, ok := websterShares(int32(completions), Targets(spec), template.GetUID())
	if !ok {
		return nil
	}
	return applyReplica(obj, shares[target.Cluster], "completions")
}
