// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"bytes"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/render"
)

// asAdmitted returns desired as Karmada's Work webhook would store it over a Work that
// carries labels: the webhook gives every Work a permanent ID (label
// work.karmada.io/permanent-id), copies it into each manifest's labels and records the
// manifest's managed labels again. Karmada's binding controller copies an existing Work's
// ID into what it writes before comparing, and so does this: otherwise every Work behind
// the webhook differs from its rendering, and each sync (each restart, whose ledger hashes
// the stored manifests) reads and rewrites it for nothing. Without the webhook no Work has
// the label, and desired is returned as it is. desired itself is never modified.
func asAdmitted(desired *workv1alpha1.Work, labels map[string]string) *workv1alpha1.Work {
	id := labels[workv1alpha2.WorkPermanentIDLabel]
	if id == "" {
		return desired
	}
	admitted := desired.DeepCopy()
	if admitted.Labels == nil {
		admitted.Labels = map[string]string{}
	}
	admitted.Labels[workv1alpha2.WorkPermanentIDLabel] = id
	// The webhook reads the instruction from the Work as stored: the existing labels with
	// what is written over them.
	instruction, ok := desired.Labels[workv1alpha1.PropagationInstructionLabel]
	if !ok {
		instruction = labels[workv1alpha1.PropagationInstructionLabel]
	}
	if instruction == workv1alpha1.PropagationInstructionSuppressed {
		return admitted
	}
	for i := range admitted.Spec.Workload.Manifests {
		if raw, ok := withPermanentID(admitted.Spec.Workload.Manifests[i].Raw, id); ok {
			admitted.Spec.Workload.Manifests[i].Raw = raw
		}
	}
	return admitted
}

// withPermanentID labels a manifest with the Work's permanent ID and records its managed
// keys again. Numbers keep their digits, and keys come out sorted as rendering writes
// them, so an unchanged Work hashes as the ledger's primed entry of the stored one.
func withPermanentID(raw []byte, id string) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var object map[string]any
	if err := d.Decode(&object); err != nil || object == nil {
		return nil, false
	}
	workload := &unstructured.Unstructured{Object: object}
	labels := workload.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[workv1alpha2.WorkPermanentIDLabel] = id
	workload.SetLabels(labels)
	render.RecordManagedKeys(workload)
	out, err := json.Marshal(object)
	return out, err == nil
}
