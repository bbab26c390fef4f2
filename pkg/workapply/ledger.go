// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/recent"
)

// Ledger remembers, for each Work this process wrote or read and found current, the
// Work's UID and generation at that moment and a hash of the content it was brought to.
// Works are cached as metadata only, so that the cache's memory does not grow with
// manifest size; the ledger is what lets a resync still tell, without a request, that a
// Work is current: same UID, same generation (nobody changed its spec), same spec hash
// (the binding and template ask for the same). It costs about 250 bytes per Work, its
// index by binding included. A process that starts fills it from a paged list of the
// Works (Prime) rather than reading each Work on its first sync.
type Ledger struct {
	// mu is read-locked on the hot path (current, Wrote, WorksOf), so that workers syncing
	// Works already current do not wait on one another.
	mu      sync.RWMutex
	entries map[types.NamespacedName]ledgerEntry
	// byOwner indexes entries by owner, so that WorksOf costs the binding's Works and not
	// every Work the process knows. put and drop keep it in step with entries.
	byOwner map[string]map[types.NamespacedName]struct{}
	// primed is closed once priming is over, or at once when none is expected.
	primed     chan struct{}
	primedOnce sync.Once
	// deleted are the UIDs of Works this process deleted lately. The cache shows such a
	// Work alive until its deletion event arrives; knowing it is gone spares a second DELETE.
	deleted *recent.UIDs
	// changes counts puts and drops, so that a saved copy of the vouches can tell
	// whether it is still whole (Changes).
	changes atomic.Uint64
}

// deletedMemory is how long a deleted Work's UID is remembered: far longer than any cache lag.
const deletedMemory = 10 * time.Minute

type ledgerEntry struct {
	uid        types.UID
	generation int64
	hash       uint64
	owner      string // the binding the Work's annotations name
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	primed := make(chan struct{})
	close(primed)
	return &Ledger{
		entries: map[types.NamespacedName]ledgerEntry{},
		byOwner: map[string]map[types.NamespacedName]struct{}{},
		deleted: recent.NewUIDs(deletedMemory),
		primed:  primed,
	}
}

func (l *Ledger) remember(work metav1.Object, hash uint64) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.put(keyOf(work), ledgerEntry{uid: work.GetUID(), generation: work.GetGeneration(), hash: hash, owner: ownerOf(work)})
}

// put sets the entry at key, moving key in the index when its owner changed. l.mu must
// be held for writing.
func (l *Ledger) put(key types.NamespacedName, e ledgerEntry) {
	if old, ok := l.entries[key]; ok && old.owner != e.owner {
		l.unindex(old.owner, key)
	}
	l.entries[key] = e
	l.changes.Add(1)
	keys := l.byOwner[e.owner]
	if keys == nil {
		keys = map[types.NamespacedName]struct{}{}
		l.byOwner[e.owner] = keys
	}
	keys[key] = struct{}{}
}

// drop removes the entry at key. l.mu must be held for writing.
func (l *Ledger) drop(key types.NamespacedName) {
	if e, ok := l.entries[key]; ok {
		delete(l.entries, key)
		l.changes.Add(1)
		l.unindex(e.owner, key)
	}
}

func (l *Ledger) unindex(owner string, key types.NamespacedName) {
	keys := l.byOwner[owner]
	delete(keys, key)
	if len(keys) == 0 {
		// A binding's last Work gone: its set goes too, or the index would keep one per
		// binding ever seen.
		delete(l.byOwner, owner)
	}
}

// WorksOf returns, as metadata, the Works the ledger holds for the binding a Work of
// desired's ownership annotations would name. The informer cache may not have seen a Work
// created a moment ago; cleaning up from the cache alone would leave it orphaned.
func (l *Ledger) WorksOf(owner metav1.Object) []metav1.PartialObjectMetadata {
	if l == nil {
		return nil
	}
	want := ownerOf(owner)
	l.mu.RLock()
	defer l.mu.RUnlock()
	keys := l.byOwner[want]
	if len(keys) == 0 {
		return nil
	}
	works := make([]metav1.PartialObjectMetadata, 0, len(keys))
	for key := range keys {
		w := WorkMetadata()
		w.Namespace, w.Name, w.UID = key.Namespace, key.Name, l.entries[key].uid
		works = append(works, *w)
	}
	return works
}

// forget drops what the ledger knows of the Work at key with this UID, which is gone. An
// entry of another UID is a newer Work of the same name, and stays.
func (l *Ledger) forget(key types.NamespacedName, uid types.UID) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.entries[key]; ok && e.uid == uid {
		l.drop(key)
	}
	l.deleted.Add(uid)
}

// Deleted tells whether this process deleted the Work with this UID lately (or found it
// already gone).
func (l *Ledger) Deleted(uid types.UID) bool {
	if l == nil {
		return false
	}
	return l.deleted.Has(uid)
}

// Wrote tells whether the Work at key with this UID was written (or read and found
// current) by this process: it is the controller's own.
func (l *Ledger) Wrote(key types.NamespacedName, uid types.UID) bool {
	if l == nil {
		return false
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	e, ok := l.entries[key]
	return ok && e.uid == uid
}

// current tells whether work is, as far as the ledger knows, exactly as last written
// with content of this hash.
func (l *Ledger) current(work metav1.Object, hash uint64) bool {
	if l == nil {
		return false
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	e, ok := l.entries[keyOf(work)]
	return ok && e.uid == work.GetUID() && e.generation == work.GetGeneration() && e.hash == hash
}

// Len is how many Works the ledger vouches for.
func (l *Ledger) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.entries)
}

// specHash hashes what a Work's spec asks for: whether dispatching is suspended, whether
// resources outlive the Work, and the manifests' bytes. Labels, annotations and
// finalizers need no hash: the cached metadata shows them.
func specHash(spec *workv1alpha1.WorkSpec) uint64 {
	h := fnv.New64a()
	flag := func(b *bool) {
		if ptr.Deref(b, false) {
			_, _ = h.Write([]byte{1})
		} else {
			_, _ = h.Write([]byte{0})
		}
	}
	flag(spec.SuspendDispatching)
	flag(spec.PreserveResourcesOnDeletion)
	for _, m := range spec.Workload.Manifests {
		// A length prefix keeps manifest boundaries apart.
		_, _ = fmt.Fprintf(h, "%d:", len(m.Raw))
		_, _ = h.Write(m.Raw)
	}
	return h.Sum64()
}
