// SPDX-License-Identifier: Apache-2.0

package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
	"github.com/binding-controller/binding-controller/pkg/overridepolicy"
)

// Overrides are the override policies that may apply to the template, and the member
// cluster object they target by labels and fields (nil: known by name only); and the
// resource interpreter that revises replicas before they apply.
type Overrides struct {
	Policies overridepolicy.Policies
	Cluster  *clusterv1alpha1.Cluster
	// ClusterNotFound is what reading the target's Cluster object gave when the API server
	// serves the kind and holds none: as in Karmada, whose override manager reads the
	// Cluster first, no Work is rendered, and this is the cluster's error.
	ClusterNotFound error
	// Interpreter revises the replicas of kinds with an interpreter hook (nil: the
	// native kinds only).
	Interpreter ReplicaReviser
}

// Work renders the Work that target's cluster should hold for the binding's template:
// replicas set from the cluster's share, override policies applied, pruned, then labelled
// and annotated — Karmada's order. template is not modified. An error concerns this
// cluster alone.
func Work(b Binding, template *unstructured.Unstructured, target Target, o Overrides) (*workv1alpha1.Work, error) {
	if err := names.ValidateClusterName(target.Cluster); err != nil {
		return nil, err
	}
	workload, err := reviseReplicas(template, b.Spec, target, o.Interpreter)
	if err != nil {
		return nil, err
	}
	if o.ClusterNotFound != nil {
		// After the replicas: Karmada revises them before it reads the Cluster.
		return nil, o.ClusterNotFound
	}
	cluster := o.Cluster
	if cluster == nil {
		cluster = &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: target.Cluster}}
	}
	// workload is this cluster's own copy (reviseReplicas): overridden in place, not copied again.
	applied, err := overridepolicy.ApplyTo(workload, cluster, o.Policies)
	if err != nil {
		return nil, err
	}
	appliedAnnotations, err := applied.Annotations()
	if err != nil {
		return nil, fmt.Errorf("recording the overrides applied for cluster %s: %w", target.Cluster, err)
	}
	if err := prune(workload); err != nil {
		return nil, fmt.Errorf("pruning %s for cluster %s: %w", describe(template), target.Cluster, err)
	}

	// Named after the overridden copy, as Karmada names it (ensureWork calls
	// GenerateWorkName on it): a policy that renames the workload renames its Work.
	workName := names.WorkName(workload.GetKind(), workload.GetNamespace(), workload.GetName())
	workNamespace := names.ExecutionNamespace(target.Cluster)
	// Karmada reads the template's choice after overrides, so a policy may set it per cluster.
	conflict := conflictResolution(workload, b.Spec)

	labels := mergeInto(workload.GetLabels(), b.Labels())
	labels[workv1alpha1.ManagedByKarmadaLabel] = workv1alpha1.ManagedByKarmadaLabelValue
	workload.SetLabels(labels)

	annotations := mergeInto(workload.GetAnnotations(), b.Annotations())
	annotations[workv1alpha1.ResourceTemplateUIDAnnotation] = string(template.GetUID())
	annotations[workv1alpha1.WorkNameAnnotation] = workName
	annotations[workv1alpha1.WorkNamespaceAnnotation] = workNamespace
	annotations[workv1alpha1.ConflictResolutionAnnotation] = conflict
	if generation := template.GetGeneration(); generation > 0 {
		annotations[workv1alpha1.ResourceTemplateGenerationAnnotation] = strconv.FormatInt(generation, 10)
	}
	recordManagedKeys(annotations, labels)
	workload.SetAnnotations(annotations)

	raw, err := json.Marshal(workload.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding %s for cluster %s: %w", describe(template), target.Cluster, err)
	}

	workAnnotations := mergeInto(b.Annotations(), appliedAnnotations)
	workAnnotations[workv1alpha1.ConflictResolutionAnnotation] = conflict
	return &workv1alpha1.Work{
		TypeMeta: metav1.TypeMeta{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "Work"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        workName,
			Namespace:   workNamespace,
			Finalizers:  executionFinalizers(),
			Labels:      b.Labels(),
			Annotations: workAnnotations,
		},
		Spec: workv1alpha1.WorkSpec{
			Workload:                    workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
			SuspendDispatching:          ptr.To(suspendDispatching(b.Spec, target.Cluster)),
			PreserveResourcesOnDeletion: ptr.To(ptr.Deref(b.Spec.PreserveResourcesOnDeletion, false)),
		},
	}, nil
}

// conflictResolution is the template's own choice when it names a valid one, else the
// binding's, else abort: a Work never silently takes over a resource in a member cluster.
func conflictResolution(template *unstructured.Unstructured, spec *workv1alpha2.ResourceBindingSpec) string {
	switch v := template.GetAnnotations()[workv1alpha1.ConflictResolutionAnnotation]; v {
	case workv1alpha1.ConflictResolutionOverwrite, workv1alpha1.ConflictResolutionAbort:
		return v
	}
	if spec.ConflictResolution == policyv1alpha1.ConflictOverwrite {
		return workv1alpha1.ConflictResolutionOverwrite
	}
	return workv1alpha1.ConflictResolutionAbort
}

func suspendDispatching(spec *workv1alpha2.ResourceBindingSpec, cluster string) bool {
	if spec.Suspension == nil {
		return false
	}
	if ptr.Deref(spec.Suspension.Dispatching, false) {
		return true
	}
	return spec.Suspension.DispatchingOnClusters != nil &&
		slices.Contains(spec.Suspension.DispatchingOnClusters.ClusterNames, cluster)
}

// recordManagedKeys writes the bookkeeping annotations the execution side uses to drop
// labels and annotations that a later version of the template no longer has.
func recordManagedKeys(annotations, labels map[string]string) {
	annotations[workv1alpha1.ManagedAnnotationsAnnotation] = ""
	annotations[workv1alpha1.ManagedLabelsAnnotation] = ""
	annotations[workv1alpha1.ManagedAnnotationsAnnotation] = strings.Join(sortedKeys(annotations), ",")
	annotations[workv1alpha1.ManagedLabelsAnnotation] = strings.Join(sortedKeys(labels), ",")
}

// mergeInto returns a fresh map holding base overlaid with extra.
func mergeInto(base, extra map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(extra)+8)
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func describe(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return fmt.Sprintf("%s %s", obj.GetKind(), obj.GetName())
	}
	return fmt.Sprintf("%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
}
