// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/bindingqueue"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Before the ledger is primed, a re-verification the initial lists queued (low priority)
// is parked without holding a worker, a fresh change to the same binding is synced at
// once, and the parked re-verification comes back at low priority once priming is over.
func TestOnlyReVerificationsWaitForTheLedgerToBePrimed(t *testing.T) {
	h, ledger := newPrimingHarness(t, syncedAt(seedBinding("member1"), 3, 3))
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
	if h.r.parking.Park(request()) {
		t.Error("parking still accepts requests after release; they would never come back")
	}
}

// syncedAt gives rb generation and a WorksSynced condition of the controller's last sync,
// at observed.
func syncedAt(rb *workv1alpha2.ResourceBinding, generation, observed int64) *workv1alpha2.ResourceBinding {
	rb.Generation = generation
	rb.Status.Conditions = []metav1.Condition{{Type: workv1alpha2.ConditionWorksSynced, Status: metav1.ConditionTrue,
		Reason: "Synced", ObservedGeneration: observed, LastTransitionTime: metav1.Now()}}
	return rb
}

// newPrimingHarness is a harness whose ledger awaits priming, with the controller's queue.
func newPrimingHarness(t *testing.T, rb *workv1alpha2.ResourceBinding) (*harness, *workapply.Ledger) {
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), rb)
	ledger := workapply.NewLedger()
	ledger.ExpectPriming()
	h.r.Ledger = ledger
	h.r.queue = bindingqueue.New("test", bindingqueue.NewRateLimiter(bindingqueue.RateLimiterOptions{}), logr.Discard())
	close(h.r.queueReady)
	t.Cleanup(h.r.queue.ShutDown)
	return h, ledger
}

// A binding the initial list finds changed since its last sync (its condition names an
// older generation, or it has none) was changed while the controller was down, or just
// before its list: it is a change to serve, not a re-verification, and does not wait for
// the ledger.
func TestAChangeTheInitialListFindsIsNotParked(t *testing.T) {
	for name, rb := range map[string]*workv1alpha2.ResourceBinding{
		"an older generation synced": syncedAt(seedBinding("member1"), 4, 3),
		"never synced":               seedBinding("member1"),
	} {
		t.Run(name, func(t *testing.T) {
			h, _ := newPrimingHarness(t, rb)
			low := handler.LowPriority
			h.r.queue.AddWithOpts(priorityqueue.AddOpts{Priority: &low}, request())
			req, _, _ := h.r.queue.GetWithPriority()
			if _, err := h.r.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if !h.liveWork("member1") {
				t.Fatal("a change found by the initial list was parked until the ledger was primed")
			}
		})
	}
}

// A binding the initial list finds changed since its last sync is dequeued ahead of the
// unchanged bindings the list queued before it, as a fresh change; one never synced goes
// after every fresh change (after a migration from Karmada's controller, that is every
// binding), still ahead of the unchanged ones and served at once.
func TestAChangeTheInitialListFindsIsQueuedAheadOfIt(t *testing.T) {
	q := bindingqueue.New("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](), logr.Discard())
	defer q.ShutDown()
	var listed []*workv1alpha2.ResourceBinding
	for _, name := range []string{"a", "b", "never-synced", "c", "changed"} {
		rb := syncedAt(seedBinding("member1"), 2, 2)
		rb.Name = name
		switch name {
		case "changed":
			rb.Generation = 3
		case "never-synced":
			rb.Status.Conditions = nil
		}
		listed = append(listed, rb)
	}
	forHandler := &handler.EnqueueRequestForObject{}
	for _, h := range []handler.EventHandler{forHandler, changedWhileAway{resourceBinding}} {
		for _, rb := range listed {
			h.Create(context.Background(), event.CreateEvent{Object: rb, IsInInitialList: true}, q)
		}
	}
	q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "fresh"}})
	for _, want := range []string{"changed", "fresh", "never-synced"} {
		req, priority, _ := q.GetWithPriority()
		if req.Name != want || q.LowPriority(req) {
			t.Fatalf("dequeued %s at priority %d; want %s, above the initial list's %d", req.Name, priority, want, handler.LowPriority)
		}
	}
	for range 3 {
		if req, _, _ := q.GetWithPriority(); !q.LowPriority(req) {
			t.Fatalf("unchanged binding %s dequeued as a fresh change", req.Name)
		}
	}
}

// unsyncedCache is a manager cache whose initial lists never finish until released.
// Anything else the manager asked of it would panic on the nil embedded interface.
type unsyncedCache struct {
	cache.Cache
	synced chan struct{}
}

func (c *unsyncedCache) Start(ctx context.Context) error { <-ctx.Done(); return nil }

func (c *unsyncedCache) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-c.synced:
		return true
	case <-ctx.Done():
		return false
	}
}

// The ledger's priming runs alongside the informers' initial lists, not after them: on a
// manager whose caches have not synced (and so whose leader-election runnables have not
// started), the ledger is primed from the Works list.
func TestTheLedgerIsPrimedWhileTheCachesMakeTheirInitialLists(t *testing.T) {
	caches := &unsyncedCache{synced: make(chan struct{})}
	defer close(caches.synced)
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Scheme:                 testScheme(t),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		NewCache:               func(*rest.Config, cache.Options) (cache.Cache, error) { return caches, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	var lists atomic.Int32
	reader := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(orphanWork("member1", nil)).
		WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lists.Add(1)
			return c.List(ctx, list, opts...)
		}}).Build()
	ledger := workapply.NewLedger()
	if err := primeLedgerOnStart(mgr, ledger, reader, nil); err != nil {
		t.Fatal(err)
	}
	leaderStarted := make(chan struct{})
	if err := mgr.Add(manager.RunnableFunc(func(context.Context) error { close(leaderStarted); return nil })); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()

	select {
	case <-ledger.Primed():
	case <-time.After(30 * time.Second):
		t.Fatal("the ledger was not primed while the caches made their initial lists; priming waits for them")
	}
	if lists.Load() == 0 {
		t.Fatal("the ledger counts as primed without a list of the Works")
	}
	select {
	case <-leaderStarted:
		t.Fatal("a leader-election runnable started before the caches synced; the test's cache does not hold them back")
	default:
	}
}
