// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// RateLimiterOptions shape the per-binding retry backoff. The defaults are Karmada's.
type RateLimiterOptions struct {
	BaseDelay  time.Duration // first retry after a failure; default 5ms
	MaxDelay   time.Duration // cap of the exponential backoff; default 1000s
	QPS        float64       // overall retry rate; default 10
	BucketSize int           // overall retry burst; default 100
}

func (o RateLimiterOptions) withDefaults() RateLimiterOptions {
	if o.BaseDelay <= 0 {
		o.BaseDelay = 5 * time.Millisecond
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 1000 * time.Second
	}
	if o.QPS <= 0 {
		o.QPS = 10
	}
	if o.BucketSize <= 0 {
		o.BucketSize = 100
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
