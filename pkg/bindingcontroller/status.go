// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/overridepolicy"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// finish reports a sync once, from what its phases recorded in the scope: the metrics,
// the WorksSynced condition (written here and nowhere else), the log lines and the
// events, and how the binding is retried. The healthy clusters already have their Works;
// the failed ones are retried by their failure class (requeueFailed).
func (r *Reconciler) finish(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.stopped != nil && s.stopped.reason == stopToRetry {
		// Nothing new to tell the user yet: the condition keeps what the last sync found.
		// The deletes done meanwhile are counted, and a failed one retried with the rest.
		count(s.deletes)
		return ctrl.Result{}, errors.Join(s.stopped.err, workapply.Aggregate(s.deletes))
	}
	if s.stopped != nil {
		conditionErr := r.setCondition(ctx, s, r.tellStopped(ctx, s))
		return requeueStopped(s, conditionErr)
	}
	o := outcomeOf(s)
	conditionErr := r.setCondition(ctx, s, r.observeSynced(s, o))
	res, err := r.tellSynced(ctx, s, o, conditionErr)
	if rolloutErr := r.reportRollout(ctx, s, &res); rolloutErr != nil {
		// Retried: the rollout's state must reach the API server, whatever else ended.
		if errors.Is(err, reconcile.TerminalError(nil)) {
			err = nil
		}
		return ctrl.Result{}, errors.Join(err, rolloutErr)
	}
	return res, err
}

// outcome is what a sync that got to write Works did: every result (the targets', then
// the deletes'), and their aggregates. As in Karmada, a failed target is a
// SyncWorkFailed, a failed orphan delete a CleanupWorkFailed.
type outcome struct {
	all                      []workapply.Result
	err, syncErr, cleanupErr error
}

func outcomeOf(s *scope) outcome {
	all := append(s.results[:len(s.results):len(s.results)], s.deletes...)
	return outcome{all: all, err: workapply.Aggregate(all),
		syncErr: workapply.Aggregate(s.results), cleanupErr: workapply.Aggregate(s.deletes)}
}

// observeSynced records the metrics of a sync that got to write Works, and returns its
// condition.
func (r *Reconciler) observeSynced(s *scope, o outcome) metav1.Condition {
	observe(s, o.all, o.err != nil)
	if o.cleanupErr == nil {
		// Karmada stops before syncing the targets when an orphan delete fails, and
		// observes no sync then.
		observeKarmadaSync(s, o.syncErr != nil)
	}
	r.deletionWaits.record(s.indexKey(), blockedClusters(o.all))
	return worksSynced(len(s.results), o.all)
}

// tellSynced logs and records the events of a sync that got to write Works, once its
// condition is written, and decides how its failed clusters are retried.
func (r *Reconciler) tellSynced(ctx context.Context, s *scope, o outcome, conditionErr error) (ctrl.Result, error) {
	logger := ctrl.LoggerFrom(ctx)
	all, syncErr, cleanupErr := o.all, o.syncErr, o.cleanupErr
	stuckDue := r.warnStuck(ctx, s, all)
	r.recordOverrideEvents(s.template, s.rendered, s.results)

	if err := o.err; err != nil {
		// The log line of Karmada v1.13, kept word for word: operators grep for it.
		logger.Error(err, fmt.Sprintf("Failed to transform %s to works. Error: %s.", s.legacyName(), err.Error()),
			"failedClusters", failedClusters(all))
		if syncErr != nil {
			r.event(s.obj, s.template, corev1.EventTypeWarning, ReasonSyncWorkFailed, syncErr.Error())
		}
		if cleanupErr != nil {
			r.event(s.obj, nil, corev1.EventTypeWarning, ReasonCleanupWorkFailed, cleanupErr.Error())
		}
		return r.requeueFailed(ctx, all, err, conditionErr, stuckDue)
	}
	if wrote(all) {
		// Current Karmada's words: Sync work of ResourceBinding(ns/name) successful.
		message := fmt.Sprintf("Sync work of %s successful.", s)
		logger.Info(message, "clusters", len(s.results))
		r.event(s.obj, s.template, corev1.EventTypeNormal, ReasonSyncWorkSucceed, message)
	}
	return ctrl.Result{}, conditionErr
}

// tellStopped records the metrics, log lines and events of a sync that wrote no Work, for
// the reason s.stopped gives, and of the deletes it did all the same (orphans, purged
// Works); it returns the condition, which names a failed delete too.
func (r *Reconciler) tellStopped(ctx context.Context, s *scope) metav1.Condition {
	logger := ctrl.LoggerFrom(ctx)
	if stop := s.stopped; stop.reason == stopBadInput {
		observeDuration(s, true)
		logger.Error(stop.err, fmt.Sprintf("Failed to transform %s to works. Error: %s.", s.legacyName(), stop.err.Error()),
			"retry", "when the binding changes")
		r.event(s.obj, nil, corev1.EventTypeWarning, ReasonSyncWorkFailed, stop.err.Error())
	}
	count(s.deletes)
	r.deletionWaits.record(s.indexKey(), nil)
	if err := workapply.Aggregate(s.deletes); err != nil {
		logger.Error(err, fmt.Sprintf("Failed to clean up works of %s", s), "failedClusters", failedClusters(s.deletes))
		r.event(s.obj, nil, corev1.EventTypeWarning, ReasonCleanupWorkFailed, err.Error())
	}
	cond := s.stopped.cond
	cond.Message = bounded(cond.Message, failureParts(s.deletes))
	return cond
}

// requeueStopped decides how a sync that wrote no Work is retried. Whatever held the Works
// back, a failed delete or condition write is transient: it is returned, so the binding is
// retried with backoff instead of keeping the Work until the binding changes. Bad input is
// otherwise a terminal error: controller-runtime counts it and does not retry it.
func requeueStopped(s *scope, conditionErr error) (ctrl.Result, error) {
	if err := errors.Join(conditionErr, workapply.Aggregate(s.deletes)); err != nil {
		return ctrl.Result{}, err
	}
	switch s.stopped.reason {
	case stopBadInput:
		return ctrl.Result{}, reconcile.TerminalError(s.stopped.err)
	case stopWaitingForEviction:
		return ctrl.Result{RequeueAfter: purgeRecheckInterval}, nil
	}
	return ctrl.Result{}, nil
}

func wrote(results []workapply.Result) bool {
	for _, r := range results {
		if r.Wrote() {
			return true
		}
	}
	return false
}

func failedClusters(results []workapply.Result) []string {
	var clusters []string
	for _, r := range results {
		if r.Err != nil {
			clusters = append(clusters, r.Cluster)
		}
	}
	return clusters
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings/status;clusterresourcebindings/status,verbs=patch

// Reasons of the WorksSynced condition.
const (
	ReasonSynced          = "Synced"
	ReasonPartiallySynced = "PartiallySynced"
	ReasonSyncFailed      = "SyncFailed"
	// ReasonWaitingForEviction: Works of clusters evicted with purgeMode Directly must be
	// gone before any Work is written.
	ReasonWaitingForEviction = "WaitingForEviction"
)

// maxConditionMessage bounds the condition message so a binding with hundreds of failing
// clusters stays readable and small.
const maxConditionMessage = 1024

// worksSynced summarises the per-cluster results of a sync as the WorksSynced condition:
// "2/3 clusters synced; member1: work karmada-es-member1/nginx-687f7fb96f is being deleted".
// targets counts the clusters that should hold a Work; failures are listed by cluster name.
func worksSynced(targets int, results []workapply.Result) metav1.Condition {
	failed := make([]workapply.Result, 0)
	failedTargets := map[string]bool{}
	for i, r := range results {
		if r.Err == nil {
			continue
		}
		failed = append(failed, r)
		if i < targets {
			failedTargets[r.Cluster] = true
		}
	}
	synced := targets - len(failedTargets)
	summary := fmt.Sprintf("%d/%d clusters synced", synced, targets)
	if len(failed) == 0 {
		return metav1.Condition{Type: workv1alpha2.ConditionWorksSynced, Status: metav1.ConditionTrue,
			Reason: ReasonSynced, Message: summary}
	}
	reason := ReasonPartiallySynced
	if synced == 0 && targets > 0 {
		reason = ReasonSyncFailed
	}
	return metav1.Condition{Type: workv1alpha2.ConditionWorksSynced, Status: metav1.ConditionFalse,
		Reason: reason, Message: bounded(summary, failureParts(failed))}
}

// failureParts lists the failed results as "cluster: error", ordered by cluster.
func failureParts(results []workapply.Result) []string {
	failed := make([]workapply.Result, 0, len(results))
	for _, r := range results {
		if r.Err != nil {
			failed = append(failed, r)
		}
	}
	sort.SliceStable(failed, func(i, j int) bool { return failed[i].Cluster < failed[j].Cluster })
	parts := make([]string, 0, len(failed))
	for _, r := range failed {
		name := r.Cluster
		if name == "" {
			// A binding may name the empty cluster; "" keeps the list readable.
			name = `""`
		}
		parts = append(parts, name+": "+strings.TrimPrefix(r.Err.Error(), "cluster "+r.Cluster+": "))
	}
	return parts
}

// syncFailed is the condition for a binding that could not be synced at all.
func syncFailed(err error) metav1.Condition {
	return metav1.Condition{Type: workv1alpha2.ConditionWorksSynced, Status: metav1.ConditionFalse,
		Reason: ReasonSyncFailed, Message: err.Error()}
}

// waitingForEviction is the condition for a binding whose Works wait for the Works of
// clusters evicted with purgeMode Directly to be gone.
func waitingForEviction(clusters []string) metav1.Condition {
	return metav1.Condition{Type: workv1alpha2.ConditionWorksSynced, Status: metav1.ConditionFalse, Reason: ReasonWaitingForEviction,
		Message: "waiting for the Works of clusters evicted with purgeMode Directly to be deleted: " + strings.Join(clusters, ", ")}
}

// bounded joins summary and parts with "; ", dropping whole parts past the limit and
// saying how many were left out.
func bounded(summary string, parts []string) string {
	msg := summary
	for i, p := range parts {
		more := fmt.Sprintf("; … and %d more", len(parts)-i)
		if len(msg)+2+len(p) > maxConditionMessage-len(more) {
			return msg + more
		}
		msg += "; " + p
	}
	if len(msg) > maxConditionMessage {
		msg = msg[:maxConditionMessage-3] + "..."
	}
	return msg
}

// setCondition writes cond into the binding's status when it changed. It is a merge patch
// of status.conditions guarded by resourceVersion: every other condition and status field
// stays as it was, and a concurrent writer's change is read and the patch made again on
// top of it (onLiveIfStale).
func (r *Reconciler) setCondition(ctx context.Context, s *scope, cond metav1.Condition) error {
	cond.ObservedGeneration = s.obj.GetGeneration()
	err := r.onLiveIfStale(ctx, s, true, func() error {
		base := s.obj.DeepCopyObject().(client.Object)
		if !meta.SetStatusCondition(s.conditionsOf(s.obj), cond) {
			return nil
		}
		return r.Client.Status().Patch(ctx, s.obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return fmt.Errorf("writing condition %s of %s: %w", cond.Type, s, err)
	}
	return nil
}

// Event reasons, as Karmada's binding controller emits them.
const (
	ReasonSyncWorkSucceed   = "SyncWorkSucceed"
	ReasonSyncWorkFailed    = "SyncWorkFailed"
	ReasonCleanupWorkFailed = "CleanupWorkFailed"
)

// maxEventMessage bounds an event's message; the whole text is in the WorksSynced
// condition and the log line.
const maxEventMessage = 1024

// event records on the binding and, when there is one, on its resource template, so a
// user looking at their Deployment sees why it did not spread.
func (r *Reconciler) event(binding runtime.Object, template *unstructured.Unstructured, eventType, reason, message string) {
	if r.Recorder == nil {
		return
	}
	if len(message) > maxEventMessage {
		message = message[:maxEventMessage-3] + "..."
	}
	r.Recorder.Event(binding, eventType, reason, message)
	if template != nil {
		r.Recorder.Event(template, eventType, reason, message)
	}
}

// Event reasons of override policies, as Karmada's override manager records them on the
// resource template.
const (
	ReasonApplyOverridePolicySucceed = "ApplyOverridePolicySucceed"
	ReasonApplyOverridePolicyFailed  = "ApplyOverridePolicyFailed"
)

// recordOverrideEvents tells the template's owner, per target cluster, which override
// policies shaped its Work. Karmada records these on every sync; here a success is
// recorded only when the Work it shaped was written (created or updated), so that a
// resync of unchanged Works raises no stream of identical events. A policy that failed to
// apply is recorded on every sync that hits it, its repeats spaced out as every event's
// are (eventrepeats): a rollout's polls resync the binding every few seconds.
//
// rendered holds, per target (the order of results), the annotations of the Work
// rendered for it (nil when rendering failed).
func (r *Reconciler) recordOverrideEvents(template *unstructured.Unstructured, rendered []map[string]string, results []workapply.Result) {
	if r.Recorder == nil || template == nil {
		return
	}
	for i, result := range results {
		var failed *overridepolicy.Error
		switch {
		case errors.As(result.Err, &failed):
			r.Recorder.Eventf(template, corev1.EventTypeWarning, ReasonApplyOverridePolicyFailed,
				"Apply %s for cluster(%s) failed.", policyNamed(failed.PolicyKind, failed.PolicyNamespace, failed.PolicyName), failed.Cluster)
		case result.Outcome == workapply.Created || result.Outcome == workapply.Updated:
			if i >= len(rendered) {
				continue
			}
			for _, p := range appliedPolicies(rendered[i], template.GetNamespace()) {
				r.Recorder.Eventf(template, corev1.EventTypeNormal, ReasonApplyOverridePolicySucceed,
					"Apply %s for cluster(%s) succeed.", p, result.Cluster)
			}
		}
	}
}

// appliedPolicies names, as the events do, every policy rule a rendered Work's
// annotations record as applied: ClusterOverridePolicies first, then OverridePolicies
// (which live in the template's namespace), each in the annotation's order. A rule is
// named once per rule, as Karmada records one event per applied rule.
func appliedPolicies(annotations map[string]string, templateNamespace string) []string {
	var named []string
	for _, group := range []struct{ annotation, kind, namespace string }{
		{policyv1alpha1.AppliedClusterOverridesAnnotation, policyv1alpha1.ResourceKindClusterOverridePolicy, ""},
		{policyv1alpha1.AppliedOverridesAnnotation, policyv1alpha1.ResourceKindOverridePolicy, templateNamespace},
	} {
		raw, ok := annotations[group.annotation]
		if !ok {
			continue
		}
		var applied []overridepolicy.AppliedPolicy
		if err := json.Unmarshal([]byte(raw), &applied); err != nil {
			// We wrote it a moment ago from the same type; it cannot fail to decode.
			continue
		}
		for _, p := range applied {
			named = append(named, policyNamed(group.kind, group.namespace, p.PolicyName))
		}
	}
	return named
}

// policyNamed is how Karmada's override events name a policy: "override policy(ns/name)"
// or "cluster override policy(name)".
func policyNamed(kind, namespace, name string) string {
	if kind == policyv1alpha1.ResourceKindClusterOverridePolicy {
		return fmt.Sprintf("cluster override policy(%s)", name)
	}
	return fmt.Sprintf("override policy(%s/%s)", namespace, name)
}

// requeueFailed decides how a sync whose results failed (err, their aggregate) is retried,
// which depends on why they failed:
//   - a transient failure (the API server refused or failed a write) is returned, so the
//     binding is requeued with backoff;
//   - a cluster blocked by a terminating Work cannot succeed until that Work is gone, and
//     its deletion event requeues the binding at once: only a slow safety recheck, no
//     climb up the backoff ladder (without the Work watch there is no such event, and the
//     backoff is all there is, as in Karmada);
//   - a cluster whose Work cannot be rendered, or is too large to store (bad input), cannot
//     succeed until the binding (Karmada's detector updates it when the template changes)
//     or its policies change, which requeues it: parked, no retry.
//
// conditionErr is the failure to write the WorksSynced condition, itself transient;
// stuckDue is when the next WorkStuckDeleting warning becomes due (zero: none).
func (r *Reconciler) requeueFailed(ctx context.Context, results []workapply.Result, err, conditionErr error, stuckDue time.Duration) (ctrl.Result, error) {
	switch {
	case conditionErr != nil || anyFailed(results, transient):
		return ctrl.Result{}, err
	case anyFailed(results, awaitingDeletion) && r.watchesWorks:
		recheck := r.BlockedWorkRecheckInterval
		if stuckDue > 0 && stuckDue < recheck {
			recheck = stuckDue
		}
		return ctrl.Result{RequeueAfter: recheck}, nil
	case anyFailed(results, awaitingDeletion):
		// No Work watch to wake the binding: back off, as Karmada does.
		return ctrl.Result{}, err
	default:
		ctrl.LoggerFrom(ctx).Info("Parked until the binding, its policies or its Clusters change: retrying cannot fix the input")
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
}

// failureClass sorts failures by what can make them go away.
type failureClass int

const (
	transient        failureClass = iota // a retry may succeed
	awaitingDeletion                     // the terminating Work's deletion will unblock it
	badInput                             // only a change to the binding or its policies can fix it
)

// classify tells the failureClass of a failed result.
func classify(r workapply.Result) failureClass {
	var render *workapply.RenderError
	var noCluster *ClusterNotFoundError
	switch {
	case r.Outcome == workapply.Blocked:
		return awaitingDeletion
	case mayPassOnRetry(r.Err):
		return transient
	case errors.As(r.Err, &render), workapply.IsTooLarge(r.Err):
		return badInput
	case errors.As(r.Err, &noCluster):
		// The Cluster's creation re-syncs the binding: parked like bad input until then.
		return badInput
	}
	return transient
}

func anyFailed(results []workapply.Result, class failureClass) bool {
	for _, r := range results {
		if r.Err != nil && classify(r) == class {
			return true
		}
	}
	return false
}

// mayPassOnRetry tells a render failure that a retry may not meet again (an interpreter
// script past its time limit, customizations not readable) from bad input: a broken
// script fails the same way until its customization or the template changes, and both
// changes re-sync the binding, so it is parked like other bad input.
func mayPassOnRetry(err error) bool {
	var transient interface{ Transient() bool }
	return errors.As(err, &transient) && transient.Transient()
}

// ReasonWorkStuckDeleting is the Warning event for a cluster blocked too long.
const ReasonWorkStuckDeleting = "WorkStuckDeleting"

// stuckWarnings remembers which stuck Works were already reported, so each gets one event.
type stuckWarnings struct {
	mu     sync.Mutex
	warned map[string]sets.Set[string] // binding → Work UIDs
}

func newStuckWarnings() *stuckWarnings {
	return &stuckWarnings{warned: map[string]sets.Set[string]{}}
}

// forget drops what was remembered of binding, once it is deleted or gone.
func (w *stuckWarnings) forget(binding string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.warned, binding)
}

// blockedBy returns the blocked results among results.
func blockedBy(results []workapply.Result) []*workapply.BeingDeletedError {
	var out []*workapply.BeingDeletedError
	for _, r := range results {
		if e, ok := workapply.AsBeingDeleted(r.Err); ok && r.Outcome == workapply.Blocked {
			out = append(out, e)
		}
	}
	return out
}

// warnStuck emits one WorkStuckDeleting event per Work that has been terminating longer
// than StuckWorkWarningAfter, and returns when the next one would become due (zero: none).
func (r *Reconciler) warnStuck(ctx context.Context, s *scope, results []workapply.Result) time.Duration {
	now := time.Now()
	terminating := blockedBy(results)
	r.stuck.mu.Lock()
	defer r.stuck.mu.Unlock()
	warned := r.stuck.warned[s.indexKey()]
	current := sets.New[string]()
	var nextDue time.Duration
	for _, b := range terminating {
		uid := string(b.UID)
		current.Insert(uid)
		age := now.Sub(b.Since)
		if age < r.StuckWorkWarningAfter {
			if due := r.StuckWorkWarningAfter - age; nextDue == 0 || due < nextDue {
				nextDue = due
			}
			continue
		}
		if warned.Has(uid) {
			continue
		}
		message := fmt.Sprintf("work %s has been terminating for %s; finalizers still holding it: %v",
			b.Work, age.Round(time.Second), b.Finalizers)
		ctrl.LoggerFrom(ctx).Info("Work stuck deleting", "work", b.Work.String(), "terminatingFor", age.Round(time.Second).String(),
			"finalizers", b.Finalizers)
		r.event(s.obj, nil, corev1.EventTypeWarning, ReasonWorkStuckDeleting, message)
		if warned == nil {
			warned = sets.New[string]()
		}
		warned.Insert(uid)
	}
	// Forget Works that are gone or no longer block, so the map does not grow.
	if warned = warned.Intersection(current); warned.Len() == 0 {
		delete(r.stuck.warned, s.indexKey())
	} else {
		r.stuck.warned[s.indexKey()] = warned
	}
	return nextDue
}

// deletionWaits tracks, per cluster, the bindings whose Work there waits for an earlier
// Work of the same name to finish deleting (workapply.Blocked), for the blocked-bindings gauge.
type deletionWaits struct {
	mu        sync.Mutex
	byCluster map[string]sets.Set[string]
}

func newDeletionWaits() *deletionWaits {
	return &deletionWaits{byCluster: map[string]sets.Set[string]{}}
}

// record sets the clusters that block binding now; every other cluster no longer does.
func (b *deletionWaits) record(binding string, clusters sets.Set[string]) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for cluster, bindings := range b.byCluster {
		if !bindings.Has(binding) || clusters.Has(cluster) {
			continue
		}
		bindings.Delete(binding)
		if bindings.Len() == 0 {
			// No entry and no series for a cluster that blocks nothing: clusters come and
			// go, and each would otherwise stay here, and on /metrics at 0, for good.
			delete(b.byCluster, cluster)
			blockedBindingsGauge.DeleteLabelValues(cluster)
			continue
		}
		blockedBindingsGauge.WithLabelValues(cluster).Set(float64(bindings.Len()))
	}
	for cluster := range clusters {
		bindings, ok := b.byCluster[cluster]
		if !ok {
			bindings = sets.New[string]()
			b.byCluster[cluster] = bindings
		}
		if !bindings.Has(binding) {
			bindings.Insert(binding)
			blockedBindingsGauge.WithLabelValues(cluster).Set(float64(bindings.Len()))
		}
	}
}

func blockedClusters(results []workapply.Result) sets.Set[string] {
	clusters := sets.New[string]()
	for _, r := range results {
		if r.Outcome == workapply.Blocked {
			clusters.Insert(r.Cluster)
		}
	}
	return clusters
}
