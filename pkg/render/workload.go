// SPDX-License-Identifier: Apache-2.0

package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// PruneWorkload removes from a workload everything a member cluster must assign for
// itself, as rendering does. Karmada's Work webhook prunes every manifest it admits the
// same way, and refuses a Work whose manifest it cannot prune.
func PruneWorkload(obj *unstructured.Unstructured) error { return prune(obj) }

// RecordManagedKeys re-records a workload's managed-labels and managed-annotations
// bookkeeping annotations from the labels and annotations it carries now, as rendering
// records them last. Whoever adds a label to a rendered workload (Karmada's Work webhook
// adds the Work's permanent ID) records them again.
func RecordManagedKeys(obj *unstructured.Unstructured) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	recordManagedKeys(annotations, obj.GetLabels())
	obj.SetAnnotations(annotations)
}
