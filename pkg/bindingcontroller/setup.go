package bindingcontroller

import (
	"context"
	"fmt"
	"maps"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	"github.com/binding-controller/binding-controller/pkg/cacheable"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// Controller names, as --controllers knows them.
const (
	ResourceBindingControllerName        = "resourcebinding"
	ClusterResourceBindingControllerName = "clusterresourcebinding"
)

// RateLimiterOptions shape the per-binding retry backoff. The defaults are Karmada's.
type RateLimiterOptions struct {
	BaseDelay  time.Duration // first retry after a failure; default 5ms
	MaxDelay   time.Duration // cap of the exponential backoff; default 1000s
	QPS        float64       // overall retry rate; default 10
	BucketSize int           // overall retry burst; default 100
}

func (o RateLimiterOptions) withDefaults() RateLimiterOptions {
	if o.BaseDelay <= 0 {
		o.BaseDelay = 5 * time.Millisecond
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 1000 * time.Second
	}
	if o.QPS <= 0 {
		o.QPS = 10
	}
	if o.BucketSize <= 0 {
		o.BucketSize = 100
	}
	return o
}

// NewRateLimiter returns the slower of a per-item exponential backoff and an overall token bucket.
func NewRateLimiter(o RateLimiterOptions) workqueue.TypedRateLimiter[reconcile.Request] {
	o = o.withDefaults()
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](o.BaseDelay, o.MaxDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(o.QPS), o.BucketSize)},
	)
}

// Options configure both binding controllers.
type Options struct {
	// Controllers that run, by name; nil runs both.
	Enabled map[string]bool
	// ResourceBindingWorkers and ClusterResourceBindingWorkers are how many bindings of
	// each kind sync at once. Default 5.
	ResourceBindingWorkers        int
	ClusterResourceBindingWorkers int
	// ClusterSyncConcurrency bounds how many clusters of one binding are written at once. Default 8.
	ClusterSyncConcurrency int
	RateLimiter            RateLimiterOptions
	// BlockedWorkRecheckInterval: see Reconciler. Default 30s.
	BlockedWorkRecheckInterval time.Duration
	// StuckWorkWarningAfter: see Reconciler. Default 5m.
	StuckWorkWarningAfter time.Duration
	// DisableWorkWatch leaves recovery to the retry backoff alone, as Karmada's controller
	// does. Only for measuring what the watch buys (make bench-recovery).
	DisableWorkWatch bool
}

// Setup registers the Work index and the enabled binding controllers with mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("indexing works by binding: %w", err)
	}
	if opts.ClusterSyncConcurrency <= 0 {
		opts.ClusterSyncConcurrency = 8
	}
	policiesServed := served(mgr, policyv1alpha1.GroupVersion.WithKind("OverridePolicy")) &&
		served(mgr, policyv1alpha1.GroupVersion.WithKind("ClusterOverridePolicy"))
	clustersServed := served(mgr, clusterv1alpha1.GroupVersion.WithKind("Cluster"))
	interpreterServed := interpreterInputs{
		customizations: served(mgr, configv1alpha1.GroupVersion.WithKind("ResourceInterpreterCustomization")),
		webhooks:       served(mgr, configv1alpha1.GroupVersion.WithKind("ResourceInterpreterWebhookConfiguration")),
	}
	mgr.GetLogger().Info("Override inputs", "overridePoliciesServed", policiesServed, "clustersServed", clustersServed,
		"interpreterCustomizationsServed", interpreterServed.customizations, "interpreterWebhooksServed", interpreterServed.webhooks)
	if err := setupInterpreterIndexes(ctx, mgr.GetFieldIndexer(), interpreterServed.customizations); err != nil {
		return fmt.Errorf("indexing for the resource interpreter: %w", err)
	}
	resourceInterpreter := newInterpreter(mgr.GetClient(), interpreterServed)
	// One tracker for both kinds: they report into the same per-cluster gauge.
	blocked := newBlockedBindings()
	ledger := workapply.NewLedger()
	if err := primeLedgerOnStart(mgr, ledger); err != nil {
		return err
	}
	discovery, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("creating a discovery client: %w", err)
	}
	templateKinds := cacheable.NewKinds(discovery, mgr.GetAPIReader())
	for _, c := range []struct {
		name    string
		kind    render.BindingKind
		workers int
	}{
		{ResourceBindingControllerName, render.ResourceBindingKind, opts.ResourceBindingWorkers},
		{ClusterResourceBindingControllerName, render.ClusterResourceBindingKind, opts.ClusterResourceBindingWorkers},
	} {
		if opts.Enabled != nil && !opts.Enabled[c.name] {
			continue
		}
		if c.workers <= 0 {
			c.workers = 5
		}
		r := NewReconciler(Reconciler{
			Client:                     mgr.GetClient(),
			APIReader:                  mgr.GetAPIReader(),
			Recorder:                   mgr.GetEventRecorder("binding-controller"),
			Kind:                       c.kind,
			ClusterSyncConcurrency:     opts.ClusterSyncConcurrency,
			BlockedWorkRecheckInterval: opts.BlockedWorkRecheckInterval,
			StuckWorkWarningAfter:      opts.StuckWorkWarningAfter,
			Ledger:                     ledger,
			TemplateKinds:              templateKinds,
			PoliciesServed:             policiesServed,
			ClustersServed:             clustersServed,
			CustomizationsServed:       interpreterServed.customizations,
			WebhooksServed:             interpreterServed.webhooks,
			Interpreter:                resourceInterpreter,
			blocked:                    blocked,
		})
		if err := r.setupWithManager(mgr, c.name, c.workers, NewRateLimiter(opts.RateLimiter), !opts.DisableWorkWatch); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", c.name, err)
		}
	}
	return nil
}

func (r *Reconciler) setupWithManager(mgr ctrl.Manager, name string, workers int,
	limiter workqueue.TypedRateLimiter[reconcile.Request], watchWorks bool) error {
	k := kindOf(r.Kind)
	r.watchesWorks = watchWorks
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(k.newObject(), builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, finalizingPredicate()))).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers, RateLimiter: limiter})
	if r.PoliciesServed {
		b = b.Watches(&policyv1alpha1.OverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsSelectedBy)).
			Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsSelectedBy))
	}
	if r.ClustersServed {
		b = b.Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.bindingsTargeting),
			builder.WithPredicates(clusterChanged())).
			Watches(&clusterv1alpha1.Cluster{}, forgetDeletedClusters())
	}
	b = r.watchCustomizations(b)
	b = r.watchWebhookConfigurations(b)
	if watchWorks {
		// Metadata only: the cache's memory must not grow with manifest size.
		b = b.WatchesMetadata(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(r.bindingOfWork), builder.WithPredicates(workChanged(r.bindingNotCached)))
	}
	return b.Complete(r)
}

// bindingOfWork maps a Work to the binding of this reconciler's kind that owns it.
func (r *Reconciler) bindingOfWork(_ context.Context, obj client.Object) []reconcile.Request {
	k, key, ok := bindingOfWork(obj)
	if !ok || k != r.Kind {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

// finalizingPredicate lets through the binding updates that leave its generation alone
// but matter to its Works: the start of its deletion, and its labels (the permanent id).
func finalizingPredicate() predicate.Predicate {
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

// forgetDeletedClusters drops a deleted Cluster's per-cluster failure series, so the
// clusters that joined and left the fleet over time leave none behind.
func forgetDeletedClusters() handler.EventHandler {
	return handler.Funcs{DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		forgetCluster(e.Object.GetName())
	}}
}

// served tells whether the API server serves gvk. Karmada serves Clusters from its
// aggregated API server; a bare API server may serve neither Clusters nor policies.
func served(mgr ctrl.Manager, gvk schema.GroupVersionKind) bool {
	_, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
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

// primingTimeout bounds how long syncs wait for the ledger to be primed; past it, the
// Works priming did not reach are read on their first sync instead.
const primingTimeout = 2 * time.Minute

// primeLedgerOnStart fills the ledger from a paged list of the Works once this process
// leads, before its first sync: a restart then costs a few list requests instead of one
// read per Work. Syncs wait for it (Reconcile); a failure only costs those reads.
func primeLedgerOnStart(mgr ctrl.Manager, ledger *workapply.Ledger) error {
	ledger.ExpectPriming()
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		defer ledger.PrimingDone()
		ctx, cancel := context.WithTimeout(ctx, primingTimeout)
		defer cancel()
		start := time.Now()
		n, err := ledger.Prime(ctx, mgr.GetAPIReader())
		logger := mgr.GetLogger().WithValues("works", n, "took", time.Since(start).Round(time.Millisecond).String())
		if err != nil {
			logger.Error(err, "Priming the Work ledger stopped early; the other Works are read on their first sync")
			return nil
		}
		logger.Info("Primed the Work ledger")
		return nil
	}))
}
