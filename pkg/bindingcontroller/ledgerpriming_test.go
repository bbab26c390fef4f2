package bindingcontroller

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// Before the ledger is primed, a re-verification the initial lists queued (low priority)
// is parked without holding a worker, a fresh change to the same binding is synced at
// once, and the parked re-verification comes back at low priority once priming is over.
func TestOnlyReVerificationsWaitForTheLedgerToBePrimed(t *testing.T) {
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1"))
	ledger := workapply.NewLedger()
	ledger.ExpectPriming()
	h.r.Ledger = ledger
	h.r.queue = newBindingQueue("test", NewRateLimiter(RateLimiterOptions{}), logr.Discard())
	close(h.r.queueReady)
	defer h.r.queue.ShutDown()
	q := h.r.queue

	next := func(wantPriority int) reconcile.Request {
		t.Helper()
		got := make(chan struct {
			req      reconcile.Request
			priority int
		}, 1)
		go func() {
			req, priority, _ := q.GetWithPriority()
			got <- struct {
				req      reconcile.Request
				priority int
			}{req, priority}
		}()
		select {
		case g := <-got:
			if g.priority != wantPriority {
				t.Fatalf("queue handed %v at priority %d, want %d", g.req, g.priority, wantPriority)
			}
			return g.req
		case <-time.After(10 * time.Second):
			t.Fatal("the queue handed out nothing")
			return reconcile.Request{}
		}
	}
	sync := func(req reconcile.Request) {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			_, err := h.r.Reconcile(context.Background(), req)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Reconcile held its worker waiting for the ledger")
		}
		q.Done(req)
	}

	low := handler.LowPriority
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &low}, request())
	sync(next(low))
	if h.liveWork("member1") {
		t.Fatal("a re-verification was synced before the ledger was primed; it should have been parked")
	}

	q.Add(request()) // a watch event after start: normal priority
	sync(next(0))
	if !h.liveWork("member1") {
		t.Fatal("a fresh change waited for the ledger's priming; it should be synced at once")
	}

	ledger.PrimingDone()
	if err := h.r.releaseParkedOncePrimed(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := next(low); got != request() {
		t.Fatalf("re-queued %v, want the parked %v", got, request())
	}
	if h.r.parking.park(request()) {
		t.Error("parking still accepts requests after release; they would never come back")
	}
}
