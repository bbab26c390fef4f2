// SPDX-License-Identifier: Apache-2.0

// Package bindingcontroller turns ResourceBindings and ClusterResourceBindings into one
// Work per target cluster. Every cluster is synced on its own: a cluster that fails is
// reported and retried while the others keep their Works.
package bindingcontroller

import (
	"context"
	"errors"
	"fmt"
	"time"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/bindingqueue"
	"github.com/binding-controller/binding-controller/pkg/cacheable"
	"github.com/binding-controller/binding-controller/pkg/eventrepeats"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
	"github.com/binding-controller/binding-controller/pkg/ledgercheckpoint"
	"github.com/binding-controller/binding-controller/pkg/recent"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Config is what a Reconciler is made from (NewReconciler); it does not change while the
// Reconciler runs.
type Config struct {
	// Client reads from the informer cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server itself, for the rare reads the cache cannot answer.
	APIReader client.Reader
	// Recorder records core/v1 events, as Karmada's controllers do, under the name of
	// Karmada's controller for this kind of binding (bindingAPI.eventComponent).
	Recorder record.EventRecorder
	// Kind is the kind of binding this reconciler serves.
	Kind render.BindingKind
	// ClusterSyncConcurrency, BlockedWorkRecheckInterval, StuckWorkWarningAfter,
	// RolloutHealthPollInterval: see Options; zero takes the default.
	ClusterSyncConcurrency     int
	BlockedWorkRecheckInterval time.Duration
	StuckWorkWarningAfter      time.Duration
	RolloutHealthPollInterval  time.Duration
	// RolloutRevisionNamespace: see Options.
	RolloutRevisionNamespace string

	// Served says which optional inputs the API server serves.
	Served ServedAPIs
	// Interpreter revises replicas of kinds with interpreter hooks; nil: one with the
	// bundled customizations only.
	Interpreter *interpreter.Interpreter

	// Ledger remembers what was written, so a resync of current Works costs no request.
	Ledger *workapply.Ledger
	// WorkWriter creates and updates Works; nil writes them through Client.
	WorkWriter workapply.Writer
	// TemplateKinds refuses template kinds the cache could never list; nil trusts every kind.
	TemplateKinds *cacheable.Kinds
	// CacheSynced tells whether the cache of an object's kind has made its initial list:
	// the Works' and the templates', which the workers do not wait for (workcache); nil:
	// one cache, synced before any sync runs.
	CacheSynced func(client.Object) bool
}

// Reconciler syncs one kind of binding to its Works: its Config, and what it keeps while
// it runs.
type Reconciler struct {
	Config

	// deletionWaits feeds the blocked-bindings gauge; both kinds share one (Setup).
	deletionWaits *deletionWaits
	stuck         *stuckWarnings
	// rollouts feeds the rollouts-by-phase gauge; both kinds share one (Setup).
	rollouts *rolloutTracker
	// memory spares a sync mid-rollout the reads of what this process wrote itself.
	memory *rolloutMemory
	// watchesWorks: a Work's deletion requeues its binding. Set by setupWithManager.
	watchesWorks bool
	// queue is the controller's queue, set once it starts (queueReady closed); nil when
	// Reconcile is called directly.
	queue      *bindingqueue.Queue
	queueReady chan struct{}
	// parking holds the re-verifications that came up before the ledger was primed.
	parking *bindingqueue.Parking
	// released are the bindings whose finalizer this process let go. The cache may still
	// show such a binding alive for a moment after it is gone, and a sync of that stale
	// copy would write Works nobody will ever delete.
	released *recent.UIDs
}

// releasedMemory is how long a released binding is remembered: far longer than any cache lag.
const releasedMemory = 10 * time.Minute

// NewReconciler returns a Reconciler made from c; zero settings take their defaults
// (DefaultOptions).
func NewReconciler(c Config) *Reconciler {
	d := DefaultOptions()
	if c.ClusterSyncConcurrency <= 0 {
		c.ClusterSyncConcurrency = d.ClusterSyncConcurrency
	}
	if c.BlockedWorkRecheckInterval <= 0 {
		c.BlockedWorkRecheckInterval = d.BlockedWorkRecheckInterval
	}
	if c.StuckWorkWarningAfter <= 0 {
		c.StuckWorkWarningAfter = d.StuckWorkWarningAfter
	}
	if c.RolloutHealthPollInterval <= 0 {
		c.RolloutHealthPollInterval = d.RolloutHealthPollInterval
	}
	if c.RolloutRevisionNamespace == "" {
		c.RolloutRevisionNamespace = d.RolloutRevisionNamespace
	}
	if c.Ledger == nil {
		c.Ledger = workapply.NewLedger()
	}
	if c.Interpreter == nil {
		c.Interpreter = interpreter.New(interpreter.Options{})
	}
	if c.Recorder != nil {
		// A sync polled mid-rollout repeats its failures every few seconds; recorded each
		// time, they would use up the events the API server takes for the binding.
		c.Recorder = eventrepeats.NewRecorder(c.Recorder)
	}
	return &Reconciler{
		Config:        c,
		deletionWaits: newDeletionWaits(),
		stuck:         newStuckWarnings(),
		rollouts:      newRolloutTracker(),
		memory:        newRolloutMemory(),
		watchesWorks:  true,
		queueReady:    make(chan struct{}),
		parking:       &bindingqueue.Parking{},
		released:      recent.NewUIDs(releasedMemory),
	}
}

// Reconcile only fetches and dispatches; the phases live in sync.go and delete.go.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.dispatch(ctx, req)
	if errors.Is(err, reconcile.TerminalError(nil)) && r.queue != nil {
		// controller-runtime keeps the backoff of a binding parked with a terminal error;
		// once its input changes, a failure starts from the first step again, as after
		// any sync that ended.
		r.queue.Forget(req)
	}
	return res, err
}

func (r *Reconciler) dispatch(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if ready, err := r.awaitPriming(ctx, req); !ready {
		return ctrl.Result{}, err
	}
	k := bindingAPIOf(r.Kind)
	obj := k.newObject()
	if err := r.getBinding(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			if !r.worksCached() {
				return r.afterWorksCached(req, ctrl.Result{}), nil
			}
			return r.reconcileGone(ctx, k, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	if r.released.Has(obj.GetUID()) {
		// A stale cached copy of a binding this process already let go.
		return ctrl.Result{}, nil
	}
	s := newScope(k, obj)
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("binding", klog.KObj(obj)))
	if r.worksCached() {
		if !obj.GetDeletionTimestamp().IsZero() {
			return r.reconcileDelete(ctx, s)
		}
		return r.reconcile(ctx, s)
	}
	// The Works are still being listed after a start. A fresh change gets its targets'
	// Works at once, each read by name; what needs every Work of the binding waits: its
	// deletion, a re-verification, the Works to delete (the sync after the list), and an
	// eviction with purgeMode Directly, whose Works must be gone before any is written.
	reverification := r.queue.LowPriority(req) && !k.changedSinceSynced(obj)
	_, purging := render.EvictingClusters(s.binding.Spec)
	if !obj.GetDeletionTimestamp().IsZero() || reverification || len(purging) > 0 {
		return r.afterWorksCached(req, ctrl.Result{}), nil
	}
	s.live = true
	res, err := r.reconcile(ctx, s)
	return r.afterWorksCached(req, res), err
}

// getBinding reads the binding at key from the cache, or from the API server while the
// bindings are still being listed: a change made meanwhile is served at once
// (changesWhileListing), not after the list. Until then the Works are not cached either
// (workcache), and dispatch syncs it as it does any fresh change before the Works are in.
func (r *Reconciler) getBinding(ctx context.Context, key types.NamespacedName, obj client.Object) error {
	if r.CacheSynced != nil && !r.CacheSynced(obj) {
		return r.APIReader.Get(ctx, key, obj)
	}
	return r.Client.Get(ctx, key, obj)
}

// workCacheWait is how often a binding waiting for the Work cache to sync looks again,
// when it cannot be parked until then.
const workCacheWait = time.Second

// worksCached tells whether the Work cache has made its initial list: until then, a Work
// missing from it may exist all the same.
func (r *Reconciler) worksCached() bool {
	return r.CacheSynced == nil || r.CacheSynced(workapply.WorkMetadata())
}

// afterWorksCached has req synced again once the Work cache has synced: parked with the
// re-verifications of the start (released once the ledger is primed, which waits for the
// Work cache), or else looked at again shortly.
func (r *Reconciler) afterWorksCached(req ctrl.Request, res ctrl.Result) ctrl.Result {
	if r.queue != nil && r.parking.Park(req) {
		return res
	}
	if res.RequeueAfter == 0 || res.RequeueAfter > workCacheWait {
		res.RequeueAfter = workCacheWait
	}
	return res
}

// applier writes this reconciler's Works; live, it reads each of them from the API server
// instead of the cache, which has not synced yet.
func (r *Reconciler) applier(live bool) *workapply.Applier {
	return &workapply.Applier{Client: r.Client, Reader: r.APIReader, Ledger: r.Ledger, Writer: r.WorkWriter, Uncached: live}
}

// Controller names, as --controllers knows them.
const (
	ResourceBindingControllerName        = "resourcebinding"
	ClusterResourceBindingControllerName = "clusterresourcebinding"
)

// Setup registers the Work index and the enabled binding controllers with mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("indexing works by binding: %w", err)
	}
	opts = opts.withDefaults()
	apis := ServedAPIs{
		OverridePolicies: served(mgr, policyv1alpha1.GroupVersion.WithKind("OverridePolicy")) &&
			served(mgr, policyv1alpha1.GroupVersion.WithKind("ClusterOverridePolicy")),
		Clusters:       served(mgr, clusterv1alpha1.GroupVersion.WithKind("Cluster")),
		Customizations: served(mgr, configv1alpha1.GroupVersion.WithKind("ResourceInterpreterCustomization")),
		Webhooks:       served(mgr, configv1alpha1.GroupVersion.WithKind("ResourceInterpreterWebhookConfiguration")),
		Rollouts: served(mgr, rolloutsv1alpha1.GroupVersion.WithKind("RolloutPolicy")) &&
			served(mgr, rolloutsv1alpha1.GroupVersion.WithKind("ClusterRolloutPolicy")) &&
			served(mgr, rolloutsv1alpha1.GroupVersion.WithKind("BindingRollout")) &&
			served(mgr, rolloutsv1alpha1.GroupVersion.WithKind("ClusterBindingRollout")),
	}
	mgr.GetLogger().Info("Override inputs", "overridePoliciesServed", apis.OverridePolicies, "clustersServed", apis.Clusters,
		"interpreterCustomizationsServed", apis.Customizations, "interpreterWebhooksServed", apis.Webhooks,
		"rolloutsServed", apis.Rollouts)
	if err := setupInterpreterIndexes(ctx, mgr.GetFieldIndexer(), apis.Customizations); err != nil {
		return fmt.Errorf("indexing for the resource interpreter: %w", err)
	}
	// The controllers' own watches would start their informers only once the bindings
	// are cached, and the workers would wait for those lists too: made now, they are
	// listed beside the bindings.
	for _, obj := range apis.watched() {
		if _, err := mgr.GetCache().GetInformer(ctx, obj, cache.BlockUntilSynced(false)); err != nil {
			return fmt.Errorf("starting the cache of %T: %w", obj, err)
		}
	}
	resourceInterpreter := newInterpreter(mgr.GetClient(), apis)
	// One tracker for both kinds: they report into the same per-cluster gauge.
	deletionWaits := newDeletionWaits()
	rollouts := newRolloutTracker()
	ledger := workapply.NewLedger()
	var checkpoint *ledgercheckpoint.Store
	if cp := opts.LedgerCheckpoint; cp.Interval > 0 {
		checkpoint = &ledgercheckpoint.Store{Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Namespace: cp.Namespace, Name: cp.Name}
		if err := mgr.Add(&ledgerCheckpointer{store: checkpoint, ledger: ledger, cache: mgr.GetCache(), interval: cp.Interval, log: mgr.GetLogger()}); err != nil {
			return err
		}
	}
	if err := primeLedgerOnStart(mgr, ledger, mgr.GetAPIReader(), checkpoint); err != nil {
		return err
	}
	workWriter, err := workapply.NewMetadataWriter(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	discovery, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("creating a discovery client: %w", err)
	}
	templateKinds := cacheable.NewKinds(discovery, mgr.GetAPIReader())
	warmer := &templateCacheWarmer{cache: mgr.GetCache(), mapper: mgr.GetRESTMapper(), kinds: templateKinds, log: mgr.GetLogger()}
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
		warmer.bindings = append(warmer.bindings, bindingAPIOf(c.kind))
		r := NewReconciler(Config{
			Client:                     mgr.GetClient(),
			APIReader:                  mgr.GetAPIReader(),
			Recorder:                   mgr.GetEventRecorderFor(bindingAPIOf(c.kind).eventComponent), //nolint:staticcheck // core/v1, as Karmada's
			Kind:                       c.kind,
			ClusterSyncConcurrency:     opts.ClusterSyncConcurrency,
			BlockedWorkRecheckInterval: opts.BlockedWorkRecheckInterval,
			StuckWorkWarningAfter:      opts.StuckWorkWarningAfter,
			RolloutHealthPollInterval:  opts.RolloutHealthPollInterval,
			RolloutRevisionNamespace:   opts.RolloutRevisionNamespace,
			Ledger:                     ledger,
			WorkWriter:                 workWriter,
			TemplateKinds:              templateKinds,
			Served:                     apis,
			Interpreter:                resourceInterpreter,
			CacheSynced:                cacheSyncedOf(mgr.GetCache()),
		})
		r.deletionWaits = deletionWaits
		r.rollouts = rollouts
		if err := r.setupWithManager(mgr, c.name, c.workers, bindingqueue.NewRateLimiter(opts.RateLimiter), watchOptions{
			works: !opts.DisableWorkWatch, changesWhileListing: !opts.DisableChangesWhileListing}); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", c.name, err)
		}
	}
	if len(warmer.bindings) > 0 {
		if err := mgr.Add(warmer); err != nil {
			return err
		}
	}
	return nil
}

// served tells whether the API server serves gvk. Karmada serves Clusters from its
// aggregated API server; a bare API server may serve neither Clusters nor policies.
func served(mgr ctrl.Manager, gvk schema.GroupVersionKind) bool {
	_, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

// SetupIndexes registers the Work and binding indexes both binding controllers use. Call it
// once per manager.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, workapply.WorkMetadata(), workByBindingIndex, indexWorkByBinding); err != nil {
		return err
	}
	return indexBindings(ctx, indexer)
}

// Options configure both binding controllers. DefaultOptions holds every default; a zero
// field takes its default (withDefaults), so callers set only what they change.
type Options struct {
	// Controllers that run, by name; nil runs both.
	Enabled map[string]bool
	// ResourceBindingWorkers and ClusterResourceBindingWorkers are how many bindings of
	// each kind sync at once.
	ResourceBindingWorkers        int
	ClusterResourceBindingWorkers int
	// ClusterSyncConcurrency bounds how many clusters of one binding are written at once.
	ClusterSyncConcurrency int
	RateLimiter            RateLimiterOptions
	// BlockedWorkRecheckInterval is how long a binding whose only failures are blocked
	// clusters waits before it looks again, should the Work's deletion event be missed.
	BlockedWorkRecheckInterval time.Duration
	// StuckWorkWarningAfter is how long a cluster may stay blocked before one
	// WorkStuckDeleting event is raised.
	StuckWorkWarningAfter time.Duration
	// RolloutHealthPollInterval is how often a binding under a staged rollout whose
	// clusters are not all healthy yet reads their Works' status again: the Work watch is
	// of metadata, and a status change is not one.
	RolloutHealthPollInterval time.Duration
	// RolloutRevisionNamespace keeps the template revisions of ClusterResourceBindings
	// under a rollout: ControllerRevisions are namespaced and such a binding has no
	// namespace. A ResourceBinding's revisions stay in its own namespace.
	RolloutRevisionNamespace string
	// DisableWorkWatch leaves recovery to the retry backoff alone, as Karmada's controller
	// does. Only for measuring what the watch buys (make bench-recovery).
	DisableWorkWatch bool
	// DisableChangesWhileListing has a binding changed during a start's list of the
	// bindings wait for that list (changesWhileListing). Only for measuring what serving
	// them at once buys.
	DisableChangesWhileListing bool
	// LedgerCheckpoint is where the Work ledger's checkpoint is kept; a zero Interval
	// keeps none, and every start lists the Works.
	LedgerCheckpoint LedgerCheckpointOptions
}

// LedgerCheckpointOptions name the ConfigMaps of the Work ledger's checkpoint
// (<Name>-<i> in Namespace) and how often the leader saves it when the ledger changed.
type LedgerCheckpointOptions struct {
	Namespace string
	Name      string
	Interval  time.Duration
}

// DefaultOptions returns the defaults: Karmada's where Karmada has the same knob.
func DefaultOptions() Options {
	return Options{
		ResourceBindingWorkers:        5,
		ClusterResourceBindingWorkers: 5,
		ClusterSyncConcurrency:        8,
		RateLimiter:                   bindingqueue.DefaultRateLimiterOptions(),
		BlockedWorkRecheckInterval:    30 * time.Second,
		StuckWorkWarningAfter:         5 * time.Minute,
		RolloutHealthPollInterval:     5 * time.Second,
		RolloutRevisionNamespace:      "karmada-system",
	}
}

// withDefaults fills every zero field from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.ResourceBindingWorkers <= 0 {
		o.ResourceBindingWorkers = d.ResourceBindingWorkers
	}
	if o.ClusterResourceBindingWorkers <= 0 {
		o.ClusterResourceBindingWorkers = d.ClusterResourceBindingWorkers
	}
	if o.ClusterSyncConcurrency <= 0 {
		o.ClusterSyncConcurrency = d.ClusterSyncConcurrency
	}
	o.RateLimiter = o.RateLimiter.WithDefaults()
	if o.BlockedWorkRecheckInterval <= 0 {
		o.BlockedWorkRecheckInterval = d.BlockedWorkRecheckInterval
	}
	if o.StuckWorkWarningAfter <= 0 {
		o.StuckWorkWarningAfter = d.StuckWorkWarningAfter
	}
	if o.RolloutHealthPollInterval <= 0 {
		o.RolloutHealthPollInterval = d.RolloutHealthPollInterval
	}
	if o.RolloutRevisionNamespace == "" {
		o.RolloutRevisionNamespace = d.RolloutRevisionNamespace
	}
	return o
}

// RateLimiterOptions shape the per-binding retry backoff (bindingqueue).
type RateLimiterOptions = bindingqueue.RateLimiterOptions

// ServedAPIs says which of the controller's optional inputs the API server serves: what
// it does not serve is neither read nor watched. Karmada serves all of them (Clusters
// from its aggregated API server); a bare API server may serve none.
type ServedAPIs struct {
	// OverridePolicies: both OverridePolicy and ClusterOverridePolicy.
	OverridePolicies bool
	Clusters         bool
	// Customizations: ResourceInterpreterCustomizations, watched when served.
	Customizations bool
	// Webhooks: ResourceInterpreterWebhookConfigurations, watched and read from the
	// cache when served.
	Webhooks bool
	// Rollouts: the project's rollouts.binding-controller.io kinds, all four; without
	// them no template rolls out in stages.
	Rollouts bool
}

// watched returns an object of each served kind the controllers watch (setupWithManager)
// besides the bindings, Works and templates.
func (a ServedAPIs) watched() []client.Object {
	var out []client.Object
	if a.OverridePolicies {
		out = append(out, &policyv1alpha1.OverridePolicy{}, &policyv1alpha1.ClusterOverridePolicy{})
	}
	if a.Clusters {
		out = append(out, &clusterv1alpha1.Cluster{})
	}
	if a.Rollouts {
		out = append(out, &rolloutsv1alpha1.RolloutPolicy{}, &rolloutsv1alpha1.ClusterRolloutPolicy{})
	}
	if a.Customizations {
		out = append(out, &configv1alpha1.ResourceInterpreterCustomization{})
	}
	if a.Webhooks {
		out = append(out, &configv1alpha1.ResourceInterpreterWebhookConfiguration{})
	}
	return out
}

// bindingAPI holds what differs between ResourceBindings and ClusterResourceBindings; the sync
// path itself is shared.
type bindingAPI struct {
	render.BindingKind
	finalizer string
	// legacyName is how Karmada v1.13 named this kind in its "Failed to transform" log
	// line, which we keep word for word: operators grep for it.
	legacyName string
	// eventComponent is the source.component of this kind's events: the name of Karmada's
	// controller for it, which event exporters and alert rules select on.
	eventComponent string
	newObject      func() client.Object
	newList        func() client.ObjectList
	keysOf         func(client.ObjectList) []types.NamespacedName
	specOf         func(client.Object) *workv1alpha2.ResourceBindingSpec
	conditionsOf   func(client.Object) *[]metav1.Condition
}

var resourceBinding = bindingAPI{
	BindingKind: render.ResourceBindingKind,
	finalizer:   workv1alpha2.BindingControllerFinalizer,
	legacyName:  "resourceBinding",
	// Karmada: pkg/controllers/binding ControllerName.
	eventComponent: "binding-controller",
	newObject:      func() client.Object { return &workv1alpha2.ResourceBinding{} },
	newList:        func() client.ObjectList { return &workv1alpha2.ResourceBindingList{} },
	keysOf: func(l client.ObjectList) []types.NamespacedName {
		var keys []types.NamespacedName
		for _, b := range l.(*workv1alpha2.ResourceBindingList).Items {
			keys = append(keys, client.ObjectKeyFromObject(&b))
		}
		return keys
	},
	specOf: func(o client.Object) *workv1alpha2.ResourceBindingSpec {
		return &o.(*workv1alpha2.ResourceBinding).Spec
	},
	conditionsOf: func(o client.Object) *[]metav1.Condition {
		return &o.(*workv1alpha2.ResourceBinding).Status.Conditions
	},
}

var clusterResourceBinding = bindingAPI{
	BindingKind: render.ClusterResourceBindingKind,
	finalizer:   workv1alpha2.ClusterResourceBindingControllerFinalizer,
	legacyName:  "clusterResourceBinding",
	// Karmada: pkg/controllers/binding ClusterResourceBindingControllerName.
	eventComponent: "cluster-resource-binding-controller",
	newObject:      func() client.Object { return &workv1alpha2.ClusterResourceBinding{} },
	newList:        func() client.ObjectList { return &workv1alpha2.ClusterResourceBindingList{} },
	keysOf: func(l client.ObjectList) []types.NamespacedName {
		var keys []types.NamespacedName
		for _, b := range l.(*workv1alpha2.ClusterResourceBindingList).Items {
			keys = append(keys, client.ObjectKeyFromObject(&b))
		}
		return keys
	},
	specOf: func(o client.Object) *workv1alpha2.ResourceBindingSpec {
		return &o.(*workv1alpha2.ClusterResourceBinding).Spec
	},
	conditionsOf: func(o client.Object) *[]metav1.Condition {
		return &o.(*workv1alpha2.ClusterResourceBinding).Status.Conditions
	},
}

// changedSinceSynced tells whether a binding's spec changed since the controller last
// synced it (or never was): its WorksSynced condition names an older generation, or there
// is none. Found by a start's initial list, such a binding is a change not served yet,
// not a re-verification.
func (k bindingAPI) changedSinceSynced(obj client.Object) bool {
	cond := meta.FindStatusCondition(*k.conditionsOf(obj), workv1alpha2.ConditionWorksSynced)
	return cond == nil || cond.ObservedGeneration != obj.GetGeneration()
}

func bindingAPIOf(k render.BindingKind) bindingAPI {
	if k == render.ClusterResourceBindingKind {
		return clusterResourceBinding
	}
	return resourceBinding
}

// named names the binding of this kind at key, as String does; key need not exist.
func (k bindingAPI) named(key types.NamespacedName) string {
	return fmt.Sprintf("%s(%s)", k.BindingKind, objectKey(key))
}

// objectKey is ns/name, or name alone for a cluster-scoped object (NamespacedName.String
// would print "/name").
func objectKey(key types.NamespacedName) string {
	if key.Namespace == "" {
		return key.Name
	}
	return key.String()
}

// scope is what one reconcile of one binding gathers once and its phases share: the
// phases of a sync fill it in order (sync.go), and its finish step reports from it
// alone (status.go).
type scope struct {
	bindingAPI
	obj     client.Object
	binding render.Binding
	started time.Time

	// Read from the spec once, after the finalizer is added (plan).
	targets []render.Target
	// evictingKeep are the clusters of graceful evictions, whose Works stay while the
	// task runs; evictingPurge those evicted with purgeMode Directly, whose Works go first.
	evictingKeep, evictingPurge map[string]bool

	// clusters are the targets' Cluster objects and absentClusters those without one, read
	// once (targetClusters).
	clusters       map[string]*clusterv1alpha1.Cluster
	absentClusters map[string]error

	// works are the binding's Works, listed once (listWorks).
	works []metav1.PartialObjectMetadata
	// live: the Work cache has not synced yet: the targets' Works are read from the API
	// server, and none is deleted.
	live     bool
	template *unstructured.Unstructured

	// results holds one result per target, in targets' order (nil: no Work was written).
	results []workapply.Result
	// rendered holds the annotations of each target's rendered Work (targets' order; nil
	// where rendering failed), which record the override policies applied.
	rendered []map[string]string
	// deletes are the results of the Works deleted: orphans, purged, renamed.
	deletes []workapply.Result
	// stopped says why the sync wrote no Work; nil when it got to write them.
	stopped *stop
	// rollout is what the rollout phase decided; nil when no rollout policy governs the
	// template (then every cluster gets the template as it is).
	rollout *rollout
}

func newScope(k bindingAPI, obj client.Object) *scope {
	s := &scope{bindingAPI: k, started: time.Now()}
	s.rebase(obj)
	return s
}

// rebase makes obj, a newer copy of the same binding, the one the phases read and patch.
func (s *scope) rebase(obj client.Object) {
	s.obj = obj
	s.binding = render.Binding{
		Kind:        s.BindingKind,
		Namespace:   obj.GetNamespace(),
		Name:        obj.GetName(),
		PermanentID: obj.GetLabels()[s.PermanentIDLabel()],
		Spec:        s.specOf(obj),
	}
}

// String names the binding the way current Karmada's events do:
// ResourceBinding(ns/name), ClusterResourceBinding(name).
func (s *scope) String() string {
	return s.named(client.ObjectKeyFromObject(s.obj))
}

// legacyName names the binding as Karmada v1.13's log line did: resourceBinding(ns/name),
// clusterResourceBinding(name).
func (s *scope) legacyName() string {
	return fmt.Sprintf("%s(%s)", s.bindingAPI.legacyName, objectKey(client.ObjectKeyFromObject(s.obj)))
}

// indexKey is the value under which this binding's Works are indexed.
func (s *scope) indexKey() string {
	return bindingIndexValue(s.BindingKind, s.obj.GetNamespace(), s.obj.GetName())
}
