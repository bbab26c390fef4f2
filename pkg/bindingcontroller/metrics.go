package bindingcontroller

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/binding-controller/binding-controller/pkg/workapply"
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
		Help: "Per-cluster Work sync failures, by cluster and reason (WorkBeingDeleted, WorkNotOwned, RenderFailed, InterpreterFailed, or the API server's status reason).",
	}, []string{"cluster", "reason"})

	blockedBindingsGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "binding_controller_blocked_bindings",
		Help: "Bindings whose Work in this cluster cannot be written because an earlier Work of the same name is still being deleted.",
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
	metrics.Registry.MustRegister(syncDuration, clusterSyncFailures, blockedBindingsGauge, workWrites, orphanWorksDeleted)
}

var operationOf = map[workapply.Outcome]string{
	workapply.Created:   "create",
	workapply.Updated:   "update",
	workapply.Deleted:   "delete",
	workapply.Unchanged: "unchanged",
}

// observe records one finished sync.
func observe(s *scope, results []workapply.Result, failed bool) {
	result := resultSuccess
	if failed {
		result = resultFailure
	}
	syncDuration.WithLabelValues(string(s.BindingKind), result).Observe(time.Since(s.started).Seconds())
	for _, r := range results {
		if op, ok := operationOf[r.Outcome]; ok {
			workWrites.WithLabelValues(op).Inc()
		}
		if reason := r.Reason(); reason != "" {
			clusterSyncFailures.WithLabelValues(r.Cluster, reason).Inc()
		}
	}
}
