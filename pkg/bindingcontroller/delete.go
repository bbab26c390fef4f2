package bindingcontroller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/binding-controller/binding-controller/pkg/names"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// reconcileDelete deletes every Work of a binding that is going away, then lets the
// binding go. It does not wait for the Works to disappear: a disconnected cluster may
// hold its Work's finalizer for a long time, and that must not hold the binding.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(s.obj, s.finalizer) {
		return ctrl.Result{}, nil
	}
	works, err := r.worksOf(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	applier := r.applier()
	results := make([]workapply.Result, 0, len(works))
	for i := range works {
		cluster, _ := names.ClusterOfExecutionNamespace(works[i].Namespace)
		results = append(results, applier.Delete(ctx, cluster, &works[i]))
	}
	if err := workapply.Aggregate(results); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, fmt.Sprintf("Failed to clean up works of %s", s), "failedClusters", failedClusters(results))
		r.event(s.obj, nil, corev1.EventTypeWarning, ReasonCleanupWorkFailed, err.Error())
		return ctrl.Result{}, err
	}
	r.blocked.record(s.indexKey(), nil)
	if err := r.releaseFinalizer(ctx, s); err != nil {
		return ctrl.Result{}, fmt.Errorf("removing finalizer %s from %s: %w", s.finalizer, s, err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted works of binding and released its finalizer", "works", len(works))
	return ctrl.Result{}, nil
}
