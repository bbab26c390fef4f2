// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"time"

	"github.com/binding-controller/binding-controller/pkg/ledgercheckpoint"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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
	// Priming done releases the re-verifications, which need the Work cache: a paged list
	// may well end before it has synced.
	defer waitForWorks(ctx, p.cache)
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
// re-verification the initial lists queued (a binding unchanged since its last sync) is
// parked, without holding a worker, until priming is over (releaseParkedOncePrimed):
// synced now, it would read each of its Works that priming is about to vouch for. A fresh change (a watch event after start, at the
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
	if r.queue.LowPriority(req) && !r.changedSinceSynced(ctx, req) && r.parking.Park(req) {
		return false, nil
	}
	return true, nil
}

// changedSinceSynced tells whether the cached binding of req changed since its last sync
// (bindingAPI.changedSinceSynced): a change made while the controller was down, or
// before its initial list, goes first like any other.
func (r *Reconciler) changedSinceSynced(ctx context.Context, req ctrl.Request) bool {
	k := bindingAPIOf(r.Kind)
	obj := k.newObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj, client.UnsafeDisableDeepCopy); err != nil {
		return false
	}
	return k.changedSinceSynced(obj)
}

// releaseParkedOncePrimed re-queues the parked re-verifications once the ledger is primed
// and the controller's queue exists.
func (r *Reconciler) releaseParkedOncePrimed(ctx context.Context) error {
	select {
	case <-r.queueReady:
	case <-ctx.Done():
		return nil
	}
	n, released := r.parking.ReleaseOncePrimed(ctx, r.Ledger, r.queue)
	if !released {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Re-queued the re-verifications parked until the Work ledger was primed",
		"controllerKind", string(r.Kind), "bindings", n)
	return nil
}

// worksCache is the manager's cache when the Works and templates are cached apart
// (workcache).
type worksCache interface {
	WaitForWorks(ctx context.Context) bool
	Synced(obj client.Object) bool
}

// cacheSyncedOf tells whether the informer of an object's kind in c has synced; nil when
// c is one cache, which the manager waits for as a whole.
func cacheSyncedOf(c cache.Cache) func(client.Object) bool {
	if w, ok := c.(worksCache); ok {
		return w.Synced
	}
	return nil
}

// waitForWorks waits until c's Works have synced, when they are cached apart.
func waitForWorks(ctx context.Context, c cache.Cache) bool {
	if w, ok := c.(worksCache); ok {
		return w.WaitForWorks(ctx)
	}
	return true
}
