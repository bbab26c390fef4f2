// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

// A process that starts with the vouches an earlier one saved trusts a Work only at the
// generation vouched for: that Work costs no read, one vouched for at another generation
// is read and updated as before.
func TestVouchesSavedByAnotherProcessSpareTheReadOnlyAtTheirGeneration(t *testing.T) {
	named := func(name string, uid types.UID, generation int64, manifest string) *workv1alpha1.Work {
		w := desiredWork(manifest)
		w.Name, w.UID, w.Generation = name, uid, generation
		return w
	}
	vouched := named("vouched", "uid-vouched", 3, `{"kind":"Deployment","spec":{"replicas":2}}`)
	moved := named("moved", "uid-moved", 5, `{"kind":"Deployment","spec":{"replicas":2}}`)
	c := counter{}
	a, cl := newApplier(t, c, c.liveReadsFuncs(), vouched, moved)

	// The earlier process: its ledger, primed from the Works, is what it saved.
	earlier := NewLedger()
	if _, err := earlier.Prime(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
	vouches := map[types.UID]Vouch{}
	for _, v := range earlier.Vouches() {
		vouches[v.UID] = v
	}
	if len(vouches) != 2 {
		t.Fatalf("the earlier ledger vouches for %v, want both Works", vouches)
	}
	// Someone edited "moved" after the save: the vouch is of its generation before.
	v := vouches["uid-moved"]
	v.Generation = 4
	vouches["uid-moved"] = v

	cached := WorkMetadataList()
	if err := cl.List(context.Background(), cached); err != nil {
		t.Fatal(err)
	}
	a.Ledger = NewLedger()
	added, uncovered := a.Ledger.PrimeFromVouches(cached.Items, vouches)
	if added != 1 || uncovered != 1 {
		t.Fatalf("PrimeFromVouches = %d added, %d uncovered; want 1 and 1", added, uncovered)
	}
	if r := a.Apply(context.Background(), "member1", named("vouched", "", 0, `{"kind":"Deployment","spec":{"replicas":2}}`)); r.Outcome != Unchanged || c["live-get"] != 0 {
		t.Fatalf("vouched Work: %s %v after %d reads, want unchanged without a read", r.Outcome, r.Err, c["live-get"])
	}
	if r := a.Apply(context.Background(), "member1", named("moved", "", 0, `{"kind":"Deployment","spec":{"replicas":3}}`)); r.Outcome != Updated || c["live-get"] != 1 {
		t.Fatalf("moved Work: %s %v after %d reads, want updated after one read", r.Outcome, r.Err, c["live-get"])
	}
}

// What the ledger knows of a Work at its cached generation is kept; an entry of an older
// generation gives way to a vouch of the current one; Works being deleted or of no binding
// are neither vouched for nor counted as uncovered.
func TestPrimeFromVouchesKeepsCurrentEntriesAndReplacesStaleOnes(t *testing.T) {
	meta := func(name string, uid types.UID, generation int64) metav1.PartialObjectMetadata {
		w := desiredWork(`{"kind":"Deployment"}`)
		return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace: w.Namespace, Name: name, UID: uid, Generation: generation, Annotations: w.Annotations}}
	}
	current, stale := meta("current", "u-current", 2), meta("stale", "u-stale", 7)
	deleting := meta("deleting", "u-deleting", 1)
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	foreign := meta("foreign", "u-foreign", 1)
	foreign.Annotations = nil

	l := NewLedger()
	l.remember(&current, 111)
	staleThen := stale
	staleThen.Generation = 6
	l.remember(&staleThen, 666)
	before := l.Changes()

	vouches := map[types.UID]Vouch{
		"u-current":  {UID: "u-current", Generation: 2, Hash: 999},
		"u-stale":    {UID: "u-stale", Generation: 7, Hash: 777},
		"u-deleting": {UID: "u-deleting", Generation: 1, Hash: 1},
		"u-foreign":  {UID: "u-foreign", Generation: 1, Hash: 1},
	}
	added, uncovered := l.PrimeFromVouches([]metav1.PartialObjectMetadata{current, stale, deleting, foreign}, vouches)
	if added != 1 || uncovered != 0 {
		t.Fatalf("PrimeFromVouches = %d added, %d uncovered; want 1 (the stale entry) and 0", added, uncovered)
	}
	if !l.current(&current, 111) || l.current(&current, 999) {
		t.Fatal("the entry at the cached generation must be kept over the vouch")
	}
	if !l.current(&stale, 777) {
		t.Fatal("the entry of an older generation must give way to the vouch of the current one")
	}
	if l.Len() != 2 || l.Changes() == before {
		t.Fatalf("ledger holds %d entries after %d changes, want 2 and a change counted", l.Len(), l.Changes()-before)
	}
}
