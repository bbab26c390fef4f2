// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// requeueFailed decides how a sync whose results failed (err, their aggregate) is retried,
// which depends on why they failed:
//   - a transient failure (the API server refused or failed a write) is returned, so the
//     binding is requeued with backoff;
//   - a cluster blocked by a terminating Work cannot succeed until that Work is gone, and
//     its deletion event requeues the binding at once: only a slow safety recheck, no
//     climb up the backoff ladder (without the Work watch there is no such event, and the
//     backoff is all there is, as in Karmada);
//   - a cluster whose Work cannot be rendered, or is too large to store (bad input), cannot
//     succeed until the binding (Karmada's detector updates it when the template changes)
//     or its policies change, which requeues it: parked, no retry.
//
// conditionErr is the failure to write the WorksSynced condition, itself transient;
// stuckDue is when the next WorkStuckDeleting warning becomes due (zero: none).
func (r *Reconciler) requeueFailed(ctx context.Context, results []workapply.Result, err, conditionErr error, stuckDue time.Duration) (ctrl.Result, error) {
	switch {
	case conditionErr != nil || anyFailed(results, transient):
		return ctrl.Result{}, err
	case anyFailed(results, awaitingDeletion) && r.watchesWorks:
		recheck := r.BlockedWorkRecheckInterval
		if stuckDue > 0 && stuckDue < recheck {
			recheck = stuckDue
		}
		return ctrl.Result{RequeueAfter: recheck}, nil
	case anyFailed(results, awaitingDeletion):
		// No Work watch to wake the binding: back off, as Karmada does.
		return ctrl.Result{}, err
	default:
		ctrl.LoggerFrom(ctx).Info("Parked until the binding, its policies or its Clusters change: retrying cannot fix the input")
		return ctrl.Result{}, nil
	}
}
