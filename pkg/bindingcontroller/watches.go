// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"fmt"
	"maps"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/bindingqueue"
	"github.com/binding-controller/binding-controller/pkg/interpreter/webhook"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// watchOptions say which of the optional watches a controller makes.
type watchOptions struct {
	// works: a Work's deletion or drift requeues its binding.
	works bool
	// changesWhileListing: while the bindings are cached apart and still being listed,
	// their changes are watched from the start on (changesWhileListing).
	changesWhileListing bool
}

func (r *Reconciler) setupWithManager(mgr ctrl.Manager, name string, workers int,
	limiter workqueue.TypedRateLimiter[reconcile.Request], watches watchOptions) error {
	k := bindingAPIOf(r.Kind)
	r.watchesWorks = watches.works
	gvk, err := apiutil.GVKForObject(k.newObject(), mgr.GetScheme())
	if err != nil {
		return err
	}
	// The bindings are watched through raw sources, For's logger keys kept, so that the
	// workers need not wait for their list: with the bindings cached apart (workcache),
	// the manager starts the controllers before it, and a sync asks whether the cache has
	// synced before trusting it (getBinding).
	bindings := func(h handler.EventHandler, preds ...predicate.Predicate) source.Source {
		src := source.Kind(mgr.GetCache(), k.newObject(), h, preds...)
		if r.CacheSynced == nil {
			return src
		}
		return startOnly{src}
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers, RateLimiter: limiter,
			NewQueue: func(name string, limiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
				r.queue = bindingqueue.New(name, limiter, mgr.GetLogger())
				close(r.queueReady)
				return r.queue
			}}).
		WithLogConstructor(reconcileLogger(mgr.GetLogger(), name, gvk)).
		WatchesRawSource(bindings(&handler.EnqueueRequestForObject{}, predicate.Or(predicate.GenerationChangedPredicate{}, deletionOrMetadataChanged()))).
		WatchesRawSource(bindings(changedWhileAway{k}))
	if watches.changesWhileListing && r.CacheSynced != nil {
		watcher, err := client.NewWithWatch(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient()})
		if err != nil {
			return fmt.Errorf("creating a client to watch %ss: %w", k.BindingKind, err)
		}
		b = b.WatchesRawSource(changesWhileListing{k: k, watcher: watcher, log: mgr.GetLogger(),
			listed: func() bool { return r.CacheSynced(k.newObject()) }})
	}
	if r.Served.OverridePolicies {
		b = b.Watches(&policyv1alpha1.OverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsSelectedBy), notListed).
			Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsSelectedBy), notListed)
	}
	if r.Served.Clusters {
		b = b.Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.bindingsTargeting),
			builder.WithPredicates(notInInitialList(), clusterChanged())).
			Watches(&clusterv1alpha1.Cluster{}, forgetDeletedClusters())
	}
	if r.Served.Rollouts {
		b = b.Watches(&rolloutsv1alpha1.RolloutPolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsSelectedBy), notListed).
			Watches(&rolloutsv1alpha1.ClusterRolloutPolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsSelectedBy), notListed)
	}
	b = r.watchCustomizations(b)
	b = r.watchWebhookConfigurations(b)
	if watches.works {
		// Metadata only: the cache's memory must not grow with manifest size. The workers
		// do not wait for this source to sync (startOnly): fresh changes are served while
		// the Works are still being listed (workcache).
		b = b.WatchesRawSource(startOnly{source.Kind[client.Object](mgr.GetCache(), workapply.WorkMetadata(),
			handler.EnqueueRequestsFromMapFunc(r.bindingsOwning), workChanged(r.bindingNotCached))})
	}
	release := func(ctx context.Context) error {
		return r.releaseParkedOncePrimed(ctrl.LoggerInto(ctx, mgr.GetLogger()))
	}
	if err := mgr.Add(manager.RunnableFunc(release)); err != nil {
		return err
	}
	return b.Complete(r)
}

// notInInitialList passes every event but the creates of an informer's initial list (or
// of its replay to a handler added later). The bindings' own initial list queues every
// binding at the same start; mapping each listed policy, Cluster or interpreter
// configuration to its bindings as well only repeats that. At 10,000 bindings over 10
// Clusters it listed and copied the bindings from the cache 10 times per controller, and
// the controller started no worker before that was done (a restart's first Work write
// came 1.2 s later with it, in two profiled runs at 100,000 Works).
func notInInitialList() predicate.Predicate {
	return predicate.Funcs{CreateFunc: func(e event.CreateEvent) bool { return !e.IsInInitialList }}
}

// notListed is notInInitialList as a Watches option.
var notListed = builder.WithPredicates(notInInitialList())

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
	return b.Watches(&configv1alpha1.ResourceInterpreterCustomization{}, handler.EnqueueRequestsFromMapFunc(r.bindingsInterpretedBy), notListed)
}

// watchWebhookConfigurations re-syncs the bindings whose template kind a
// ResourceInterpreterWebhookConfiguration's ReviseReplica rules match, before and after a
// change, so a kind it takes up or lets go of is re-rendered.
func (r *Reconciler) watchWebhookConfigurations(b *builder.Builder) *builder.Builder {
	if !r.Served.Webhooks {
		return b
	}
	return b.Watches(&configv1alpha1.ResourceInterpreterWebhookConfiguration{}, handler.EnqueueRequestsFromMapFunc(r.bindingsRevisedByWebhooks), notListed)
}

// bindingsSelectedBy maps an override policy to the bindings of this reconciler's kind whose
// templates it may select. On an update it is called for the old and the new policy, so a
// template the policy stops selecting is re-synced too.
func (r *Reconciler) bindingsSelectedBy(ctx context.Context, obj client.Object) []reconcile.Request {
	var selectors []policyv1alpha1.ResourceSelector
	switch p := obj.(type) {
	case *policyv1alpha1.OverridePolicy:
		selectors = p.Spec.ResourceSelectors
	case *policyv1alpha1.ClusterOverridePolicy:
		selectors = p.Spec.ResourceSelectors
	case *rolloutsv1alpha1.RolloutPolicy:
		selectors = p.Spec.ResourceSelectors
	case *rolloutsv1alpha1.ClusterRolloutPolicy:
		selectors = p.Spec.ResourceSelectors
	default:
		return nil
	}
	return r.bindingsIndexed(ctx, bindingByTemplateIndex, policyIndexKeys(obj.GetNamespace(), selectors))
}

// bindingsTargeting maps a Cluster to the bindings of this reconciler's kind that target it.
func (r *Reconciler) bindingsTargeting(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.bindingsIndexed(ctx, bindingByClusterIndex, []string{obj.GetName()})
}

func (r *Reconciler) bindingsIndexed(ctx context.Context, index string, values []string) []reconcile.Request {
	k := bindingAPIOf(r.Kind)
	seen := sets.New[types.NamespacedName]()
	var requests []reconcile.Request
	for _, v := range values {
		list := k.newList()
		if err := r.Client.List(ctx, list, client.MatchingFields{index: v}); err != nil {
			// The cache is the index; a failure here is a programming error, not load.
			continue
		}
		for _, key := range k.keysOf(list) {
			if !seen.Has(key) {
				seen.Insert(key)
				requests = append(requests, reconcile.Request{NamespacedName: key})
			}
		}
	}
	return requests
}

// bindingsOwning maps a Work to the binding of this reconciler's kind that owns it.
func (r *Reconciler) bindingsOwning(_ context.Context, obj client.Object) []reconcile.Request {
	k, key, ok := bindingOfWork(obj)
	if !ok || k != r.Kind {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

func (r *Reconciler) bindingsRevisedByWebhooks(ctx context.Context, obj client.Object) []reconcile.Request {
	c, ok := obj.(*configv1alpha1.ResourceInterpreterWebhookConfiguration)
	if !ok {
		return nil
	}
	const op = configv1alpha1.InterpreterOperationReviseReplica
	kinds, anyKind := webhook.Kinds(c, op)
	if anyKind {
		// A "*" in a rule matches kinds no index lookup can enumerate: match every
		// cached binding's template kind instead. Configurations change rarely.
		return r.bindingsWhere(ctx, func(ref workv1alpha2.ObjectReference) bool {
			return webhook.Handles(c, schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind), op)
		})
	}
	keys := make([]string, 0, len(kinds))
	for _, gvk := range kinds {
		keys = append(keys, gvk.String())
	}
	return r.bindingsIndexed(ctx, bindingByTemplateKindIndex, keys)
}

// bindingsWhere returns the cached bindings of this reconciler's kind whose template
// reference passes match.
func (r *Reconciler) bindingsWhere(ctx context.Context, match func(workv1alpha2.ObjectReference) bool) []reconcile.Request {
	k := bindingAPIOf(r.Kind)
	list := k.newList()
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var requests []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		if match(k.specOf(obj).Resource) {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
		return nil
	})
	return requests
}

func (r *Reconciler) bindingsInterpretedBy(ctx context.Context, obj client.Object) []reconcile.Request {
	c, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization)
	if !ok {
		return nil
	}
	return r.bindingsIndexed(ctx, bindingByTemplateKindIndex, []string{kindKey(c.Spec.Target.APIVersion, c.Spec.Target.Kind)})
}

// changedWhileAway queues each binding a start's initial list finds changed since its
// last sync (bindingAPI.changedSinceSynced) ahead of the rest of that list, which For's
// handler queues at handler.LowPriority in list order: such a change, made while the
// controller was down or before its list, would otherwise wait until every binding listed
// ahead of it is dequeued. A binding this controller synced at an older generation is
// queued as a fresh change; one it never synced at bindingqueue.NeverSynced. The queue
// raises the item it already holds.
type changedWhileAway struct{ k bindingAPI }

func (h changedWhileAway) Create(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok || !e.IsInInitialList || !h.k.changedSinceSynced(e.Object) {
		return
	}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)}
	if meta.FindStatusCondition(*h.k.conditionsOf(e.Object), workv1alpha2.ConditionWorksSynced) != nil {
		q.Add(req)
		return
	}
	p := bindingqueue.NeverSynced
	pq.AddWithOpts(priorityqueue.AddOpts{Priority: &p}, req)
}

func (changedWhileAway) Update(context.Context, event.UpdateEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}

func (changedWhileAway) Delete(context.Context, event.DeleteEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}

func (changedWhileAway) Generic(context.Context, event.GenericEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}

// reconcileLogger is the logger of each reconcile, with the keys For would have given it
// (controller, controllerGroup, controllerKind, the binding's kind): operators' log
// queries select on them.
func reconcileLogger(log logr.Logger, name string, gvk schema.GroupVersionKind) func(*reconcile.Request) logr.Logger {
	log = log.WithValues("controller", name, "controllerGroup", gvk.Group, "controllerKind", gvk.Kind)
	return func(req *reconcile.Request) logr.Logger {
		if req == nil {
			return log
		}
		return log.WithValues(gvk.Kind, klog.KRef(req.Namespace, req.Name), "namespace", req.Namespace, "name", req.Name)
	}
}

// startOnly is a source whose sync the controller does not wait for before it starts its
// workers: it hides the source's WaitForSync.
type startOnly struct{ src source.Source }

func (s startOnly) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	return s.src.Start(ctx, q)
}

func (s startOnly) String() string { return fmt.Sprintf("%v (not waited for)", s.src) }

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
