package bindingcontroller

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// primingTimeout bounds how long syncs wait for the ledger to be primed; past it, the
// Works priming did not reach are read on their first sync instead.
const primingTimeout = 2 * time.Minute

// primeLedgerOnStart fills the ledger from a paged list of the Works once this process
// leads, before its first sync: a restart then costs a few list requests instead of one
// read per Work. Syncs wait for it (Reconcile); a failure only costs those reads.
func primeLedgerOnStart(mgr ctrl.Manager, ledger *workapply.Ledger) error {
	ledger.ExpectPriming()
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		defer ledger.PrimingDone()
		ctx, cancel := context.WithTimeout(ctx, primingTimeout)
		defer cancel()
		start := time.Now()
		n, err := ledger.Prime(ctx, mgr.GetAPIReader())
		logger := mgr.GetLogger().WithValues("works", n, "took", time.Since(start).Round(time.Millisecond).String())
		if err != nil {
			logger.Error(err, "Priming the Work ledger stopped early; the other Works are read on their first sync")
			return nil
		}
		logger.Info("Primed the Work ledger")
		return nil
	}))
}
