// SPDX-License-Identifier: Apache-2.0

// Package eventrepeats spaces out the repeats of an event. client-go's event correlator
// gives each object a budget of 25 events of a type, refilled at one every five minutes,
// and spends it on repeats as well: a binding retried, or polled every few seconds
// mid-rollout, that records the same failure each time uses the budget up, and the
// events that say something new (a cluster failed, a rollout halted) are then dropped
// on the floor. Here a repeat of the same event on the same object is recorded once the
// one before it is a second old, then two, four, and so on up to five minutes, the rate
// the budget refills at. A different message, reason or type is recorded at once.
package eventrepeats

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

const (
	// FirstGap is how long after an event its first repeat is recorded.
	FirstGap = time.Second
	// MaxGap bounds the spacing: one event in five minutes is what the correlator's
	// budget refills at, so repeats never eat into what is left of it.
	MaxGap = 5 * time.Minute
)

// Recorder records through another recorder, leaving out the repeats that come too soon.
// It is safe for concurrent use.
type Recorder struct {
	inner record.EventRecorder
	now   func() time.Time

	mu        sync.Mutex
	last      map[string]recorded
	lastSweep time.Time
}

// recorded is when an event was last let through, and how long its next repeat waits.
type recorded struct {
	at  time.Time
	gap time.Duration
}

// NewRecorder returns a Recorder that records through inner.
func NewRecorder(inner record.EventRecorder) *Recorder {
	return &Recorder{inner: inner, now: time.Now, last: map[string]recorded{}}
}

// Event records an event unless it repeats one recorded too recently.
func (r *Recorder) Event(object runtime.Object, eventtype, reason, message string) {
	if r.due(object, eventtype, reason, message) {
		r.inner.Event(object, eventtype, reason, message)
	}
}

// Eventf is Event with a formatted message.
func (r *Recorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.Event(object, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf is Eventf with annotations; the annotations do not make an event new.
func (r *Recorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	message := fmt.Sprintf(messageFmt, args...)
	if r.due(object, eventtype, reason, message) {
		r.inner.AnnotatedEventf(object, annotations, eventtype, reason, "%s", message)
	}
}

// due says whether the event is recorded now, and if so remembers it.
func (r *Recorder) due(object runtime.Object, eventtype, reason, message string) bool {
	m, err := meta.Accessor(object)
	if err != nil || m.GetUID() == "" {
		// Nothing to tell one object from another by: record, as the recorder would.
		return true
	}
	key := string(m.GetUID()) + "\x00" + eventtype + "\x00" + reason + "\x00" + message
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweep(now)
	prev, seen := r.last[key]
	if seen && now.Sub(prev.at) < prev.gap {
		return false
	}
	gap := FirstGap
	if seen && now.Sub(prev.at) < 2*MaxGap {
		gap = min(2*prev.gap, MaxGap)
	}
	r.last[key] = recorded{at: now, gap: gap}
	return true
}

// sweep forgets, at most once a minute, the events quiet for longer than twice the
// longest gap: their next repeat is due anyway, and it starts the spacing over.
func (r *Recorder) sweep(now time.Time) {
	if now.Sub(r.lastSweep) < time.Minute {
		return
	}
	r.lastSweep = now
	for key, e := range r.last {
		if now.Sub(e.at) >= 2*MaxGap {
			delete(r.last, key)
		}
	}
}
