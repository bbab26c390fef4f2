// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// ReplicaReviser is the resource interpreter's ReviseReplica: it returns obj with its
// replicas set for cluster when a hook handles obj's kind, and whether one did. The
// native kinds are revised by render itself when no hook does. obj must not be modified,
// and a revised object must share no map or slice with it: render changes the revised
// object further, and obj is the template every cluster's Work is rendered from.
type ReplicaReviser interface {
	ReviseReplica(obj *unstructured.Unstructured, replicas int64, cluster string) (revised *unstructured.Unstructured, handled bool, err error)
}

// reviseReplicas returns a copy of the template with the cluster's replicas: through the
// interpreter for a binding that is a workload in Karmada's sense (replicas, replica
// requirements or components), else by the native rules. An interpreter error is
// returned as it is: it names the hook and the cluster. template is not modified; a hook
// returns a new object, so only the native rules copy it first.
func reviseReplicas(template *unstructured.Unstructured, spec *workv1alpha2.ResourceBindingSpec, target Target, interpreter ReplicaReviser) (*unstructured.Unstructured, error) {
	if !isWorkload(spec) {
		// Not a workload: the template keeps its own replica values.
		return template.DeepCopy(), nil
	}
	if target.Replicas < 0 {
		// Refused whichever hook would revise it.
		return nil, fmt.Errorf("setting replicas of %s for cluster %s: cluster %s is assigned %d replicas; replicas cannot be negative",
			describe(template), target.Cluster, target.Cluster, target.Replicas)
	}
	obj, err := reviseByHook(template, target, interpreter)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		obj = template.DeepCopy()
		if err := setReplicas(obj, target); err != nil {
			return nil, fmt.Errorf("setting replicas of %s for cluster %s: %w", describe(obj), target.Cluster, err)
		}
	}
	// Whichever hook set the replicas, a Job's completions are divided afterwards
	// (Karmada: ensureWork, applyJobCompletions after ReviseReplica).
	if err := divideCompletions(obj, template, spec, target); err != nil {
		return nil, fmt.Errorf("setting completions of %s for cluster %s: %w", describe(obj), target.Cluster, err)
	}
	return obj, nil
}

// reviseByHook returns the template revised by the interpreter's hook for its kind, or
// nil when no hook handles it.
func reviseByHook(template *unstructured.Unstructured, target Target, interpreter ReplicaReviser) (*unstructured.Unstructured, error) {
	if interpreter == nil {
		return nil, nil
	}
	revised, handled, err := interpreter.ReviseReplica(template, int64(target.Replicas), target.Cluster)
	if err != nil || !handled {
		return nil, err
	}
	return revised, nil
}

func isWorkload(spec *workv1alpha2.ResourceBindingSpec) bool {
	return spec.Replicas > 0 || spec.ReplicaRequirements != nil || len(spec.Components) > 0
}
