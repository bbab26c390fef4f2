// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// report tells the user how the sync went: the WorksSynced condition, a log line and
// events on the binding and its template, metrics. The healthy clusters already have their
// Works; requeueFailed decides how the failed ones are retried.
func (r *Reconciler) report(ctx context.Context, s *scope, template *unstructured.Unstructured, targets int, results []workapply.Result) (ctrl.Result, error) {
	logger := ctrl.LoggerFrom(ctx)
	err := workapply.Aggregate(results)
	// results holds the targets' Works, then the orphans deleted: as in Karmada, a failed
	// target is a SyncWorkFailed, a failed orphan delete a CleanupWorkFailed.
	syncErr, cleanupErr := workapply.Aggregate(results[:targets]), workapply.Aggregate(results[targets:])
	observe(s, results, err != nil)
	if cleanupErr == nil {
		// Karmada stops before syncing the targets when an orphan delete fails.
		observeKarmadaSync(s, syncErr != nil)
	}
	r.deletionWaits.record(s.indexKey(), blockedClusters(results))
	conditionErr := r.setCondition(ctx, s, worksSynced(targets, results))
	stuckDue := r.warnStuck(ctx, s, results)
	r.recordOverrideEvents(template, s.rendered, results[:targets])

	if err != nil {
		// The log line of Karmada v1.13, kept word for word: operators grep for it.
		logger.Error(err, fmt.Sprintf("Failed to transform %s to works. Error: %s.", s.legacyName(), err.Error()),
			"failedClusters", failedClusters(results))
		if syncErr != nil {
			r.event(s.obj, template, corev1.EventTypeWarning, ReasonSyncWorkFailed, syncErr.Error())
		}
		if cleanupErr != nil {
			r.event(s.obj, nil, corev1.EventTypeWarning, ReasonCleanupWorkFailed, cleanupErr.Error())
		}
		return r.requeueFailed(ctx, results, err, conditionErr, stuckDue)
	}
	if wrote(results) {
		// Current Karmada's words: Sync work of ResourceBinding(ns/name) successful.
		message := fmt.Sprintf("Sync work of %s successful.", s)
		logger.Info(message, "clusters", targets)
		r.event(s.obj, template, corev1.EventTypeNormal, ReasonSyncWorkSucceed, message)
	}
	return ctrl.Result{}, conditionErr
}

// reportUnsyncable tells the user a binding cannot be synced as it stands; retrying will
// not help, so it waits for the binding to change. The orphans were deleted all the same,
// and a failed delete among them is retried (reportNoSync).
func (r *Reconciler) reportUnsyncable(ctx context.Context, s *scope, err error, orphans []workapply.Result) error {
	observeDuration(s, true)
	ctrl.LoggerFrom(ctx).Error(err, fmt.Sprintf("Failed to transform %s to works. Error: %s.", s.legacyName(), err.Error()),
		"retry", "when the binding changes")
	r.event(s.obj, nil, corev1.EventTypeWarning, ReasonSyncWorkFailed, err.Error())
	return r.reportNoSync(ctx, s, syncFailed(err), orphans)
}

// reportNoSync tells the user about a sync that wrote no Work, for the reason cond gives,
// and about the deletes it did all the same (orphans, purged Works). Whatever holds the
// Works back, a failed delete is transient: it is added to cond, counted, and returned, so
// the binding is retried with backoff instead of keeping the Work until the binding changes.
func (r *Reconciler) reportNoSync(ctx context.Context, s *scope, cond metav1.Condition, deletes []workapply.Result) error {
	count(deletes)
	r.deletionWaits.record(s.indexKey(), nil)
	err := workapply.Aggregate(deletes)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, fmt.Sprintf("Failed to clean up works of %s", s), "failedClusters", failedClusters(deletes))
		r.event(s.obj, nil, corev1.EventTypeWarning, ReasonCleanupWorkFailed, err.Error())
	}
	cond.Message = bounded(cond.Message, failureParts(deletes))
	return errors.Join(r.setCondition(ctx, s, cond), err)
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
