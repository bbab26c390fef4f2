// SPDX-License-Identifier: Apache-2.0

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

// maxEventMessage bounds an event's message; the whole text is in the WorksSynced
// condition and the log line.
const maxEventMessage = 1024

// event records on the binding and, when there is one, on its resource template, so a
// user looking at their Deployment sees why it did not spread.
func (r *Reconciler) event(binding runtime.Object, template *unstructured.Unstructured, eventType, reason, message string) {
	if r.Recorder == nil {
		return
	}
	if len(message) > maxEventMessage {
		message = message[:maxEventMessage-3] + "..."
	}
	r.Recorder.Event(binding, eventType, reason, message)
	if template != nil {
		r.Recorder.Event(template, eventType, reason, message)
	}
}
