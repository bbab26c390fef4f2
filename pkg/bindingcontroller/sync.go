package bindingcontroller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// reconcile brings every target cluster's Work to what the binding asks for.
func (r *Reconciler) reconcile(ctx context.Context, s *scope) (ctrl.Result, error) {
	logger := ctrl.LoggerFrom(ctx)
	if err := r.ensureFinalizer(ctx, s); err != nil {
		return ctrl.Result{}, fmt.Errorf("adding finalizer %s to %s: %w", s.finalizer, s, err)
	}

	// Orphans go first and whatever happens to the template: a cluster the binding no longer
	// targets must lose its workload even while the template is missing.
	orphans, err := r.removeOrphanWorks(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	template, err := r.fetchTemplate(ctx, s)
	switch {
	case apierrors.IsNotFound(err):
		// The binding outlived its template, or the template is not there yet; a retry
		// would find the same. The binding changes when the template comes back.
		logger.Info("Resource template not found; nothing to sync until the binding changes", "resource", err.Error())
		return ctrl.Result{}, errors.Join(r.setCondition(ctx, s, syncFailed(fmt.Errorf("resource template not found: %w", err))),
			workapply.Aggregate(orphans))
	case isInputError(err):
		return ctrl.Result{}, r.reportUnsyncable(ctx, s, err)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("fetching resource template of %s: %w", s, err)
	}

	if waiting, err := r.purgeEvictedDirectly(ctx, s); waiting || err != nil {
		return ctrl.Result{RequeueAfter: purgeRecheckInterval}, err
	}
	results := r.ensureWorks(ctx, s, template)
	targets := len(results)
	return r.report(ctx, s, template, targets, append(results, orphans...))
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
func (r *Reconciler) ensureWorks(ctx context.Context, s *scope, template *unstructured.Unstructured) []workapply.Result {
	targets := render.Targets(s.binding.Spec)
	results := make([]workapply.Result, len(targets))
	policies, clusters, err := r.overridesFor(ctx, template, targets)
	if err != nil {
		// Without the policies no cluster's Work can be rendered right; retry them all.
		for i, t := range targets {
			results[i] = workapply.Result{Cluster: t.Cluster, Outcome: workapply.Failed, Err: fmt.Errorf("cluster %s: %w", t.Cluster, err)}
		}
		return results
	}
	applier := r.applier()
	reviser := r.replicaReviser(ctx)
	forEach(len(targets), r.ClusterSyncConcurrency, func(i int) {
		target := targets[i]
		desired, err := render.Work(s.binding, template, target, render.Overrides{Policies: policies, Cluster: clusters[target.Cluster], Interpreter: reviser})
		if err != nil {
			results[i] = workapply.RenderFailed(target.Cluster, err)
			return
		}
		results[i] = applier.Apply(ctx, target.Cluster, desired)
	})
	return results
}

// removeOrphanWorks deletes the binding's Works that no target needs any more: clusters
// that were unscheduled, and Works named after an earlier template. Clusters being
// gracefully evicted keep their Works until the eviction task ends.
func (r *Reconciler) removeOrphanWorks(ctx context.Context, s *scope) ([]workapply.Result, error) {
	works, err := r.worksOf(ctx, s)
	if err != nil {
		return nil, err
	}
	wanted := map[string]bool{}
	for _, t := range render.Targets(s.binding.Spec) {
		wanted[t.Cluster] = true
	}
	keep, _ := render.EvictingClusters(s.binding.Spec)
	workName := s.workName()

	var results []workapply.Result
	applier := r.applier()
	for i := range works {
		work := &works[i]
		cluster, ok := names.ClusterOfExecutionNamespace(work.Namespace)
		if !ok {
			continue
		}
		if work.Name == workName && (wanted[cluster] || keep[cluster]) {
			continue
		}
		results = append(results, applier.Delete(ctx, cluster, work))
	}
	return results, nil
}

// purgeRecheckInterval is how often a binding waiting for purged Works looks again, should
// a deletion event be missed; Karmada's interval.
const purgeRecheckInterval = 5 * time.Second

// purgeEvictedDirectly deletes the Works of clusters evicted with purgeMode Directly and
// tells whether any is still there. Until all are gone no Work of the binding is written,
// so the workload never runs in the evicted cluster and its replacement at once.
func (r *Reconciler) purgeEvictedDirectly(ctx context.Context, s *scope) (bool, error) {
	_, purge := render.EvictingClusters(s.binding.Spec)
	if len(purge) == 0 {
		return false, nil
	}
	works, err := r.worksOf(ctx, s)
	if err != nil {
		return false, err
	}
	applier := r.applier()
	var waitingFor []string
	var results []workapply.Result
	for i := range works {
		cluster, ok := names.ClusterOfExecutionNamespace(works[i].Namespace)
		if !ok || !purge[cluster] {
			continue
		}
		waitingFor = append(waitingFor, cluster)
		if result := applier.Delete(ctx, cluster, &works[i]); result.Err != nil {
			results = append(results, result)
		}
	}
	if len(waitingFor) == 0 {
		return false, nil
	}
	sort.Strings(waitingFor)
	ctrl.LoggerFrom(ctx).Info("Waiting for the Works of clusters evicted with purgeMode Directly to be deleted", "clusters", waitingFor)
	cond := metav1.Condition{Type: workv1alpha2.ConditionWorksSynced, Status: metav1.ConditionFalse, Reason: ReasonWaitingForEviction,
		Message: bounded(fmt.Sprintf("waiting for the Works of clusters evicted with purgeMode Directly to be deleted: %s",
			strings.Join(waitingFor, ", ")), nil)}
	if err := r.setCondition(ctx, s, cond); err != nil {
		return true, err
	}
	return true, workapply.Aggregate(results)
}

// worksOf lists the metadata of every Work whose annotations name this binding: those in
// the cache, and those this process wrote that the cache has not seen yet.
func (r *Reconciler) worksOf(ctx context.Context, s *scope) ([]metav1.PartialObjectMetadata, error) {
	works, err := r.worksNaming(ctx, s.binding)
	if err != nil {
		return nil, fmt.Errorf("listing works of %s: %w", s, err)
	}
	return works, nil
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

// forEach runs fn for 0..n-1 with at most limit running at once, and returns when all are done.
func forEach(n, limit int, fn func(i int)) {
	if limit <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
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
			fn(i)
		}()
	}
	wg.Wait()
}
