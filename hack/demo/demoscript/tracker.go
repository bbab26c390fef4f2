package demoscript

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// workState is what the tracker last saw of one Work.
type workState struct {
	UID         types.UID
	PermanentID string
	Terminating bool
	// Since is when the Work was first seen in this state (UID, permanent-id, terminating).
	Since time.Time
}

// tracker watches Works and records when each one appeared, changed and went away, so
// the demo can tell how long the controller took, to the millisecond, where polling
// would miss a short gap (an old Work gone and its successor created right after).
type tracker struct {
	mu    sync.Mutex
	works map[types.NamespacedName]workState
	gone  map[types.UID]time.Time
}

func newTracker() *tracker {
	return &tracker{works: map[types.NamespacedName]workState{}, gone: map[types.UID]time.Time{}}
}

// run lists and watches Works until ctx ends, listing again whenever the watch closes.
// ready is closed once the first list has been taken in.
func (t *tracker) run(ctx context.Context, c client.WithWatch, ready chan<- struct{}) {
	first := true
	for ctx.Err() == nil {
		list := &workv1alpha1.WorkList{}
		if err := c.List(ctx, list); err != nil {
			sleep(ctx, 200*time.Millisecond)
			continue
		}
		t.replace(list.Items)
		if first {
			close(ready)
			first = false
		}
		w, err := c.Watch(ctx, &workv1alpha1.WorkList{},
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
		if err != nil {
			sleep(ctx, 200*time.Millisecond)
			continue
		}
		t.consume(ctx, w)
		w.Stop()
	}
}

func (t *tracker) consume(ctx context.Context, w watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			work, isWork := ev.Object.(*workv1alpha1.Work)
			switch {
			case ev.Type == watch.Error:
				return
			case !isWork:
			case ev.Type == watch.Deleted:
				t.remove(client.ObjectKeyFromObject(work), work.UID)
			case ev.Type == watch.Added || ev.Type == watch.Modified:
				t.set(work)
			}
		}
	}
}

func (t *tracker) set(work *workv1alpha1.Work) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := client.ObjectKeyFromObject(work)
	st := workState{
		UID:         work.UID,
		PermanentID: work.Labels[workv1alpha2.ResourceBindingPermanentIDLabel],
		Terminating: work.DeletionTimestamp != nil,
		Since:       time.Now(),
	}
	if old, ok := t.works[key]; ok && old.UID == st.UID && old.PermanentID == st.PermanentID && old.Terminating == st.Terminating {
		return
	}
	if old, ok := t.works[key]; ok && old.UID != st.UID {
		t.gone[old.UID] = st.Since
	}
	t.works[key] = st
}

func (t *tracker) remove(key types.NamespacedName, uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st, ok := t.works[key]; ok && st.UID == uid {
		delete(t.works, key)
	}
	if _, ok := t.gone[uid]; !ok {
		t.gone[uid] = time.Now()
	}
}

func (t *tracker) replace(items []workv1alpha1.Work) {
	seen := map[types.NamespacedName]bool{}
	for i := range items {
		t.set(&items[i])
		seen[client.ObjectKeyFromObject(&items[i])] = true
	}
	t.mu.Lock()
	var missing []types.NamespacedName
	for key := range t.works {
		if !seen[key] {
			missing = append(missing, key)
		}
	}
	t.mu.Unlock()
	for _, key := range missing {
		t.mu.Lock()
		uid := t.works[key].UID
		t.mu.Unlock()
		t.remove(key, uid)
	}
}

// get returns the Work's state and whether it exists.
func (t *tracker) get(key types.NamespacedName) (workState, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st, ok := t.works[key]
	return st, ok
}

// goneAt returns when the Work with uid was seen to go away.
func (t *tracker) goneAt(uid types.UID) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.gone[uid]
	return at, ok
}

// describe says what the tracker holds for key, for failure messages.
func (t *tracker) describe(key types.NamespacedName, ids map[string]string) string {
	st, ok := t.get(key)
	if !ok {
		return "absent"
	}
	id := st.PermanentID
	if name, known := ids[id]; known {
		id = name
	}
	if st.Terminating {
		return "terminating (" + id + ")"
	}
	return fmt.Sprintf("live (%s)", id)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
