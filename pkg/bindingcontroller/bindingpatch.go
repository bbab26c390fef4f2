// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// patchFinalizers writes the binding's finalizers and nothing else. The patch carries the
// resourceVersion, so a concurrent change to the finalizers makes it fail and retry
// instead of dropping another controller's finalizer.
func (r *Reconciler) patchFinalizers(ctx context.Context, s *scope, change func(client.Object) bool) error {
	base := s.obj.DeepCopyObject().(client.Object)
	if !change(s.obj) {
		return nil
	}
	return r.Client.Patch(ctx, s.obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

func (r *Reconciler) ensureFinalizer(ctx context.Context, s *scope) error {
	// The rest of the sync works from whatever spec the finalizer was added to.
	return r.onLiveIfStale(ctx, s, false, func() error {
		return r.patchFinalizers(ctx, s, func(o client.Object) bool { return controllerutil.AddFinalizer(o, s.finalizer) })
	})
}

func (r *Reconciler) releaseFinalizer(ctx context.Context, s *scope) error {
	return r.onLiveIfStale(ctx, s, false, func() error {
		return r.patchFinalizers(ctx, s, func(o client.Object) bool { return controllerutil.RemoveFinalizer(o, s.finalizer) })
	})
}

// conflictRetry paces the re-reads of a binding whose guarded patch conflicts. Karmada's
// scheduler and binding status controller write the same status, so on a busy control
// plane a conflict is routine: it is resolved here, in place, and never becomes a
// requeue of the whole binding.
var conflictRetry = wait.Backoff{Steps: 16, Duration: 5 * time.Millisecond, Factor: 1.5, Jitter: 0.5, Cap: 500 * time.Millisecond}

// onLiveIfStale runs write, a patch of the binding guarded by its resourceVersion, and while
// that conflicts runs it again on the binding read from the API server: the other writer's
// fields are then the base of the patch, so nothing it wrote is overwritten. The usual
// first conflict is this process's own last write not yet in the cache, and write then
// often sends nothing. With sameSpec, a binding whose spec moved on (its generation)
// is left alone and nil returned: what write would record belongs to the older spec, and
// the newer spec's own event syncs it.
func (r *Reconciler) onLiveIfStale(ctx context.Context, s *scope, sameSpec bool, write func() error) error {
	err := write()
	backoff := conflictRetry
	for attempt := 0; apierrors.IsConflict(err) && attempt < conflictRetry.Steps; attempt++ {
		// The first conflict is most often this process's own last write, already live:
		// read it at once. A second means another writer is busy; give it room.
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(backoff.Step()):
			}
		}
		live := s.newObject()
		if getErr := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.obj), live); getErr != nil {
			return err
		}
		if live.GetUID() != s.obj.GetUID() {
			return err
		}
		if sameSpec && live.GetGeneration() != s.obj.GetGeneration() {
			ctrl.LoggerFrom(ctx).V(1).Info("Binding changed while its status was written; the sync of its new spec writes it", "generation", live.GetGeneration())
			return nil
		}
		s.rebase(live)
		err = write()
	}
	return err
}
