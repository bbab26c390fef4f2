package bindingcontroller

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	return r.onLiveIfStale(ctx, s, func() error {
		return r.patchFinalizers(ctx, s, func(o client.Object) bool { return controllerutil.AddFinalizer(o, s.finalizer) })
	})
}

func (r *Reconciler) releaseFinalizer(ctx context.Context, s *scope) error {
	return r.onLiveIfStale(ctx, s, func() error {
		return r.patchFinalizers(ctx, s, func(o client.Object) bool { return controllerutil.RemoveFinalizer(o, s.finalizer) })
	})
}

// onLiveIfStale runs write, a patch of the binding guarded by its resourceVersion, and when
// that conflicts runs it once more on the binding read from the API server, as long as the
// binding's spec is still the one this sync worked from. The usual conflict is this
// process's own last write not yet in the cache: the finalizer or the condition is often
// already there, and write then sends nothing. Returning the conflict instead would
// requeue the binding for a sync with nothing to do, and a parked binding would be synced
// again. A binding with a newer spec keeps the conflict: its own event syncs it.
func (r *Reconciler) onLiveIfStale(ctx context.Context, s *scope, write func() error) error {
	err := write()
	if !apierrors.IsConflict(err) {
		return err
	}
	live := s.newObject()
	if getErr := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.obj), live); getErr != nil {
		return err
	}
	if live.GetUID() != s.obj.GetUID() || live.GetGeneration() != s.obj.GetGeneration() {
		return err
	}
	s.rebase(live)
	return write()
}
