// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

func (r *Reconciler) setupWithManager(mgr ctrl.Manager, name string, workers int,
	limiter workqueue.TypedRateLimiter[reconcile.Request], watchWorks bool) error {
	k := bindingAPIOf(r.Kind)
	r.watchesWorks = watchWorks
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(k.newObject(), builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, deletionOrMetadataChanged()))).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers, RateLimiter: limiter,
			NewQueue: func(name string, limiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
				r.queue = newBindingQueue(name, limiter, mgr.GetLogger())
				close(r.queueReady)
				return r.queue
			}})
	if r.Served.OverridePolicies {
		b = b.Watches(&policyv1alpha1.OverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsSelectedBy)).
			Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsSelectedBy))
	}
	if r.Served.Clusters {
		b = b.Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.bindingsTargeting),
			builder.WithPredicates(clusterChanged())).
			Watches(&clusterv1alpha1.Cluster{}, forgetDeletedClusters())
	}
	b = r.watchCustomizations(b)
	b = r.watchWebhookConfigurations(b)
	if watchWorks {
		// Metadata only: the cache's memory must not grow with manifest size.
		b = b.WatchesMetadata(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOwning), builder.WithPredicates(workChanged(r.bindingNotCached)))
	}
	release := func(ctx context.Context) error {
		return r.releaseParkedOncePrimed(ctrl.LoggerInto(ctx, mgr.GetLogger()))
	}
	if err := mgr.Add(manager.RunnableFunc(release)); err != nil {
		return err
	}
	return b.Complete(r)
}

// forgetDeletedClusters drops a deleted Cluster's per-cluster failure series, so the
// clusters that joined and left the fleet over time leave none behind.
func forgetDeletedClusters() handler.EventHandler {
	return handler.Funcs{DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		forgetCluster(e.Object.GetName())
	}}
}

// watchCustomizations re-syncs the bindings of a customization's target kind when the
// customization is created, changed or deleted. On a change the old and the new target
// are both re-synced, so a kind the customization stops targeting goes back to its
// bundled or native rules.
func (r *Reconciler) watchCustomizations(b *builder.Builder) *builder.Builder {
	if !r.Served.Customizations {
		return b
	}
	return b.Watches(&configv1alpha1.ResourceInterpreterCustomization{}, handler.EnqueueRequestsFromMapFunc(r.bindingsInterpretedBy))
}

// watchWebhookConfigurations re-syncs the bindings whose template kind a
// ResourceInterpreterWebhookConfiguration's ReviseReplica rules match, before and after a
// change, so a kind it takes up or lets go of is re-rendered.
func (r *Reconciler) watchWebhookConfigurations(b *builder.Builder) *builder.Builder {
	if !r.Served.Webhooks {
		return b
	}
	return b.Watches(&configv1alpha1.ResourceInterpreterWebhookConfiguration{}, handler.EnqueueRequestsFromMapFunc(r.bindingsRevisedByWebhooks))
}
