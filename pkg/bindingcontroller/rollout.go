// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/pkg/rollouthealth"
	"github.com/binding-controller/binding-controller/pkg/rolloutplan"
	"github.com/binding-controller/binding-controller/pkg/rolloutpolicy"
	"github.com/binding-controller/binding-controller/pkg/templaterevision"
)

// +kubebuilder:rbac:groups=rollouts.binding-controller.io,resources=rolloutpolicies;clusterrolloutpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=rollouts.binding-controller.io,resources=bindingrollouts;clusterbindingrollouts,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=rollouts.binding-controller.io,resources=bindingrollouts/status;clusterbindingrollouts/status,verbs=update
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;create;patch;delete

// rollout is what the rollout phase decided for one sync, for ensureWorks and finish.
type rollout struct {
	// existing is the binding's rollout object as read; nil when there is none.
	existing rolloutObject
	// policy governs the template; nil when none does any more (the rollout is removed).
	policy *rolloutpolicy.Policy
	step   rolloutplan.Output
	// templates are the templates of the clusters the rollout holds on another revision.
	templates map[string]*unstructured.Unstructured
	// revisions are the binding's revisions as this sync left them, when it read them;
	// prune says whether one was added, so the oldest may go.
	revisions []appsv1.ControllerRevision
	prune     bool
}

// rolloutObject is a binding's rollout: a BindingRollout for a ResourceBinding, a
// ClusterBindingRollout for a ClusterResourceBinding, of the binding's name.
type rolloutObject interface {
	client.Object
	RolloutSpec() *rolloutsv1alpha1.BindingRolloutSpec
	RolloutStatus() *rolloutsv1alpha1.BindingRolloutStatus
}

func newRolloutObject(kind render.BindingKind) rolloutObject {
	if kind == render.ClusterResourceBindingKind {
		return &rolloutsv1alpha1.ClusterBindingRollout{}
	}
	return &rolloutsv1alpha1.BindingRollout{}
}

// revisionNamespace is where the binding's template revisions are kept: a
// ResourceBinding's own namespace; for a ClusterResourceBinding, which has none, the
// controller's (RolloutRevisionNamespace), as ControllerRevisions are namespaced.
func (r *Reconciler) revisionNamespace(s *scope) string {
	if ns := s.obj.GetNamespace(); ns != "" {
		return ns
	}
	return r.RolloutRevisionNamespace
}

// templateFor is the template cluster's Work is rendered from.
func (s *scope) templateFor(cluster string) *unstructured.Unstructured {
	if s.rollout != nil {
		if t, ok := s.rollout.templates[cluster]; ok {
			return t
		}
	}
	return s.template
}

// planRollout is the rollout phase: with a rollout policy governing the template, it
// decides which revision each cluster's Work carries (rolloutplan). Without one, it does
// nothing and costs nothing: every cluster gets the template as it is, as in Karmada.
func (r *Reconciler) planRollout(ctx context.Context, s *scope) bool {
	if !r.Served.Rollouts {
		return true
	}
	if err := r.decideRollout(ctx, s); err != nil {
		s.stopped = &stop{reason: stopToRetry, err: fmt.Errorf("rollout of %s: %w", s, err)}
		return false
	}
	return true
}

func (r *Reconciler) decideRollout(ctx context.Context, s *scope) error {
	policy, err := r.rolloutPolicyFor(ctx, s.template)
	if err != nil {
		return err
	}
	// The revision the template as it is makes: hashed once, it names the rollout's target.
	var current string
	if policy != nil {
		if current, err = templaterevision.NameOf(s.obj, s.template); err != nil {
			return err
		}
	}
	existing, err := r.readRollout(ctx, s, current)
	if err != nil {
		return err
	}
	if policy == nil {
		if existing != nil {
			// The policy went: the binding syncs as in Karmada again, every cluster on the
			// template as it is, and its rollout goes (finish).
			s.rollout = &rollout{existing: existing}
		}
		return nil
	}
	in := rolloutplan.Input{Now: time.Now(), Health: map[string]rollouthealth.Judgement{},
		Paused:   s.obj.GetAnnotations()[rolloutsv1alpha1.PausedAnnotation] == "true",
		Approved: s.obj.GetAnnotations()[rolloutsv1alpha1.ApproveAnnotation]}
	if existing != nil {
		in.Status = *existing.RolloutStatus()
	}
	in.Revision = current
	spec := policy.Spec
	in.ProgressDeadline = 10 * time.Minute
	if spec.ProgressDeadline != nil {
		in.ProgressDeadline = spec.ProgressDeadline.Duration
	}
	if spec.MaxFailures != nil {
		in.MaxFailures = int(*spec.MaxFailures)
	}
	in.RollbackOnFailure = spec.RollbackOnFailure
	clusters, _, err := r.targetClusters(ctx, s)
	if err != nil {
		return err
	}
	in.Stages = rolloutpolicy.Stages(spec, targetNames(s.targets), clusters)
	ro := &rollout{existing: existing, policy: policy, templates: map[string]*unstructured.Unstructured{}}
	if atRest(in) {
		// Every cluster runs the template as it is and nothing is under way: the rollout
		// costs this sync no request.
		ro.step = rolloutplan.Step(in)
		s.rollout = ro
		return nil
	}
	if err := r.readRolloutHealth(ctx, s, &in); err != nil {
		return err
	}
	ro.step = rolloutplan.Step(in)
	if err := r.heldBackTemplates(ctx, s, ro, in.Status.Revision, current); err != nil {
		return err
	}
	s.rollout = ro
	return nil
}

// heldBackTemplates gives ro the templates of the clusters its step holds on another
// revision than current, the template's: from the revisions this process remembers
// when the recorded rollout already names current (whose revision the sync that started
// the rollout made sure of, before it recorded it), and otherwise, or when one is not
// remembered, from the revisions listed live (readRevisions).
func (r *Reconciler) heldBackTemplates(ctx context.Context, s *scope, ro *rollout, recorded, current string) error {
	var names []string
	for _, name := range ro.step.Revisions {
		if name != current && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	byName, remembered := r.memory.revisionsNamed(s.indexKey(), s.obj.GetUID(), names)
	if recorded != current || !remembered {
		if err := r.readRevisions(ctx, s, ro); err != nil {
			return err
		}
		byName = map[string]*appsv1.ControllerRevision{}
		for i := range ro.revisions {
			if slices.Contains(names, ro.revisions[i].Name) {
				// A copy: remembered, a pointer into the list would keep all of it.
				byName[ro.revisions[i].Name] = ro.revisions[i].DeepCopy()
			}
		}
	}
	// One template per revision: the clusters share it as they share the current one,
	// which rendering only reads.
	templates := map[string]*unstructured.Unstructured{}
	for cluster, name := range ro.step.Revisions {
		if name == current {
			continue
		}
		if t, ok := templates[name]; ok {
			ro.templates[cluster] = t
			continue
		}
		rev, ok := byName[name]
		if !ok {
			// Its revision is gone (pruned by hand): the cluster keeps its Work as it is
			// rather than jump to a revision the rollout did not give it.
			return fmt.Errorf("cluster %s runs template revision %s, which is gone", cluster, name)
		}
		t, err := templaterevision.Template(rev, s.template)
		if err != nil {
			return err
		}
		templates[name], ro.templates[cluster] = t, t
	}
	r.memory.keepRevisions(s.indexKey(), s.obj.GetUID(), byName)
	return nil
}

// atRest tells a rollout that is over, with every cluster on the template as it is.
func atRest(in rolloutplan.Input) bool {
	if in.Status.Revision != in.Revision || in.Status.Phase != rolloutsv1alpha1.PhaseComplete {
		return false
	}
	for _, c := range in.Status.Clusters {
		if c.Revision != in.Revision {
			return false
		}
	}
	return true
}

// readRevisions lists the binding's revisions, live (they are not cached: only bindings
// under a rollout have any), and makes sure the template as it is has one.
func (r *Reconciler) readRevisions(ctx context.Context, s *scope, ro *rollout) error {
	store := templaterevision.Store{Client: r.Client, Reader: r.APIReader}
	revisions, err := store.List(ctx, s.obj, r.revisionNamespace(s))
	if err != nil {
		return err
	}
	gvk := workv1alpha2.GroupVersion.WithKind(string(s.BindingKind))
	_, ro.revisions, err = store.Ensure(ctx, s.obj, gvk, r.revisionNamespace(s), s.template, revisions)
	ro.prune = len(ro.revisions) > len(revisions)
	return err
}

// readRollout reads the binding's BindingRollout: nil when it has none. The rollout's
// status is its only memory, so a decision must never start from a stale copy: a cached
// copy that lags behind this process's last write would have a cluster updated again,
// or a whole fleet adopt a revision at once. The cache is believed when its copy is the
// one this process's last write of it returned (the cache has caught up with that write
// and nobody wrote since: the resourceVersion names one write), and when it shows the
// rollout over and the template unchanged since (nothing then depends on the copy);
// otherwise, when a policy governs (current, the template's revision, is set), the API
// server is asked. A process that starts remembers no write, and asks.
func (r *Reconciler) readRollout(ctx context.Context, s *scope, current string) (rolloutObject, error) {
	governed := current != ""
	key := client.ObjectKeyFromObject(s.obj)
	cached := newRolloutObject(s.BindingKind)
	err := r.Client.Get(ctx, key, cached)
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading its rollout object: %w", err)
	case err == nil && !governed:
		return ownRollout(cached, s), nil
	case err != nil && !governed:
		return nil, nil
	case err == nil && r.memory.isLastWrite(s.indexKey(), s.obj.GetUID(), cached.GetResourceVersion()):
		return ownRollout(cached, s), nil
	case err == nil && cached.RolloutStatus().Phase == rolloutsv1alpha1.PhaseComplete && cached.RolloutStatus().Revision == current:
		return ownRollout(cached, s), nil
	}
	live := newRolloutObject(s.BindingKind)
	switch err := r.APIReader.Get(ctx, key, live); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading its rollout object: %w", err)
	}
	return ownRollout(live, s), nil
}

// ownRollout is r when it is this binding's: a binding of the same name before this one
// had a rollout of its own.
func ownRollout(r rolloutObject, s *scope) rolloutObject {
	if uid := r.RolloutSpec().Binding.UID; uid != "" && uid != s.obj.GetUID() {
		return nil
	}
	return r
}

// rolloutPolicyFor is the rollout policy that governs template, from the cache.
func (r *Reconciler) rolloutPolicyFor(ctx context.Context, template *unstructured.Unstructured) (*rolloutpolicy.Policy, error) {
	namespaced := &rolloutsv1alpha1.RolloutPolicyList{}
	if ns := template.GetNamespace(); ns != "" {
		if err := r.Client.List(ctx, namespaced, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing RolloutPolicies in %s: %w", ns, err)
		}
	}
	clusterWide := &rolloutsv1alpha1.ClusterRolloutPolicyList{}
	if err := r.Client.List(ctx, clusterWide); err != nil {
		return nil, fmt.Errorf("listing ClusterRolloutPolicies: %w", err)
	}
	return rolloutpolicy.Select(template, namespaced.Items, clusterWide.Items), nil
}

// readRolloutHealth reads, live, the status of the Works of the clusters that run the
// current revision and whose health the step can use (rolloutplan.HealthUsed: not those
// of a stage already done), while a rollout is under way or the binding is new to its
// policy: a rollout at rest reads nothing. The Works are read a bounded number at once:
// read one after the other, a stage of many clusters would make each poll wait on all
// of them.
func (r *Reconciler) readRolloutHealth(ctx context.Context, s *scope, in *rolloutplan.Input) error {
	st, current := in.Status, in.Revision
	if st.Revision == current && (st.Phase == rolloutsv1alpha1.PhaseHalted || st.Phase == rolloutsv1alpha1.PhaseRolledBack) {
		return nil
	}
	onCurrent := map[string]bool{}
	for _, c := range st.Clusters {
		onCurrent[c.Name] = c.Revision == current
	}
	used := rolloutplan.HealthUsed(*in)
	var clusters []string
	for _, t := range s.targets {
		if known, ok := onCurrent[t.Cluster]; (!ok || known) && used(t.Cluster) {
			clusters = append(clusters, t.Cluster)
		}
	}
	workName := s.workName()
	judged := make([]*rollouthealth.Judgement, len(clusters))
	errs := make([]error, len(clusters))
	forEach(len(clusters), r.ClusterSyncConcurrency, func(i int) {
		work := &workv1alpha1.Work{}
		key := types.NamespacedName{Namespace: names.ExecutionNamespace(clusters[i]), Name: workName}
		switch err := r.APIReader.Get(ctx, key, work); {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs[i] = fmt.Errorf("reading work %s: %w", key, err)
		default:
			j := rollouthealth.Judge(work, s.template.GetGeneration())
			judged[i] = &j
		}
	}, func(i int, value any, _ []byte) {
		errs[i] = fmt.Errorf("reading the work of cluster %s: panic: %v", clusters[i], value)
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, j := range judged {
		if j != nil {
			in.Health[clusters[i]] = *j
		}
	}
	return nil
}

func targetNames(targets []render.Target) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = t.Cluster
	}
	return out
}

// reportRollout writes what the rollout phase decided, once the Works are written: the
// BindingRollout and its status, the events, and when to look again. A rollout whose
// policy is gone is deleted, and with it what it kept.
func (r *Reconciler) reportRollout(ctx context.Context, s *scope, res *ctrl.Result) error {
	ro := s.rollout
	if ro == nil || s.stopped != nil {
		return nil
	}
	if ro.policy == nil {
		r.rollouts.record(s.indexKey(), "")
		r.memory.forget(s.indexKey())
		if err := r.Client.Delete(ctx, ro.existing); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the rollout object of %s: %w", s, err)
		}
		store := templaterevision.Store{Client: r.Client, Reader: r.APIReader}
		return store.DeleteAll(ctx, s.obj, r.revisionNamespace(s))
	}
	obj := ro.existing
	if obj == nil {
		obj = newRolloutObject(s.BindingKind)
		obj.SetNamespace(s.obj.GetNamespace())
		obj.SetName(s.obj.GetName())
		obj.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(s.obj, workv1alpha2.GroupVersion.WithKind(string(s.BindingKind)))})
		*obj.RolloutSpec() = rolloutsv1alpha1.BindingRolloutSpec{Policy: ro.policy.PolicyReference,
			Binding: rolloutsv1alpha1.BindingReference{Name: s.obj.GetName(), UID: s.obj.GetUID()}}
		if err := r.writeRollout(s, obj, func() error { return r.Client.Create(ctx, obj) }); err != nil {
			return fmt.Errorf("creating the rollout object of %s: %w", s, err)
		}
	} else if obj.RolloutSpec().Policy != ro.policy.PolicyReference {
		// Another policy governs now: a more specific one came, or the one that governed went.
		base := obj.DeepCopyObject().(client.Object)
		obj.RolloutSpec().Policy = ro.policy.PolicyReference
		if err := r.writeRollout(s, obj, func() error { return r.Client.Patch(ctx, obj, client.MergeFrom(base)) }); err != nil {
			return fmt.Errorf("naming the policy in the rollout object of %s: %w", s, err)
		}
	}
	status := ro.step.Status
	status.ObservedGeneration = s.obj.GetGeneration()
	r.rollouts.record(s.indexKey(), status.Phase)
	observeStages(*obj.RolloutStatus(), status, time.Now())
	if !equality.Semantic.DeepEqual(*obj.RolloutStatus(), status) {
		*obj.RolloutStatus() = status
		if err := r.writeRollout(s, obj, func() error { return r.Client.Status().Update(ctx, obj) }); err != nil {
			return fmt.Errorf("writing the rollout status of %s: %w", s, err)
		}
	}
	for _, e := range ro.step.Events {
		eventType := corev1.EventTypeNormal
		if e.Warning {
			eventType = corev1.EventTypeWarning
		}
		r.event(s.obj, nil, eventType, e.Reason, e.Message)
	}
	if ro.prune {
		limit := 10
		if ro.policy.Spec.RevisionHistoryLimit != nil {
			limit = int(*ro.policy.Spec.RevisionHistoryLimit)
		}
		var keep []string
		for _, rev := range ro.step.Revisions {
			keep = append(keep, rev)
		}
		keep = append(keep, status.PreviousRevision)
		for _, c := range status.Clusters {
			keep = append(keep, c.PreviousRevision)
		}
		store := templaterevision.Store{Client: r.Client, Reader: r.APIReader}
		if err := store.Prune(ctx, ro.revisions, limit, keep...); err != nil {
			return err
		}
	}
	next := ro.step.NextCheck
	if status.Phase == rolloutsv1alpha1.PhaseProgressing && (next == 0 || next > r.RolloutHealthPollInterval) {
		next = r.RolloutHealthPollInterval
	}
	if next > 0 && (res.RequeueAfter == 0 || next < res.RequeueAfter) {
		res.RequeueAfter = next
	}
	return nil
}

// writeRollout runs write, a write of the binding's rollout object obj, and remembers
// the resourceVersion it returned: until the rollout is written again, a cached copy of
// that version is the rollout as it is (readRollout). A write that failed may still have
// been made, so after one nothing is remembered and the next sync asks the API server.
func (r *Reconciler) writeRollout(s *scope, obj rolloutObject, write func() error) error {
	if err := write(); err != nil {
		r.memory.wrote(s.indexKey(), s.obj.GetUID(), "")
		return err
	}
	r.memory.wrote(s.indexKey(), s.obj.GetUID(), obj.GetResourceVersion())
	return nil
}
