// SPDX-License-Identifier: Apache-2.0

package eventrepeats

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestRecorder() (*Recorder, *record.FakeRecorder, *clock) {
	fake := record.NewFakeRecorder(1000)
	c := &clock{t: time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)}
	r := NewRecorder(fake)
	r.now = c.now
	return r, fake, c
}

func drain(fake *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-fake.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func object(uid string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: k8stypes.UID(uid)}}
}

// A failure repeated every 200 ms for ten minutes, as a rollout polls a binding whose
// cluster is blocked, is recorded at 0, 1, 3, 7, … s and then every five minutes: a
// handful of events, not 3,000, and never more than the correlator's budget refills.
func TestRepeatsAreSpacedOutDoubling(t *testing.T) {
	r, fake, c := newTestRecorder()
	var at []time.Duration
	for elapsed := time.Duration(0); elapsed <= 20*time.Minute; elapsed += 200 * time.Millisecond {
		r.Event(object("a"), corev1.EventTypeWarning, "SyncWorkFailed", "work karmada-es-member2/web is being deleted")
		if len(drain(fake)) > 0 {
			at = append(at, elapsed)
		}
		c.advance(200 * time.Millisecond)
	}
	want := []time.Duration{0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 811, 1111}
	if len(at) != len(want) {
		t.Fatalf("recorded at %v, want at %v s", at, want)
	}
	for i, w := range want {
		if at[i] != w*time.Second {
			t.Fatalf("recorded at %v, want at %v s", at, want)
		}
	}
}

func TestAnythingNewIsRecordedAtOnce(t *testing.T) {
	r, fake, _ := newTestRecorder()
	r.Event(object("a"), corev1.EventTypeWarning, "SyncWorkFailed", "one")
	r.Event(object("a"), corev1.EventTypeWarning, "SyncWorkFailed", "two")
	r.Event(object("a"), corev1.EventTypeWarning, "RolloutHalted", "two")
	r.Event(object("a"), corev1.EventTypeNormal, "RolloutHalted", "two")
	r.Eventf(object("b"), corev1.EventTypeWarning, "SyncWorkFailed", "%s", "one")
	r.AnnotatedEventf(object("c"), map[string]string{"k": "v"}, corev1.EventTypeWarning, "SyncWorkFailed", "%s", "one")
	r.Event(object("a"), corev1.EventTypeWarning, "SyncWorkFailed", "one")
	r.Eventf(object("b"), corev1.EventTypeWarning, "SyncWorkFailed", "one")
	r.AnnotatedEventf(object("c"), nil, corev1.EventTypeWarning, "SyncWorkFailed", "one")
	if got := drain(fake); len(got) != 6 {
		t.Fatalf("recorded %d events, want the 6 new ones and none of the 3 repeats: %q", len(got), got)
	}
}

func TestAnObjectWithoutUIDIsNeverHeldBack(t *testing.T) {
	r, fake, _ := newTestRecorder()
	for range 3 {
		r.Event(object(""), corev1.EventTypeWarning, "SyncWorkFailed", "one")
	}
	r.Event(nil, corev1.EventTypeWarning, "SyncWorkFailed", "one")
	if got := drain(fake); len(got) != 4 {
		t.Fatalf("recorded %d events, want all 4: %q", len(got), got)
	}
}

// After a quiet spell longer than twice the longest gap, a failure coming back is news:
// it is recorded, and its repeats start again a second apart; the memory of it is gone.
func TestAQuietEventStartsOver(t *testing.T) {
	r, fake, c := newTestRecorder()
	for range 5 {
		r.Event(object("a"), corev1.EventTypeWarning, "SyncWorkFailed", "one")
		c.advance(20 * time.Second)
	}
	drain(fake)
	c.advance(2 * MaxGap)
	r.Event(object("b"), corev1.EventTypeNormal, "Other", "sweeps")
	if len(r.last) != 1 {
		t.Fatalf("remembered %d events after the sweep, want only the new one", len(r.last))
	}
	r.Event(object("a"), corev1.EventTypeWarning, "SyncWorkFailed", "one")
	c.advance(FirstGap)
	r.Event(object("a"), corev1.EventTypeWarning, "SyncWorkFailed", "one")
	if got := drain(fake); len(got) != 3 {
		t.Fatalf("recorded %d events, want 3: %q", len(got), got)
	}
}
