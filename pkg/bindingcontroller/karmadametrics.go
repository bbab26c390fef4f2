// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

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
