// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"time"
)

// Options configure both binding controllers.
type Options struct {
	// Controllers that run, by name; nil runs both.
	Enabled map[string]bool
	// ResourceBindingWorkers and ClusterResourceBindingWorkers are how many bindings of
	// each kind sync at once. Default 5.
	ResourceBindingWorkers        int
	ClusterResourceBindingWorkers int
	// ClusterSyncConcurrency bounds how many clusters of one binding are written at once. Default 8.
	ClusterSyncConcurrency int
	RateLimiter            RateLimiterOptions
	// BlockedWorkRecheckInterval: see Reconciler. Default 30s.
	BlockedWorkRecheckInterval time.Duration
	// StuckWorkWarningAfter: see Reconciler. Default 5m.
	StuckWorkWarningAfter time.Duration
	// DisableWorkWatch leaves recovery to the retry backoff alone, as Karmada's controller
	// does. Only for measuring what the watch buys (make bench-recovery).
	DisableWorkWatch bool
}
