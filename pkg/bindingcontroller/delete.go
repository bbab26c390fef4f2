// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"fmt"

	"github.com/binding-controller/binding-controller/pkg/names"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcileDelete deletes every Work of a binding that is going away, then lets the
// binding go. It does not wait for the Works to disappear: a disconnected cluster may
// hold its Work's finalizer for a long time, and that must not hold the binding.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(s.obj, s.finalizer) {
		return ctrl.Result{}, nil
	}
	if !r.listWorks(ctx, s) {
		return ctrl.Result{}, s.stopped.err
	}
	works := s.works
	// Last chance before the binding is gone for good: ask the API server itself for the
	// Works its clusters should hold, in case neither the cache nor the ledger knows one
	// (another replica wrote it a moment ago).
	live, err := r.liveWorksOf(ctx, s, works)
	if err != nil {
		return ctrl.Result{}, err
	}
	works = append(works, live...)
	applier := r.applier(false)
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
	r.rollouts.record(s.indexKey(), "")
	r.memory.forget(s.indexKey())
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

// reconcileGone deletes the Works of a binding that no longer exists.
//
// A binding cannot normally go before its finalizer is released, and the finalizer is
// released only once its Works are deleted. But kube-apiserver may hard-delete an object
// whose finalizer was added while a DELETE of it was in flight
// (kubernetes/kubernetes#77988): the DELETE saw no finalizer, the finalizer patch
// succeeded, and the sync that followed wrote Works for a binding already gone. Nothing
// else would ever remove those Works, so they are removed here.
//
// Only the controller's own Works go: written by this process, or carrying the binding
// kind's permanent-id label as every Work the controller writes does. Works already being
// deleted, and Works this process deleted itself (the normal deletion path, seen here
// through a lagging cache), cost nothing.
func (r *Reconciler) reconcileGone(ctx context.Context, k bindingAPI, key types.NamespacedName) (ctrl.Result, error) {
	b := render.Binding{Kind: k.BindingKind, Namespace: key.Namespace, Name: key.Name}
	r.deletionWaits.record(bindingIndexValue(b.Kind, b.Namespace, b.Name), nil)
	r.stuck.forget(bindingIndexValue(b.Kind, b.Namespace, b.Name))
	r.rollouts.record(bindingIndexValue(b.Kind, b.Namespace, b.Name), "")
	r.memory.forget(bindingIndexValue(b.Kind, b.Namespace, b.Name))
	works, err := r.worksNaming(ctx, b)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("listing works of deleted %s: %w", k.named(key), err)
	}
	var orphans []metav1.PartialObjectMetadata
	for i := range works {
		w := &works[i]
		ours := r.Ledger.Wrote(client.ObjectKeyFromObject(w), w.UID) || w.Labels[k.PermanentIDLabel()] != ""
		if ours && w.DeletionTimestamp == nil && !r.Ledger.Deleted(w.UID) {
			orphans = append(orphans, *w)
		}
	}
	if len(orphans) == 0 {
		return ctrl.Result{}, nil
	}
	// The cache may simply not have seen the binding yet (a Work event can arrive first):
	// only the API server can say it is gone.
	err = r.APIReader.Get(ctx, key, k.newObject())
	switch {
	case err == nil:
		return ctrl.Result{}, nil
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("reading %s: %w", k.named(key), err)
	}

	logger := ctrl.LoggerFrom(ctx).WithValues("binding", klog.KRef(key.Namespace, key.Name))
	applier := r.applier(false)
	results := make([]workapply.Result, 0, len(orphans))
	for i := range orphans {
		cluster, _ := names.ClusterOfExecutionNamespace(orphans[i].Namespace)
		results = append(results, applier.Delete(ctx, cluster, &orphans[i]))
	}
	for _, result := range results {
		if result.Outcome == workapply.Deleted {
			orphanWorksDeleted.Inc()
		}
	}
	if err := workapply.Aggregate(results); err != nil {
		logger.Error(err, fmt.Sprintf("Failed to clean up works of deleted %s", k.named(key)), "failedClusters", failedClusters(results))
		return ctrl.Result{}, err
	}
	logger.Info("Deleted works of a binding that is gone without releasing its finalizer", "works", len(results))
	return ctrl.Result{}, nil
}

// bindingNotCached tells whether the binding a new Work names is missing from the cache:
// a Work of a binding that is gone, or one the cache has not seen yet. Only such Works need
// their binding looked at when they appear; for the others the binding's own events do.
func (r *Reconciler) bindingNotCached(work client.Object) bool {
	k, key, ok := bindingOfWork(work)
	if !ok || k != r.Kind {
		return false
	}
	// No deep copy: the object is only looked up, never read or changed.
	err := r.Client.Get(context.Background(), key, bindingAPIOf(k).newObject(), client.UnsafeDisableDeepCopy)
	return apierrors.IsNotFound(err)
}
