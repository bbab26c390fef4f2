// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

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
