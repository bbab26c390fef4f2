// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Vouch is what the ledger knows of one Work, without its name or binding: the Work of
// this UID, at this generation, has a spec of this hash. A vouch stays true for as long
// as the Work lives: its spec cannot change without its generation moving, and a Work
// deleted and created again has a new UID. That is what lets a vouch be saved and read
// back by a later process, however old it is, and trusted only where the Work's cached
// UID and generation still agree.
type Vouch struct {
	UID        types.UID
	Generation int64
	Hash       uint64
}

// Vouches returns what the ledger vouches for now, in no order.
func (l *Ledger) Vouches() []Vouch {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]Vouch, 0, len(l.entries))
	for _, e := range l.entries {
		out = append(out, Vouch{UID: e.uid, Generation: e.generation, Hash: e.hash})
	}
	return out
}

// Changes counts the ledger's changes so far: a saved copy of the vouches taken when it
// read n is still whole while Changes is n.
func (l *Ledger) Changes() uint64 { return l.changes.Load() }

// PrimeFromVouches vouches for each of works (cached metadata) that belongs to a binding,
// is not being deleted and has a vouch of its UID at its generation. An entry the ledger
// holds for the Work as cached (same UID and generation) is kept; an older one gives way
// to the vouch. It returns how many Works it added, and how many it could have vouched
// for but found no vouch for: those are read on their first sync, unless priming lists
// them (Prime).
func (l *Ledger) PrimeFromVouches(works []metav1.PartialObjectMetadata, vouches map[types.UID]Vouch) (added, uncovered int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range works {
		w := &works[i]
		if w.DeletionTimestamp != nil || !namesBinding(w) {
			continue
		}
		if e, ok := l.entries[keyOf(w)]; ok && e.uid == w.UID && e.generation == w.Generation {
			continue
		}
		v, ok := vouches[w.UID]
		if !ok || v.Generation != w.Generation {
			uncovered++
			continue
		}
		l.put(keyOf(w), ledgerEntry{uid: w.UID, generation: w.Generation, hash: v.Hash, owner: ownerOf(w)})
		added++
	}
	return added, uncovered
}
