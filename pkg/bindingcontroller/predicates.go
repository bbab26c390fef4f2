// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"maps"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// deletionOrMetadataChanged lets through the binding updates that leave its generation
// alone but matter to its Works: the start of its deletion, its labels (the permanent id)
// and its annotations.
func deletionOrMetadataChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !e.ObjectNew.GetDeletionTimestamp().Equal(e.ObjectOld.GetDeletionTimestamp()) ||
				!maps.Equal(e.ObjectNew.GetLabels(), e.ObjectOld.GetLabels()) ||
				!maps.Equal(e.ObjectNew.GetAnnotations(), e.ObjectOld.GetAnnotations())
		},
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// clusterChanged passes the Cluster changes override targeting can see: labels and spec
// (provider, region, zones), not the status heartbeats.
func clusterChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !maps.Equal(e.ObjectNew.GetLabels(), e.ObjectOld.GetLabels()) ||
				e.ObjectNew.GetGeneration() != e.ObjectOld.GetGeneration()
		},
	}
}

// workChanged passes the Work events that can leave a binding out of sync: a Work gone
// (a blocked cluster may now be written, or a hand deletion must be undone), a Work
// whose content someone else changed, or a new Work whose binding is not in the cache
// (orphaned says so): the binding may be gone, and then its Works must go too
// (reconcileGone).
func workChanged(orphaned func(work client.Object) bool) predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return orphaned(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			// Only what the controller wrote: another writer's annotations are no drift,
			// and reacting to them would resync once per foreign patch.
			return e.ObjectNew.GetGeneration() != e.ObjectOld.GetGeneration() ||
				workapply.OwnedMetadataChanged(e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
