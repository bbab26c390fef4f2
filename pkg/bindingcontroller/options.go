// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"time"
)

// Options configure both binding controllers. DefaultOptions holds every default; a zero
// field takes its default (withDefaults), so callers set only what they change.
type Options struct {
	// Controllers that run, by name; nil runs both.
	Enabled map[string]bool
	// ResourceBindingWorkers and ClusterResourceBindingWorkers are how many bindings of
	// each kind sync at once.
	ResourceBindingWorkers        int
	ClusterResourceBindingWorkers int
	// ClusterSyncConcurrency bounds how many clusters of one binding are written at once.
	ClusterSyncConcurrency int
	RateLimiter            RateLimiterOptions
	// BlockedWorkRecheckInterval is how long a binding whose only failures are blocked
	// clusters waits before it looks again, should the Work's deletion event be missed.
	BlockedWorkRecheckInterval time.Duration
	// StuckWorkWarningAfter is how long a cluster may stay blocked before one
	// WorkStuckDeleting event is raised.
	StuckWorkWarningAfter time.Duration
	// DisableWorkWatch leaves recovery to the retry backoff alone, as Karmada's controller
	// does. Only for measuring what the watch buys (make bench-recovery).
	DisableWorkWatch bool
}

// DefaultOptions returns the defaults: Karmada's where Karmada has the same knob.
func DefaultOptions() Options {
	return Options{
		ResourceBindingWorkers:        5,
		ClusterResourceBindingWorkers: 5,
		ClusterSyncConcurrency:        8,
		RateLimiter: RateLimiterOptions{
			BaseDelay: 5 * time.Millisecond, MaxDelay: 1000 * time.Second, QPS: 10, BucketSize: 100,
		},
		BlockedWorkRecheckInterval: 30 * time.Second,
		StuckWorkWarningAfter:      5 * time.Minute,
	}
}

// withDefaults fills every zero field from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.ResourceBindingWorkers <= 0 {
		o.ResourceBindingWorkers = d.ResourceBindingWorkers
	}
	if o.ClusterResourceBindingWorkers <= 0 {
		o.ClusterResourceBindingWorkers = d.ClusterResourceBindingWorkers
	}
	if o.ClusterSyncConcurrency <= 0 {
		o.ClusterSyncConcurrency = d.ClusterSyncConcurrency
	}
	o.RateLimiter = o.RateLimiter.withDefaults()
	if o.BlockedWorkRecheckInterval <= 0 {
		o.BlockedWorkRecheckInterval = d.BlockedWorkRecheckInterval
	}
	if o.StuckWorkWarningAfter <= 0 {
		o.StuckWorkWarningAfter = d.StuckWorkWarningAfter
	}
	return o
}

// ServedAPIs says which of the controller's optional inputs the API server serves: what
// it does not serve is neither read nor watched. Karmada serves all of them (Clusters
// from its aggregated API server); a bare API server may serve none.
type ServedAPIs struct {
	// OverridePolicies: both OverridePolicy and ClusterOverridePolicy.
	OverridePolicies bool
	Clusters         bool
	// Customizations: ResourceInterpreterCustomizations, watched when served.
	Customizations bool
	// Webhooks: ResourceInterpreterWebhookConfigurations, watched and read from the
	// cache when served.
	Webhooks bool
}
