// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// RateLimiterOptions shape the per-binding retry backoff. The defaults (DefaultOptions)
// are Karmada's.
type RateLimiterOptions struct {
	BaseDelay  time.Duration // first retry after a failure
	MaxDelay   time.Duration // cap of the exponential backoff
	QPS        float64       // overall retry rate
	BucketSize int           // overall retry burst
}

// withDefaults fills every zero field from DefaultOptions.
func (o RateLimiterOptions) withDefaults() RateLimiterOptions {
	d := DefaultOptions().RateLimiter
	if o.BaseDelay <= 0 {
		o.BaseDelay = d.BaseDelay
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = d.MaxDelay
	}
	if o.QPS <= 0 {
		o.QPS = d.QPS
	}
	if o.BucketSize <= 0 {
		o.BucketSize = d.BucketSize
	}
	return o
}

// NewRateLimiter returns the slower of a per-item exponential backoff and an overall token bucket.
func NewRateLimiter(o RateLimiterOptions) workqueue.TypedRateLimiter[reconcile.Request] {
	o = o.withDefaults()
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](o.BaseDelay, o.MaxDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(o.QPS), o.BucketSize)},
	)
}
