// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/pkg/ledgercheckpoint"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// checkpointMissShare: priming from the checkpoint is given up for a list of every Work
// when more than 1 in checkpointMissShare of the Works it could vouch for are uncovered.
// Each uncovered Work costs a read on its first sync, one request where a listed Work
// costs a share of one; past a tenth of the fleet, the list is cheaper. A clean shutdown
// saves the checkpoint whole; a crash loses what changed since the last save.
const checkpointMissShare = 10

// checkpointFinalSaveTimeout bounds the save on shutdown, well inside the manager's
// graceful shutdown timeout (30 s by default).
const checkpointFinalSaveTimeout = 10 * time.Second

// primeFromCheckpoint vouches for each cached Work the checkpoint has a vouch of at the
// Work's UID and generation, once the cache has synced. It returns how many Works it
// added and how many it found no vouch for.
func primeFromCheckpoint(ctx context.Context, ledger *workapply.Ledger, store *ledgercheckpoint.Store, c cache.Cache) (added, uncovered int, err error) {
	vouches, err := store.Load(ctx)
	if err != nil && len(vouches) == 0 {
		return 0, 0, err
	}
	// A shard that did not decode only leaves its Works uncovered.
	if !c.WaitForCacheSync(ctx) || !waitForWorks(ctx, c) {
		return 0, 0, errors.New("the caches did not sync")
	}
	works := workapply.WorkMetadataList()
	// The cached objects are only read, and copying 100,000 of them would cost tens of MB.
	if err := c.List(ctx, works, client.UnsafeDisableDeepCopy); err != nil {
		return 0, 0, err
	}
	added, uncovered = ledger.PrimeFromVouches(works.Items, vouches)
	return added, uncovered, nil
}

// ledgerCheckpointer saves the ledger's vouches (ledgercheckpoint) while this replica
// leads: every interval when the ledger changed, and once more on shutdown, so that the
// next process to lead trusts the Works without reading their manifests.
type ledgerCheckpointer struct {
	store    *ledgercheckpoint.Store
	ledger   *workapply.Ledger
	cache    cache.Cache
	interval time.Duration
	log      logr.Logger
	// saved is the ledger's Changes when the checkpoint was last saved whole; 0 (the
	// ledger had no change yet) until then. A ledger primed from a list, not from the
	// checkpoint, is thus saved at the first tick; one primed from the checkpoint encodes
	// to the shards read and costs no write.
	saved uint64
}

// NeedLeaderElection: only the leader writes Works, so only its ledger moves.
func (c *ledgerCheckpointer) NeedLeaderElection() bool { return true }

func (c *ledgerCheckpointer) Start(ctx context.Context) error {
	select {
	case <-c.ledger.Primed():
	case <-ctx.Done():
		return nil
	}
	// A replica that waited as a standby read the checkpoint when it started; the last
	// leader's saves since, its final one above all, may know the Works better.
	if time.Since(c.store.LoadedAt()) > c.interval {
		if added, _, err := primeFromCheckpoint(ctx, c.ledger, c.store, c.cache); err != nil {
			c.log.Error(err, "Could not read the Work ledger checkpoint on taking the lead")
		} else {
			c.log.Info("Took the lead: refreshed the Work ledger from its checkpoint", "works", added)
		}
	}
	ticker := time.NewTicker(c.interval)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			c.save(ctx, false)
		case <-ctx.Done():
			// The manager cancels ctx on shutdown; the last save gets its own deadline.
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkpointFinalSaveTimeout)
			c.save(final, true)
			cancel()
			return nil
		}
	}
}

func (c *ledgerCheckpointer) save(ctx context.Context, final bool) {
	changes := c.ledger.Changes()
	if changes == c.saved {
		return
	}
	start := time.Now()
	vouches := c.ledger.Vouches()
	written, err := c.store.Save(ctx, vouches)
	logger := c.log.WithValues("works", len(vouches), "configMapsWritten", written, "took", time.Since(start).Round(time.Millisecond).String())
	if err != nil {
		logger.Error(err, "Could not save the Work ledger checkpoint; the next start reads the Works it misses")
		return
	}
	c.saved = changes
	if final {
		logger.Info("Saved the Work ledger checkpoint on shutdown")
	} else {
		logger.V(1).Info("Saved the Work ledger checkpoint")
	}
}
