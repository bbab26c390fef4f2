// SPDX-License-Identifier: Apache-2.0

package localplane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

// WorksGVR is the Work resource.
var WorksGVR = schema.GroupVersionResource{Group: workv1alpha1.GroupVersion.Group, Version: workv1alpha1.GroupVersion.Version, Resource: "works"}

// WorkEvent is one observed change of a Work, stamped when the watch delivered it.
type WorkEvent struct {
	Type        watch.EventType
	UID         types.UID
	Labels      map[string]string
	Terminating bool
	At          time.Time
}

// WorkState is what the tracker knows of one Work name.
type WorkState struct {
	// UID is the current object's ("" when none exists).
	UID         types.UID
	Labels      map[string]string
	Terminating bool
	// FirstSeen is when an object of this name was first seen (zero: never).
	FirstSeen time.Time
	// Generation is the current object's, first seen at GenerationAt: when a spec change
	// reached an ordinary client.
	Generation   int64
	GenerationAt time.Time
	Events       []WorkEvent
}

// WorkTracker follows every Work through one metadata-only watch, so that counting
// 10,000 Works costs the API server one watch, not repeated lists, and every Work gets
// the time its creation (or deletion) reached an ordinary client.
type WorkTracker struct {
	md metadata.Interface

	mu      sync.Mutex
	state   map[string]*WorkState // namespace/name
	changed chan struct{}
	err     error
	// arrivals are the WaitAll calls waiting, each told of the keys it waits for as they
	// first appear: a wait for 100,000 Works costs a map lookup per event, not a pass
	// over every key on every event.
	arrivals []*arrivalWait
}

type arrivalWait struct {
	pending map[string]struct{}
	done    chan struct{}
}

// StartWorkTracker lists the Works and watches them until ctx ends.
func StartWorkTracker(ctx context.Context, md metadata.Interface) (*WorkTracker, error) {
	t := &WorkTracker{md: md, state: map[string]*WorkState{}, changed: make(chan struct{})}
	rv, err := t.relist(ctx)
	if err != nil {
		return nil, err
	}
	go t.run(ctx, rv)
	return t, nil
}

// WorkKey is the tracker's key of a Work.
func WorkKey(namespace, name string) string { return namespace + "/" + name }

func (t *WorkTracker) relist(ctx context.Context) (string, error) {
	list, err := t.md.Resource(WorksGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing works: %w", err)
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	present := map[string]bool{}
	for i := range list.Items {
		obj := &list.Items[i]
		key := WorkKey(obj.Namespace, obj.Name)
		present[key] = true
		t.applyLocked(watch.Modified, obj, now)
	}
	for key, st := range t.state {
		if st.UID != "" && !present[key] {
			st.Events = append(st.Events, WorkEvent{Type: watch.Deleted, UID: st.UID, At: now})
			st.UID, st.Terminating = "", false
		}
	}
	t.notifyLocked()
	return list.ResourceVersion, nil
}

func (t *WorkTracker) run(ctx context.Context, rv string) {
	for ctx.Err() == nil {
		if rv == "" {
			var err error
			if rv, err = t.relist(ctx); err != nil {
				t.setErr(err)
				sleep(ctx, time.Second)
				continue
			}
		}
		w, err := t.md.Resource(WorksGVR).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
				rv = ""
			}
			sleep(ctx, 100*time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				obj, ok := ev.Object.(*metav1.PartialObjectMetadata)
				if !ok {
					continue
				}
				rv = obj.ResourceVersion
				t.mu.Lock()
				t.applyLocked(ev.Type, obj, time.Now())
				t.notifyLocked()
				t.mu.Unlock()
			case watch.Bookmark:
				if obj, ok := ev.Object.(*metav1.PartialObjectMetadata); ok {
					rv = obj.ResourceVersion
				}
			case watch.Error:
				if status := apierrors.FromObject(ev.Object); apierrors.IsGone(status) || apierrors.IsResourceExpired(status) {
					rv = ""
				}
			}
		}
		w.Stop()
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// ErrTimeout marks a wait that ran out of time.
var ErrTimeout = errors.New("timed out")

func (t *WorkTracker) setErr(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.err = err
}

func (t *WorkTracker) applyLocked(typ watch.EventType, obj *metav1.PartialObjectMetadata, at time.Time) {
	key := WorkKey(obj.Namespace, obj.Name)
	st := t.state[key]
	if st == nil {
		st = &WorkState{}
		t.state[key] = st
	}
	terminating := obj.DeletionTimestamp != nil
	if typ == watch.Deleted {
		if st.UID == obj.UID || st.UID == "" {
			st.UID, st.Terminating, st.Labels = "", false, nil
		}
		st.Events = append(st.Events, WorkEvent{Type: watch.Deleted, UID: obj.UID, At: at})
		return
	}
	if st.UID != obj.UID || st.Generation != obj.Generation {
		st.Generation, st.GenerationAt = obj.Generation, at
	}
	if st.UID == obj.UID && st.Terminating == terminating && typ != watch.Added {
		return // nothing the benchmark cares about changed
	}
	if st.UID != "" && st.UID != obj.UID {
		// The old object's deletion was not seen (relist): record it.
		st.Events = append(st.Events, WorkEvent{Type: watch.Deleted, UID: st.UID, At: at})
	}
	if st.UID != obj.UID {
		typ = watch.Added
	}
	if st.FirstSeen.IsZero() {
		st.FirstSeen = at
		t.arrivedLocked(key)
	}
	st.UID, st.Terminating, st.Labels = obj.UID, terminating, obj.Labels
	st.Events = append(st.Events, WorkEvent{Type: typ, UID: obj.UID, Labels: obj.Labels, Terminating: terminating, At: at})
}

func (t *WorkTracker) notifyLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// Get returns a copy of the state of key (zero when never seen).
func (t *WorkTracker) Get(key string) WorkState {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.state[key]
	if st == nil {
		return WorkState{}
	}
	cp := *st
	cp.Events = append([]WorkEvent(nil), st.Events...)
	return cp
}

// Wait calls cond under the tracker's lock on every change (at most every 25ms: the
// times that matter are stamped by the watch, not by the waiter) until it returns true,
// or timeout passes.
func (t *WorkTracker) Wait(ctx context.Context, timeout time.Duration, cond func(get func(key string) *WorkState) bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	get := func(key string) *WorkState {
		if st := t.state[key]; st != nil {
			return st
		}
		return &WorkState{}
	}
	for {
		t.mu.Lock()
		ok := cond(get)
		changed := t.changed
		t.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return ErrTimeout
		case <-changed:
		}
		sleep(ctx, 25*time.Millisecond)
	}
}

// Arrival is how far a set of expected Works has come.
type Arrival struct {
	Expected int
	Seen     int
	// Last is when the last of the seen Works first appeared.
	Last time.Time
}

// WaitAll waits until every key has been seen (an object existed), or timeout.
func (t *WorkTracker) WaitAll(ctx context.Context, keys []string, timeout time.Duration) (Arrival, error) {
	w := &arrivalWait{pending: map[string]struct{}{}, done: make(chan struct{})}
	t.mu.Lock()
	for _, k := range keys {
		if st := t.state[k]; st == nil || st.FirstSeen.IsZero() {
			w.pending[k] = struct{}{}
		}
	}
	if len(w.pending) == 0 {
		close(w.done)
	} else {
		t.arrivals = append(t.arrivals, w)
	}
	t.mu.Unlock()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var err error
	select {
	case <-w.done: // seen already: a zero timeout must not win the race
	default:
		select {
		case <-w.done:
		case <-ctx.Done():
			err = ctx.Err()
		case <-deadline.C:
			err = ErrTimeout
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.arrivals = slices.DeleteFunc(t.arrivals, func(x *arrivalWait) bool { return x == w })
	a := Arrival{Expected: len(keys)}
	for _, k := range keys {
		if st := t.state[k]; st != nil && !st.FirstSeen.IsZero() {
			a.Seen++
			if st.FirstSeen.After(a.Last) {
				a.Last = st.FirstSeen
			}
		}
	}
	return a, err
}

// arrivedLocked tells the waiting WaitAll calls that key was seen for the first time.
func (t *WorkTracker) arrivedLocked(key string) {
	for _, w := range t.arrivals {
		if _, ok := w.pending[key]; ok {
			delete(w.pending, key)
			if len(w.pending) == 0 {
				close(w.done)
			}
		}
	}
}

// Seen counts the keys an object was ever seen for.
func (t *WorkTracker) Seen(keys []string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, k := range keys {
		if st := t.state[k]; st != nil && !st.FirstSeen.IsZero() {
			n++
		}
	}
	return n
}

// FirstSeen returns, sorted, when each of keys was first seen (keys never seen are left out).
func (t *WorkTracker) FirstSeen(keys []string) []time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]time.Time, 0, len(keys))
	for _, k := range keys {
		if st := t.state[k]; st != nil && !st.FirstSeen.IsZero() {
			out = append(out, st.FirstSeen)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}
