// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"time"

	"github.com/binding-controller/binding-controller/pkg/names"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Sync results as the duration histogram labels them.
const (
	resultSuccess = "success"
	resultFailure = "failure"
)

var (
	syncDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "binding_controller_sync_duration_seconds",
		Help:    "Time to sync one binding to its Works, by binding kind and result (success, failure).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"kind", "result"})

	clusterSyncFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "binding_controller_cluster_sync_failures_total",
		Help: "Per-cluster Work sync failures, by cluster (<invalid> for all names that cannot name an execution namespace) and reason (WorkBeingDeleted, WorkNotOwned, RenderFailed, WorkTooLarge, Panic, InterpreterFailed, ClusterNotFound, or the API server's status reason).",
	}, []string{"cluster", "reason"})

	blockedBindingsGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "binding_controller_blocked_bindings",
		Help: "Bindings whose Work in this cluster cannot be written because an earlier Work of the same name is still being deleted; no series for a cluster that blocks none.",
	}, []string{"cluster"})

	workWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "binding_controller_work_writes_total",
		Help: "Works handled, by operation: create, update, delete, or unchanged (nothing written).",
	}, []string{"operation"})

	orphanWorksDeleted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "binding_controller_orphan_works_deleted_total",
		Help: "Works deleted because their binding was gone without releasing its finalizer (kubernetes/kubernetes#77988).",
	})
)

func init() {
	metrics.Registry.MustRegister(syncDuration, clusterSyncFailures, blockedBindingsGauge, workWrites, orphanWorksDeleted,
		karmadaSyncWorkDuration)
}

var operationOf = map[workapply.Outcome]string{
	workapply.Created:   "create",
	workapply.Updated:   "update",
	workapply.Deleted:   "delete",
	workapply.Unchanged: "unchanged",
}

// observe records one finished sync.
func observe(s *scope, results []workapply.Result, failed bool) {
	observeDuration(s, failed)
	count(results)
}

func observeDuration(s *scope, failed bool) {
	result := resultSuccess
	if failed {
		result = resultFailure
	}
	syncDuration.WithLabelValues(string(s.BindingKind), result).Observe(time.Since(s.started).Seconds())
}

// count records the Work writes and the per-cluster failures among results.
func count(results []workapply.Result) {
	for _, r := range results {
		if op, ok := operationOf[r.Outcome]; ok {
			workWrites.WithLabelValues(op).Inc()
		}
		if reason := r.Reason(); reason != "" {
			clusterSyncFailures.WithLabelValues(clusterLabel(r.Cluster), reason).Inc()
		}
	}
}

// invalidClusterLabel is the cluster label of failures of cluster names that cannot name
// an execution namespace (names.ValidateClusterName). Cluster names come from bindings,
// and whoever may write a binding could otherwise add a series per name it makes up, of
// any length; such a cluster cannot exist, so its name tells an operator nothing the
// binding's WorksSynced condition does not.
const invalidClusterLabel = "<invalid>"

func clusterLabel(cluster string) string {
	if names.ValidateClusterName(cluster) != nil {
		return invalidClusterLabel
	}
	return cluster
}

// forgetCluster drops the failure series of a cluster whose Cluster object was deleted.
// A binding still naming it counts its failures afresh.
func forgetCluster(cluster string) {
	if names.ValidateClusterName(cluster) != nil {
		return // not a label of its own: "<invalid>" holds other names' failures too
	}
	clusterSyncFailures.DeletePartialMatch(prometheus.Labels{"cluster": cluster})
}

// karmadaSyncWorkDuration is Karmada's own binding metric, name, help, buckets and
// label values unchanged, so that dashboards and alerts built for Karmada's binding
// controller keep working. It is registered with the others (metrics.go).
var karmadaSyncWorkDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name: "binding_sync_work_duration_seconds",
	Help: "Duration in seconds to sync works for ResourceBinding and ClusterResourceBinding objects. " +
		"By the result, 'error' means a binding failed to sync works. Otherwise 'success'.",
	Buckets: prometheus.ExponentialBuckets(0.001, 2, 12),
}, []string{"result"})

// Karmada's result label values of binding_sync_work_duration_seconds.
const (
	karmadaResultSuccess = "success"
	karmadaResultError   = "error"
)

// observeKarmadaSync records a sync in binding_sync_work_duration_seconds on the syncs
// Karmada records it on: those that got as far as rendering and writing the target
// clusters' Works (not a missing template, a binding naming no usable template, a wait for
// purged Works, a failed orphan delete, or a deletion). failed: a target cluster failed.
func observeKarmadaSync(s *scope, failed bool) {
	result := karmadaResultSuccess
	if failed {
		result = karmadaResultError
	}
	karmadaSyncWorkDuration.WithLabelValues(result).Observe(time.Since(s.started).Seconds())
}
