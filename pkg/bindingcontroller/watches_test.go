// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"testing"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// The watched kinds' initial lists queue no binding (the bindings' own list queues every
// one), but a Cluster, policy or configuration created, changed or deleted later does.
func TestWatchedKindsInitialListsQueueNothing(t *testing.T) {
	p := notInInitialList()
	c := &clusterv1alpha1.Cluster{}
	if p.Create(event.CreateEvent{Object: c, IsInInitialList: true}) {
		t.Error("a Cluster of the initial list was mapped to its bindings")
	}
	if !p.Create(event.CreateEvent{Object: c}) {
		t.Error("a Cluster created after the start was not mapped to its bindings")
	}
	if !p.Update(event.UpdateEvent{ObjectOld: c, ObjectNew: c}) || !p.Delete(event.DeleteEvent{Object: c}) {
		t.Error("a change or a deletion was dropped")
	}
}
