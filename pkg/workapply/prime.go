// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

// primePageSize bounds how many whole Works (manifests included) one page holds; priming
// holds at most two pages at once, the one it reads and the one it vouches for.
const primePageSize = 500

// ExpectPriming makes Primed wait until PrimingDone is called. Call it before the
// ledger is used.
func (l *Ledger) ExpectPriming() {
	l.primed = make(chan struct{})
	l.primedOnce = sync.Once{}
}

// PrimingDone ends the wait of Primed, whether priming succeeded or not.
func (l *Ledger) PrimingDone() { l.primedOnce.Do(func() { close(l.primed) }) }

// Primed is closed once the ledger is primed or priming gave up.
func (l *Ledger) Primed() <-chan struct{} { return l.primed }

// Prime lists every Work from the API server, a page at a time, and vouches for those
// that belong to a binding and are not being deleted: their UID, generation and spec hash
// as they stand. A first sync then finds them current without reading each one; a Work
// whose spec differs from what is desired is read and updated as before. Entries this
// process already holds are kept: they are as fresh. It returns how many Works it added.
func (l *Ledger) Prime(ctx context.Context, reader client.Reader) (int, error) {
	// The next page is fetched while this one is vouched for: the API server encodes one
	// while this process decodes the other, instead of each waiting on the other.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type page struct {
		list *workv1alpha1.WorkList
		err  error
	}
	pages := make(chan page, 1)
	go func() {
		defer close(pages)
		next := ""
		for {
			list := &workv1alpha1.WorkList{}
			err := reader.List(ctx, list, client.Limit(primePageSize), client.Continue(next))
			select {
			case pages <- page{list, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || list.Continue == "" {
				return
			}
			next = list.Continue
		}
	}()
	added := 0
	for p := range pages {
		if p.err != nil {
			return added, fmt.Errorf("listing works: %w", p.err)
		}
		for i := range p.list.Items {
			if l.vouchFor(&p.list.Items[i]) {
				added++
			}
		}
	}
	return added, ctx.Err()
}

func (l *Ledger) vouchFor(work *workv1alpha1.Work) bool {
	if work.DeletionTimestamp != nil || !namesBinding(work) {
		return false
	}
	// The hash reads the flags and the manifests' bytes only: a shallow copy with the
	// manifests in canonical form will do, without copying the Work.
	spec := work.Spec
	spec.Workload.Manifests = make([]workv1alpha1.Manifest, len(work.Spec.Workload.Manifests))
	for i, m := range work.Spec.Workload.Manifests {
		canonical, ok := canonicalManifest(m.Raw)
		if !ok {
			return false
		}
		spec.Workload.Manifests[i].Raw = canonical
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, known := l.entries[keyOf(work)]; known {
		return false
	}
	l.put(keyOf(work), ledgerEntry{uid: work.UID, generation: work.Generation, hash: specHash(&spec), owner: ownerOf(work)})
	return true
}

// namesBinding tells whether a Work's annotations name a binding: the controller's own.
func namesBinding(work metav1.Object) bool {
	annotations := work.GetAnnotations()
	for _, key := range ownershipAnnotations {
		if annotations[key] != "" {
			return true
		}
	}
	return false
}
