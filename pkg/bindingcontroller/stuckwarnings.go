// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// ReasonWorkStuckDeleting is the Warning event for a cluster blocked too long.
const ReasonWorkStuckDeleting = "WorkStuckDeleting"

// stuckWarnings remembers which stuck Works were already reported, so each gets one event.
type stuckWarnings struct {
	mu     sync.Mutex
	warned map[string]sets.Set[string] // binding → Work UIDs
}

func newStuckWarnings() *stuckWarnings {
	return &stuckWarnings{warned: map[string]sets.Set[string]{}}
}

// forget drops what was remembered of binding, once it is deleted or gone.
func (w *stuckWarnings) forget(binding string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.warned, binding)
}

// blockedBy returns the blocked results among results.
func blockedBy(results []workapply.Result) []*workapply.BeingDeletedError {
	var out []*workapply.BeingDeletedError
	for _, r := range results {
		if e, ok := workapply.AsBeingDeleted(r.Err); ok && r.Outcome == workapply.Blocked {
			out = append(out, e)
		}
	}
	return out
}

// warnStuck emits one WorkStuckDeleting event per Work that has been terminating longer
// than StuckWorkWarningAfter, and returns when the next one would become due (zero: none).
func (r *Reconciler) warnStuck(ctx context.Context, s *scope, results []workapply.Result) time.Duration {
	now := time.Now()
	terminating := blockedBy(results)
	r.stuck.mu.Lock()
	defer r.stuck.mu.Unlock()
	warned := r.stuck.warned[s.indexKey()]
	current := sets.New[string]()
	var nextDue time.Duration
	for _, b := range terminating {
		uid := string(b.UID)
		current.Insert(uid)
		age := now.Sub(b.Since)
		if age < r.StuckWorkWarningAfter {
			if due := r.StuckWorkWarningAfter - age; nextDue == 0 || due < nextDue {
				nextDue = due
			}
			continue
		}
		if warned.Has(uid) {
			continue
		}
		message := fmt.Sprintf("work %s has been terminating for %s; finalizers still holding it: %v",
			b.Work, age.Round(time.Second), b.Finalizers)
		ctrl.LoggerFrom(ctx).Info("Work stuck deleting", "work", b.Work.String(), "terminatingFor", age.Round(time.Second).String(),
			"finalizers", b.Finalizers)
		r.event(s.obj, nil, corev1.EventTypeWarning, ReasonWorkStuckDeleting, message)
		if warned == nil {
			warned = sets.New[string]()
		}
		warned.Insert(uid)
	}
	// Forget Works that are gone or no longer block, so the map does not grow.
	if warned = warned.Intersection(current); warned.Len() == 0 {
		delete(r.stuck.warned, s.indexKey())
	} else {
		r.stuck.warned[s.indexKey()] = warned
	}
	return nextDue
}
