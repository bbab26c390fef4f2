// SPDX-License-Identifier: Apache-2.0

package bindingqueue

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func req(namespace, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
}

// drain takes n items off q, in the order its workers would get them.
func drain(t *testing.T, q *Queue, n int) []reconcile.Request {
	t.Helper()
	out := make([]reconcile.Request, 0, n)
	for len(out) < n {
		got := make(chan reconcile.Request, 1)
		go func() {
			item, _, _ := q.GetWithPriority()
			got <- item
		}()
		select {
		case item := <-got:
			q.Done(item)
			out = append(out, item)
		case <-time.After(10 * time.Second):
			t.Fatalf("the queue handed out %d items, want %d", len(out), n)
		}
	}
	return out
}

// A flood of fresh bindings in one namespace keeps its order, and a binding of another
// namespace queued behind the flood is handed out after at most one of it; the initial
// lists' re-verifications come after both.
func TestAFreshChangeInAnotherNamespaceDoesNotWaitBehindAFlood(t *testing.T) {
	q := New("test", NewRateLimiter(RateLimiterOptions{}), logr.Discard())
	defer q.ShutDown()
	low := handler.LowPriority
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &low}, req("team-a", "re-verified"))
	const flood = 250
	for i := range flood {
		q.Add(req("flood", fmt.Sprintf("b-%04d", i)))
	}
	q.Add(req("team-a", "urgent"))
	// Let the queue take in every add before the first Get: its adds are buffered.
	time.Sleep(100 * time.Millisecond)

	got := drain(t, q, flood+2)
	urgentAt, prev := -1, -1
	for i, item := range got {
		switch item.Namespace {
		case "team-a":
			if item.Name == "urgent" {
				urgentAt = i
			} else if i != len(got)-1 {
				t.Errorf("the re-verification came out %dth of %d; it should come after every fresh item", i+1, len(got))
			}
		case "flood":
			var n int
			if _, err := fmt.Sscanf(item.Name, "b-%d", &n); err != nil {
				t.Fatalf("item %q: %v", item.Name, err)
			}
			if n < prev {
				t.Errorf("flood item %d came out after %d: the flood lost its order", n, prev)
			}
			prev = n
		}
	}
	if urgentAt < 0 || urgentAt > 1 {
		t.Errorf("the change in another namespace came out %dth, behind %d flood items; want at most 1", urgentAt+1, urgentAt)
	}
}

// Without a second namespace the queue is first in, first out, as before, also when
// items keep arriving while the workers drain it.
func TestFreshItemsOfOneNamespaceKeepTheirOrder(t *testing.T) {
	q := New("test", NewRateLimiter(RateLimiterOptions{}), logr.Discard())
	defer q.ShutDown()
	add := func(from, to int) {
		for i := from; i < to; i++ {
			q.Add(req("ns", fmt.Sprintf("b-%04d", i)))
		}
		time.Sleep(100 * time.Millisecond)
	}
	expect := func(items []reconcile.Request, from int) {
		t.Helper()
		for i, item := range items {
			if want := fmt.Sprintf("b-%04d", from+i); item.Name != want {
				t.Fatalf("item %d is %s, want %s", from+i, item.Name, want)
			}
		}
	}
	add(0, 300)
	expect(drain(t, q, 250), 0)
	// 50 still wait, each below the turns' floor; those that come now queue behind them.
	add(300, 320)
	expect(drain(t, q, 70), 250)
	if len(q.waiting) != 0 || len(q.fresh) != 0 || len(q.last) != 0 {
		t.Errorf("the queue still counts %v waiting after every item was taken", q.waiting)
	}
}
