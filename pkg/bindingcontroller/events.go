package bindingcontroller

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Event reasons, as Karmada's binding controller emits them.
const (
	ReasonSyncWorkSucceed   = "SyncWorkSucceed"
	ReasonSyncWorkFailed    = "SyncWorkFailed"
	ReasonCleanupWorkFailed = "CleanupWorkFailed"
)

// maxEventNote is the longest note events.k8s.io accepts.
const maxEventNote = 1024

// event records on the binding and, when there is one, on its resource template, so a
// user looking at their Deployment sees why it did not spread.
func (r *Reconciler) event(binding runtime.Object, template *unstructured.Unstructured, eventType, reason, message string) {
	if r.Recorder == nil {
		return
	}
	if len(message) > maxEventNote {
		message = message[:maxEventNote-3] + "..."
	}
	r.Recorder.Eventf(binding, nil, eventType, reason, "Sync", "%s", message)
	if template != nil {
		r.Recorder.Eventf(template, binding, eventType, reason, "Sync", "%s", message)
	}
}
