// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"sync"
	"time"

	"github.com/binding-controller/binding-controller/pkg/ledgercheckpoint"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// primingTimeout bounds how long syncs wait for the ledger to be primed; past it, the
// Works priming did not reach are read on their first sync instead.
const primingTimeout = 2 * time.Minute

// primeLedgerOnStart fills the ledger while the informers make their initial lists:
// from the checkpoint (store, when not nil) and the cached Work metadata when the
// checkpoint vouches for nearly every Work, else from a paged list of the Works (read
// through reader). A restart then costs no read of each Work, and priming overlaps those
// lists instead of following them. Re-verifications wait for it (awaitPriming); a
// failure only costs those reads.
func primeLedgerOnStart(mgr ctrl.Manager, ledger *workapply.Ledger, reader client.Reader, store *ledgercheckpoint.Store) error {
	ledger.ExpectPriming()
	return mgr.Add(&ledgerPrimer{cache: mgr.GetCache(), reader: reader, ledger: ledger, store: store, log: mgr.GetLogger()})
}

// ledgerPrimer is a runnable in the manager's group of caches.
type ledgerPrimer struct {
	cache  cache.Cache
	reader client.Reader
	ledger *workapply.Ledger
	store  *ledgercheckpoint.Store
	log    logr.Logger
}

// GetCache is what places the primer among the manager's caches: controller-runtime
// starts that group first, on every replica and before leader election, and waits for
// the cache returned here (the manager's own, which it waits for anyway) to sync. Any
// other group starts only once the caches have synced (15–25 s at 100,000 Works).
// Priming early is safe on a standby: it only reads, and an entry vouches for a Work only
// while the Work's UID and generation are the ones primed. The price is one list of the
// checkpoint's few ConfigMaps per replica start, standbys included, or one paged list of
// the Works when there is no checkpoint to trust.
func (p *ledgerPrimer) GetCache() cache.Cache { return p.cache }

func (p *ledgerPrimer) Start(ctx context.Context) error {
	defer p.ledger.PrimingDone()
	ctx, cancel := context.WithTimeout(ctx, primingTimeout)
	defer cancel()
	start := time.Now()
	if p.store != nil {
		added, uncovered, err := primeFromCheckpoint(ctx, p.ledger, p.store, p.cache)
		logger := p.log.WithValues("works", added, "uncovered", uncovered, "took", time.Since(start).Round(time.Millisecond).String())
		switch {
		case err == nil && uncovered*checkpointMissShare <= added+uncovered:
			logger.Info("Primed the Work ledger from its checkpoint; the uncovered Works are read on their first sync")
			return nil
		case err != nil:
			logger.Error(err, "Could not prime the Work ledger from its checkpoint; listing the Works instead")
		default:
			logger.Info("The Work ledger checkpoint misses too many Works; listing the Works instead")
		}
	}
	n, err := p.ledger.Prime(ctx, p.reader)
	logger := p.log.WithValues("works", n, "took", time.Since(start).Round(time.Millisecond).String())
	if err != nil {
		logger.Error(err, "Priming the Work ledger stopped early; the other Works are read on their first sync")
		return nil
	}
	logger.Info("Primed the Work ledger")
	return nil
}

// awaitPriming tells whether req may be synced now. Before the ledger is primed, a
// re-verification the initial lists queued is parked, without holding a worker, until
// priming is over (releaseParkedOncePrimed): synced now, it would read each of its Works
// that priming is about to vouch for. A fresh change (a watch event after start, at the
// queue's normal priority or above) is synced at once: the few Works it concerns that the
// ledger does not know yet are read live, and it does not wait behind a re-verification
// of the whole fleet. Called directly, without the controller's queue, Reconcile waits
// for priming as a whole.
func (r *Reconciler) awaitPriming(ctx context.Context, req ctrl.Request) (bool, error) {
	select {
	case <-r.Ledger.Primed():
		return true, nil
	default:
	}
	if r.queue == nil {
		select {
		case <-r.Ledger.Primed():
			return true, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	if r.queue.lowPriority(req) && r.parking.park(req) {
		return false, nil
	}
	return true, nil
}

// releaseParkedOncePrimed re-queues the parked re-verifications once the ledger is primed
// and the controller's queue exists.
func (r *Reconciler) releaseParkedOncePrimed(ctx context.Context) error {
	for _, ready := range []<-chan struct{}{r.Ledger.Primed(), r.queueReady} {
		select {
		case <-ready:
		case <-ctx.Done():
			return nil
		}
	}
	n := r.parking.release(r.queue)
	ctrl.LoggerFrom(ctx).Info("Re-queued the re-verifications parked until the Work ledger was primed",
		"controllerKind", string(r.Kind), "bindings", n)
	return nil
}
