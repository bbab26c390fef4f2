// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
	"github.com/binding-controller/binding-controller/pkg/interpreter/webhook"
	"github.com/binding-controller/binding-controller/pkg/names"
	"github.com/binding-controller/binding-controller/pkg/overridepolicy"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcile brings every target cluster's Work to what the binding asks for. It runs the
// phases of a sync in order until one stops it, then reports once (finish): the
// WorksSynced condition, the log line, the events and the metrics all come from what the
// phases recorded in the scope.
func (r *Reconciler) reconcile(ctx context.Context, s *scope) (ctrl.Result, error) {
	if err := r.ensureFinalizer(ctx, s); err != nil {
		return ctrl.Result{}, fmt.Errorf("adding finalizer %s to %s: %w", s.finalizer, s, err)
	}
	// The rest of the sync works from whatever spec the finalizer was added to.
	s.plan()
	for _, phase := range []func(context.Context, *scope) bool{
		r.listWorks,
		// Orphans go before the template is read, whatever happens to it: a cluster the
		// binding no longer targets must lose its workload even while the template is missing.
		r.removeOrphanWorks,
		r.readTemplate,
		r.purgeEvictedDirectly,
		r.planRollout,
		r.ensureWorks,
		r.removeRenamedWorks,
	} {
		if !phase(ctx, s) {
			break
		}
	}
	return r.finish(ctx, s)
}

// plan reads from the spec, once, the clusters the sync serves and those being evicted.
func (s *scope) plan() {
	s.targets = render.Targets(s.binding.Spec)
	s.evictingKeep, s.evictingPurge = render.EvictingClusters(s.binding.Spec)
}

// stop is why a sync wrote no Work, which decides how it is reported and retried (finish).
type stop struct {
	reason stopReason
	// err is what stopped the sync; cond what the WorksSynced condition says about it.
	err  error
	cond metav1.Condition
}

type stopReason int

const (
	// stopToRetry: reading what the sync needs failed; returned, so retried with backoff.
	stopToRetry stopReason = iota
	// stopNoTemplate: the template is not there; the binding changes when it is back.
	stopNoTemplate
	// stopBadInput: the binding cannot be synced as it stands; parked until it changes.
	stopBadInput
	// stopWaitingForEviction: Works of clusters evicted with purgeMode Directly are still there.
	stopWaitingForEviction
)

// listWorks lists the binding's Works, once: the orphans, the purged and the renamed are
// all found among them.
func (r *Reconciler) listWorks(ctx context.Context, s *scope) bool {
	if s.live {
		// The Work cache is still listing: the Works to delete (orphans, renamed) wait for
		// the sync that follows it (afterWorksCached). Listing them live would cost the
		// API server a scan of every Work, over a second a sync at 100,000 Works.
		return true
	}
	works, err := r.worksNaming(ctx, s.binding)
	if err != nil {
		s.stopped = &stop{reason: stopToRetry, err: fmt.Errorf("listing works of %s: %w", s, err)}
		return false
	}
	s.works = works
	return true
}

// readTemplate reads the resource template; without it no Work can be written.
func (r *Reconciler) readTemplate(ctx context.Context, s *scope) bool {
	template, err := r.fetchTemplate(ctx, s)
	switch {
	case apierrors.IsNotFound(err):
		// The binding outlived its template, or the template is not there yet; a retry
		// would find the same. The binding changes when the template comes back.
		ctrl.LoggerFrom(ctx).Info("Resource template not found; nothing to sync until the binding changes", "resource", err.Error())
		s.stopped = &stop{reason: stopNoTemplate, cond: syncFailed(fmt.Errorf("resource template not found: %w", err))}
	case isInputError(err):
		s.stopped = &stop{reason: stopBadInput, err: err, cond: syncFailed(err)}
	case err != nil:
		s.stopped = &stop{reason: stopToRetry, err: fmt.Errorf("fetching resource template of %s: %w", s, err)}
	default:
		s.template = template
		return true
	}
	return false
}

// inputError is a binding that cannot be synced as it stands; retrying will not help.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

func isInputError(err error) bool {
	_, ok := err.(*inputError)
	return ok
}

// ensureWorks renders and applies every target cluster's Work, a bounded number at once.
// Each cluster gets its own result; nothing one cluster does stops another.
func (r *Reconciler) ensureWorks(ctx context.Context, s *scope) bool {
	targets := s.targets
	s.results = make([]workapply.Result, len(targets))
	s.rendered = make([]map[string]string, len(targets))
	policies, clusters, absent, err := r.overridesFor(ctx, s)
	if err != nil {
		// Without the policies no cluster's Work can be rendered right; retry them all.
		for i, t := range targets {
			s.results[i] = workapply.Result{Cluster: t.Cluster, Outcome: workapply.Failed, Err: fmt.Errorf("cluster %s: %w", t.Cluster, err)}
		}
		return true
	}
	applier := r.applier(s.live)
	workName := s.workName()
	reviser := r.replicaReviser(ctx)
	forEach(len(targets), r.ClusterSyncConcurrency, func(i int) {
		target := targets[i]
		desired, err := render.Work(s.binding, s.templateFor(target.Cluster), target, render.Overrides{Policies: policies,
			Cluster: clusters[target.Cluster], ClusterNotFound: absent[target.Cluster], Interpreter: reviser})
		var noCluster *ClusterNotFoundError
		if errors.As(err, &noCluster) {
			s.results[i] = workapply.Result{Cluster: target.Cluster, Outcome: workapply.Failed, Err: fmt.Errorf("cluster %s: %w", target.Cluster, err)}
			return
		}
		if err != nil {
			s.results[i] = workapply.RenderFailed(target.Cluster, err)
			return
		}
		s.rendered[i] = desired.Annotations
		s.results[i] = applier.Apply(ctx, target.Cluster, desired)
	}, func(i int, value any, stack []byte) {
		cluster := targets[i].Cluster
		work := types.NamespacedName{Namespace: names.ExecutionNamespace(cluster), Name: workName}
		s.results[i] = workapply.Panicked(cluster, work, value)
		ctrl.LoggerFrom(ctx).Error(s.results[i].Err, "Panic while syncing work", "cluster", cluster, "work", work.String(), "stack", string(stack))
	})
	return true
}

// removeOrphanWorks deletes the binding's Works that no target needs any more: those of
// clusters that were unscheduled. Clusters being gracefully evicted keep their Works until
// the eviction task ends. Which of a target cluster's Works is current is known only once
// its Work is rendered (removeRenamedWorks).
func (r *Reconciler) removeOrphanWorks(ctx context.Context, s *scope) bool {
	wanted := map[string]bool{}
	for _, t := range s.targets {
		wanted[t.Cluster] = true
	}
	applier := r.applier(s.live)
	for i := range s.works {
		work := &s.works[i]
		cluster, ok := names.ClusterOfExecutionNamespace(work.Namespace)
		if !ok || wanted[cluster] || s.evictingKeep[cluster] {
			continue
		}
		s.deletes = append(s.deletes, applier.Delete(ctx, cluster, work))
	}
	return true
}

// removeRenamedWorks deletes, in each cluster whose Work this sync wrote or found current,
// the binding's other Works listed there: named after an earlier template, or after an
// override policy that no longer renames the workload (Karmada names a Work after the
// overridden copy, and leaves the Work of the old name in place). A cluster whose Work
// failed keeps what it has, so it is never left with none.
func (r *Reconciler) removeRenamedWorks(ctx context.Context, s *scope) bool {
	current := map[string]string{}
	for _, res := range s.results {
		if res.Err == nil && res.Work.Name != "" {
			current[res.Cluster] = res.Work.Name
		}
	}
	applier := r.applier(s.live)
	for i := range s.works {
		cluster, ok := names.ClusterOfExecutionNamespace(s.works[i].Namespace)
		if name, rendered := current[cluster]; !ok || !rendered || s.works[i].Name == name {
			continue
		}
		s.deletes = append(s.deletes, applier.Delete(ctx, cluster, &s.works[i]))
	}
	return true
}

// purgeRecheckInterval is how often a binding waiting for purged Works looks again, should
// a deletion event be missed; Karmada's interval.
const purgeRecheckInterval = 5 * time.Second

// purgeEvictedDirectly deletes the Works of clusters evicted with purgeMode Directly. Until
// none is left no Work of the binding is written, so the workload never runs in the evicted
// cluster and its replacement at once. A Work the orphans' phase already tried to delete
// is not deleted twice in one sync: its result is among the deletes.
func (r *Reconciler) purgeEvictedDirectly(ctx context.Context, s *scope) bool {
	if len(s.evictingPurge) == 0 {
		return true
	}
	tried := map[types.NamespacedName]bool{}
	for _, d := range s.deletes {
		tried[d.Work] = true
	}
	applier := r.applier(s.live)
	waitingFor := sets.New[string]()
	for i := range s.works {
		cluster, ok := names.ClusterOfExecutionNamespace(s.works[i].Namespace)
		if !ok || !s.evictingPurge[cluster] {
			continue
		}
		waitingFor.Insert(cluster)
		if !tried[client.ObjectKeyFromObject(&s.works[i])] {
			s.deletes = append(s.deletes, applier.Delete(ctx, cluster, &s.works[i]))
		}
	}
	if waitingFor.Len() == 0 {
		return true
	}
	ctrl.LoggerFrom(ctx).Info("Waiting for the Works of clusters evicted with purgeMode Directly to be deleted", "clusters", sets.List(waitingFor))
	s.stopped = &stop{reason: stopWaitingForEviction, cond: waitingForEviction(sets.List(waitingFor))}
	return false
}

// worksNaming lists the Works whose annotations name binding b (its kind, namespace and
// name), from the cache and the ledger; b need not exist.
func (r *Reconciler) worksNaming(ctx context.Context, b render.Binding) ([]metav1.PartialObjectMetadata, error) {
	list := workapply.WorkMetadataList()
	if err := r.Client.List(ctx, list, client.MatchingFields{workByBindingIndex: bindingIndexValue(b.Kind, b.Namespace, b.Name)}); err != nil {
		return nil, err
	}
	works := list.Items
	cached := map[types.NamespacedName]bool{}
	for i := range works {
		cached[client.ObjectKeyFromObject(&works[i])] = true
	}
	owner := &metav1.ObjectMeta{Annotations: b.Annotations()}
	for _, w := range r.Ledger.WorksOf(owner) {
		if !cached[client.ObjectKeyFromObject(&w)] {
			works = append(works, w)
		}
	}
	return works, nil
}

// workName is the name of the binding's Works, from spec.resource: it is known even when
// the template is not there.
func (s *scope) workName() string {
	ref := s.binding.Spec.Resource
	namespace := ref.Namespace
	if namespace == "" && s.BindingKind == render.ResourceBindingKind {
		namespace = s.obj.GetNamespace()
	}
	return names.WorkName(ref.Kind, namespace, ref.Name)
}

// forEach runs fn for 0..n-1 with at most limit running at once, and returns when all are
// done. A panic in fn(i) is handed to recovered with its stack, so that it fails call i
// only: in a goroutine of its own it would be beyond controller-runtime's recovery and end
// the process. The sequential path recovers the same way, so the outcome does not depend
// on the concurrency.
func forEach(n, limit int, fn func(i int), recovered func(i int, value any, stack []byte)) {
	run := func(i int) {
		defer func() {
			if value := recover(); value != nil {
				recovered(i, value, debug.Stack())
			}
		}()
		fn(i)
	}
	if limit <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			run(i)
		}
		return
	}
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			run(i)
		}()
	}
	wg.Wait()
}

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

// +kubebuilder:rbac:groups=config.karmada.io,resources=resourceinterpretercustomizations;resourceinterpreterwebhookconfigurations,verbs=get;list;watch

// cachedCustomizations lists a kind's customizations from the cache, by index.
type cachedCustomizations struct{ reader client.Reader }

func (c cachedCustomizations) CustomizationsFor(ctx context.Context, gvk schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	list := &configv1alpha1.ResourceInterpreterCustomizationList{}
	if err := c.reader.List(ctx, list, client.MatchingFields{customizationByTargetIndex: gvk.String()}); err != nil {
		return nil, fmt.Errorf("listing ResourceInterpreterCustomizations: %w", err)
	}
	return list.Items, nil
}

// cachedWebhookConfigurations lists the ResourceInterpreterWebhookConfigurations from the
// cache, without copies: a few objects read on every revision, never modified.
type cachedWebhookConfigurations struct{ reader client.Reader }

func (c cachedWebhookConfigurations) WebhookConfigurations(ctx context.Context) ([]configv1alpha1.ResourceInterpreterWebhookConfiguration, error) {
	list := &configv1alpha1.ResourceInterpreterWebhookConfigurationList{}
	if err := c.reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// newInterpreter returns the resource interpreter the binding controllers share: the
// cached customizations and webhook configurations the API server serves, and the
// bundled customizations.
func newInterpreter(reader client.Reader, served ServedAPIs) *interpreter.Interpreter {
	var o interpreter.Options
	if served.Customizations {
		o.Customizations = cachedCustomizations{reader: reader}
	}
	if served.Webhooks {
		o.Webhooks = webhook.NewReviser(cachedWebhookConfigurations{reader: reader})
	}
	return interpreter.New(o)
}

// replicaReviser is the interpreter for one sync: its clusters share one lookup of the
// template kind's customizations.
func (r *Reconciler) replicaReviser(ctx context.Context) *interpreter.Bound {
	return r.Interpreter.For(ctx)
}

// overridesFor gathers, from the cache, the policies that may apply to the template and
// the Cluster objects of the targets (targetClusters). Kinds the API server does not
// serve are skipped.
func (r *Reconciler) overridesFor(ctx context.Context, s *scope) (
	policies overridepolicy.Policies, clusters map[string]*clusterv1alpha1.Cluster, absent map[string]error, err error) {
	template := s.template
	if r.Served.OverridePolicies {
		cops := &policyv1alpha1.ClusterOverridePolicyList{}
		if err := r.Client.List(ctx, cops); err != nil {
			return policies, nil, nil, fmt.Errorf("listing ClusterOverridePolicies: %w", err)
		}
		policies.Cluster = cops.Items
		if template.GetNamespace() != "" {
			ops := &policyv1alpha1.OverridePolicyList{}
			if err := r.Client.List(ctx, ops, client.InNamespace(template.GetNamespace())); err != nil {
				return policies, nil, nil, fmt.Errorf("listing OverridePolicies in %s: %w", template.GetNamespace(), err)
			}
			policies.Namespaced = ops.Items
		}
	}
	clusters, absent, err = r.targetClusters(ctx, s)
	return policies, clusters, absent, err
}

// targetClusters reads, from the cache and once a sync (the rollout's stages and the
// overrides both need them), the Cluster objects of the targets; a target with no
// Cluster object is in absent, with the error reading it gave. Without the Cluster kind
// served, a cluster is known by its name only.
func (r *Reconciler) targetClusters(ctx context.Context, s *scope) (map[string]*clusterv1alpha1.Cluster, map[string]error, error) {
	if s.clusters != nil {
		return s.clusters, s.absentClusters, nil
	}
	clusters, absent := map[string]*clusterv1alpha1.Cluster{}, map[string]error{}
	if r.Served.Clusters {
		for _, t := range s.targets {
			c := &clusterv1alpha1.Cluster{}
			err := r.Client.Get(ctx, types.NamespacedName{Name: t.Cluster}, c)
			switch {
			case apierrors.IsNotFound(err):
				// Karmada's override manager reads the Cluster first and writes no Work
				// without it; the Cluster's creation re-syncs the binding (watches).
				absent[t.Cluster] = &ClusterNotFoundError{Cluster: t.Cluster, Err: err}
			case err != nil:
				return nil, nil, fmt.Errorf("reading Cluster %s: %w", t.Cluster, err)
			default:
				clusters[t.Cluster] = c
			}
		}
	}
	s.clusters, s.absentClusters = clusters, absent
	return clusters, absent, nil
}

// ReasonClusterNotFound is the failure reason of a target cluster that has no Cluster object.
const ReasonClusterNotFound = "ClusterNotFound"

// ClusterNotFoundError says a target cluster has no Cluster object, so no Work is written
// for it, as in Karmada: a cluster that left the federation (or never joined) gets no
// workload. The Cluster's creation re-syncs the binding, so it is not retried meanwhile.
type ClusterNotFoundError struct {
	Cluster string
	Err     error
}

func (e *ClusterNotFoundError) Error() string         { return e.Err.Error() }
func (e *ClusterNotFoundError) Unwrap() error         { return e.Err }
func (e *ClusterNotFoundError) FailureReason() string { return ReasonClusterNotFound }
