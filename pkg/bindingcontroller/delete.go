// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/binding-controller/binding-controller/pkg/names"
	"github.com/binding-controller/binding-controller/pkg/render"
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
	// Last chance before the binding is gone for good: ask the API server itself for the
	// Works its clusters should hold, in case neither the cache nor the ledger knows one
	// (another replica wrote it a moment ago).
	live, err := r.liveWorksOf(ctx, s, works)
	if err != nil {
		return ctrl.Result{}, err
	}
	works = append(works, live...)
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
	r.deletionWaits.record(s.indexKey(), nil)
	r.stuck.forget(s.indexKey())
	if err := r.releaseFinalizer(ctx, s); err != nil {
		return ctrl.Result{}, fmt.Errorf("removing finalizer %s from %s: %w", s.finalizer, s, err)
	}
	r.released.Add(s.obj.GetUID())
	ctrl.LoggerFrom(ctx).Info("Deleted works of binding and released its finalizer", "works", len(works))
	return ctrl.Result{}, nil
}

// liveWorksOf reads from the API server the Work each cluster of the binding should hold,
// skipping those already known, and returns those that exist and name this binding.
func (r *Reconciler) liveWorksOf(ctx context.Context, s *scope, known []metav1.PartialObjectMetadata) ([]metav1.PartialObjectMetadata, error) {
	seen := map[types.NamespacedName]bool{}
	for i := range known {
		seen[client.ObjectKeyFromObject(&known[i])] = true
	}
	clusters := map[string]bool{}
	for _, t := range render.Targets(s.binding.Spec) {
		clusters[t.Cluster] = true
	}
	for _, task := range s.binding.Spec.GracefulEvictionTasks {
		clusters[task.FromCluster] = true
	}
	var found []metav1.PartialObjectMetadata
	for cluster := range clusters {
		if names.ValidateClusterName(cluster) != nil {
			continue
		}
		key := types.NamespacedName{Namespace: names.ExecutionNamespace(cluster), Name: s.workName()}
		if seen[key] {
			continue
		}
		work := workapply.WorkMetadata()
		err := r.APIReader.Get(ctx, key, work)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading work %s of %s: %w", key, s, err)
		}
		if k, owner, ok := bindingOfWork(work); ok && k == s.BindingKind && owner == client.ObjectKeyFromObject(s.obj) {
			found = append(found, *work)
		}
	}
	return found, nil
}
