// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// bindingQueue is controller-runtime's priority queue, the one the controller would use
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
type bindingQueue struct {
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

// fairFloor is the lowest priority a fresh item is given: the turns end there, and the
// items of a namespace with more waiting share it in arrival order, still above the
// initial lists' handler.LowPriority.
const fairFloor = handler.LowPriority + 1

func newBindingQueue(name string, limiter workqueue.TypedRateLimiter[reconcile.Request], log logr.Logger) *bindingQueue {
	return &bindingQueue{
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
func (q *bindingQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
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
func (q *bindingQueue) Add(item reconcile.Request) { q.AddWithOpts(priorityqueue.AddOpts{}, item) }
func (q *bindingQueue) AddAfter(item reconcile.Request, after time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}
func (q *bindingQueue) AddRateLimited(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

// GetWithPriority is what the controller's workers call for their next item.
func (q *bindingQueue) GetWithPriority() (reconcile.Request, int, bool) {
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
func (q *bindingQueue) Get() (reconcile.Request, bool) {
	item, _, shutdown := q.GetWithPriority()
	return item, shutdown
}

// Done ends a worker's hold on item.
func (q *bindingQueue) Done(item reconcile.Request) {
	q.mu.Lock()
	delete(q.held, item)
	q.mu.Unlock()
	q.PriorityQueue.Done(item)
}

// lowPriority tells whether a worker holds item at the initial lists' priority or below.
// The queue never hands one item to two workers, so the priority is that worker's.
func (q *bindingQueue) lowPriority(item reconcile.Request) bool {
	if q == nil {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	p, ok := q.held[item]
	return ok && p <= handler.LowPriority
}

// primingParking holds the re-verifications that came up before the ledger was primed,
// without holding a worker, so the workers stay free for fresh changes; release puts
// them back in the queue at low priority once priming is over.
type primingParking struct {
	mu       sync.Mutex
	parked   map[reconcile.Request]struct{}
	released bool
}

// park keeps req for release and reports true, or reports false once released: the
// caller then syncs req itself, with the ledger primed.
func (p *primingParking) park(req reconcile.Request) bool {
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

// release re-queues every parked request at low priority, once; later parks are refused.
func (p *primingParking) release(q priorityqueue.PriorityQueue[reconcile.Request]) int {
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
