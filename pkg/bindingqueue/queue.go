// SPDX-License-Identifier: Apache-2.0

// Package bindingqueue is the binding controllers' work queue: controller-runtime's
// priority queue made fair across namespaces, the parking of re-verifications that must
// wait for the Work ledger's priming, and the per-binding retry backoff.
package bindingqueue

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Queue is controller-runtime's priority queue, the one the controller would use
// anyway, with two additions:
//
//   - It remembers the priority of each item a worker holds. Reconcile reads it to tell a
//     re-verification the informers' initial lists queued at handler.LowPriority from a
//     fresh change, which must not wait for the ledger's priming.
//   - A fresh event (one added without a priority, retries and requeues aside) is queued
//     one priority below the last fresh item of its namespace still waiting, and at the
//     top priority when none waits. Namespaces then take turns, one item each: a flood of
//     bindings in one namespace (a policy applied to thousands of templates) keeps its
//     order, and a change in another namespace is synced after at most one of the flood's
//     items instead of after all of them. Initial-list items stay below every fresh one.
type Queue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	mu   sync.Mutex
	held map[reconcile.Request]int
	// waiting counts the fresh items queued per namespace and last holds the priority
	// of the latest of them; fresh records which items waiting counts, so each is
	// counted once and uncounted when a worker takes it.
	waiting map[string]int
	last    map[string]int
	fresh   map[reconcile.Request]struct{}
}

// NeverSynced is the priority of a binding a start's initial list finds with no sync of
// this controller recorded on it: created while the controller was down, or, after a
// migration from Karmada's controller, every binding. Above the re-verifications at the
// initial lists' handler.LowPriority, and served at once as a fresh change is, but below
// every fresh change: a change made during a migration must not wait behind all of them.
const NeverSynced = handler.LowPriority + 1

// fairFloor is the lowest priority a fresh item is given: the turns end there, and the
// items of a namespace with more waiting share it in arrival order, still above
// NeverSynced.
const fairFloor = NeverSynced + 1

func New(name string, limiter workqueue.TypedRateLimiter[reconcile.Request], log logr.Logger) *Queue {
	return &Queue{
		PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) {
			o.Log = log.WithValues("controller", name)
			o.RateLimiter = limiter
		}),
		held:    map[reconcile.Request]int{},
		waiting: map[string]int{},
		last:    map[string]int{},
		fresh:   map[reconcile.Request]struct{}{},
	}
}

// AddWithOpts is how event handlers and the controller add items.
func (q *Queue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.Priority != nil || o.RateLimited || o.After > 0 {
		q.PriorityQueue.AddWithOpts(o, items...)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, item := range items {
		if _, counted := q.fresh[item]; counted {
			// Waiting already, and no worker holds it: it keeps its place.
			continue
		}
		q.fresh[item] = struct{}{}
		p := 0
		if q.waiting[item.Namespace] > 0 {
			p = max(fairFloor, q.last[item.Namespace]-1)
		}
		q.waiting[item.Namespace]++
		q.last[item.Namespace] = p
		q.PriorityQueue.AddWithOpts(priorityqueue.AddOpts{Priority: &p}, item)
	}
}

// Add, AddAfter and AddRateLimited go through AddWithOpts, as the inner queue's would.
func (q *Queue) Add(item reconcile.Request) { q.AddWithOpts(priorityqueue.AddOpts{}, item) }
func (q *Queue) AddAfter(item reconcile.Request, after time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}
func (q *Queue) AddRateLimited(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

// GetWithPriority is what the controller's workers call for their next item.
func (q *Queue) GetWithPriority() (reconcile.Request, int, bool) {
	item, priority, shutdown := q.PriorityQueue.GetWithPriority()
	if !shutdown {
		q.mu.Lock()
		q.held[item] = priority
		if _, counted := q.fresh[item]; counted {
			delete(q.fresh, item)
			if q.waiting[item.Namespace]--; q.waiting[item.Namespace] <= 0 {
				delete(q.waiting, item.Namespace)
				delete(q.last, item.Namespace)
			}
		}
		q.mu.Unlock()
	}
	return item, priority, shutdown
}

// Get is GetWithPriority without the priority.
func (q *Queue) Get() (reconcile.Request, bool) {
	item, _, shutdown := q.GetWithPriority()
	return item, shutdown
}

// Done ends a worker's hold on item.
func (q *Queue) Done(item reconcile.Request) {
	q.mu.Lock()
	delete(q.held, item)
	q.mu.Unlock()
	q.PriorityQueue.Done(item)
}

// LowPriority tells whether a worker holds item at the initial lists' priority or below.
// The queue never hands one item to two workers, so the priority is that worker's.
func (q *Queue) LowPriority(item reconcile.Request) bool {
	if q == nil {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	p, ok := q.held[item]
	return ok && p <= handler.LowPriority
}

// Parking holds the re-verifications that came up before the Work ledger was primed,
// without holding a worker, so the workers stay free for fresh changes; Release puts
// them back in the queue at low priority once priming is over.
type Parking struct {
	mu       sync.Mutex
	parked   map[reconcile.Request]struct{}
	released bool
}

// Park keeps req for release and reports true, or reports false once released: the
// caller then syncs req itself, with the ledger primed.
func (p *Parking) Park(req reconcile.Request) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return false
	}
	if p.parked == nil {
		p.parked = map[reconcile.Request]struct{}{}
	}
	p.parked[req] = struct{}{}
	return true
}

// Priming is what parked re-verifications wait for: Primed's channel closes once the Work
// ledger is primed (workapply.Ledger is one).
type Priming interface{ Primed() <-chan struct{} }

// ReleaseOncePrimed waits for priming, then releases every parked request into q. It
// reports false, releasing nothing, when ctx ends first.
func (p *Parking) ReleaseOncePrimed(ctx context.Context, priming Priming, q priorityqueue.PriorityQueue[reconcile.Request]) (int, bool) {
	select {
	case <-priming.Primed():
		return p.Release(q), true
	case <-ctx.Done():
		return 0, false
	}
}

// Release re-queues every parked request at low priority, once; later parks are refused.
func (p *Parking) Release(q priorityqueue.PriorityQueue[reconcile.Request]) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.released = true
	low := handler.LowPriority
	for req := range p.parked {
		q.AddWithOpts(priorityqueue.AddOpts{Priority: &low}, req)
	}
	n := len(p.parked)
	p.parked = nil
	return n
}

// RateLimiterOptions shape the per-binding retry backoff.
type RateLimiterOptions struct {
	BaseDelay  time.Duration // first retry after a failure
	MaxDelay   time.Duration // cap of the exponential backoff
	QPS        float64       // overall retry rate
	BucketSize int           // overall retry burst
}

// WithDefaults fills every zero field from DefaultRateLimiterOptions.
func (o RateLimiterOptions) WithDefaults() RateLimiterOptions {
	d := DefaultRateLimiterOptions()
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

// DefaultRateLimiterOptions are Karmada's: 5ms first retry, 1000s at most, 10 retries a
// second overall with bursts of 100.
func DefaultRateLimiterOptions() RateLimiterOptions {
	return RateLimiterOptions{BaseDelay: 5 * time.Millisecond, MaxDelay: 1000 * time.Second, QPS: 10, BucketSize: 100}
}

// NewRateLimiter returns the slower of a per-item exponential backoff and an overall token bucket.
func NewRateLimiter(o RateLimiterOptions) workqueue.TypedRateLimiter[reconcile.Request] {
	o = o.WithDefaults()
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](o.BaseDelay, o.MaxDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(o.QPS), o.BucketSize)},
	)
}
