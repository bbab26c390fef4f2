// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// workOf is a Work of ResourceBinding default/binding in cluster's execution namespace.
func workOf(binding, cluster, name string, uid types.UID) *workv1alpha1.Work {
	w := desiredWork(`{"kind":"Deployment"}`)
	w.Namespace, w.Name, w.UID = "karmada-es-"+cluster, name, uid
	w.Annotations[workv1alpha2.ResourceBindingNameAnnotation] = binding
	return w
}

// bindingNamed stands for the binding default/name, as WorksOf is asked about it.
func bindingNamed(name string) metav1.Object {
	return &metav1.ObjectMeta{Annotations: map[string]string{
		workv1alpha2.ResourceBindingNamespaceAnnotation: "default",
		workv1alpha2.ResourceBindingNameAnnotation:      name,
	}}
}

// worksOf lists what the ledger holds for binding default/name as "namespace/name@uid", sorted.
func worksOf(l *Ledger, name string) []string {
	var out []string
	for _, w := range l.WorksOf(bindingNamed(name)) {
		out = append(out, fmt.Sprintf("%s/%s@%s", w.Namespace, w.Name, w.UID))
	}
	slices.Sort(out)
	return out
}

// WorksOf answers from an index by binding; every way an entry comes, goes or changes
// hands must keep that index right.
func TestLedgerWorksOfFollowsEveryChange(t *testing.T) {
	l := NewLedger()
	expect := func(step, binding string, want ...string) {
		t.Helper()
		if got := worksOf(l, binding); !slices.Equal(got, want) {
			t.Fatalf("%s: WorksOf(%s) = %q, want %q", step, binding, got, want)
		}
	}
	l.remember(workOf("a", "member1", "w", "uid-a1"), 1)
	l.remember(workOf("a", "member2", "w", "uid-a2"), 1)
	l.remember(workOf("b", "member1", "x", "uid-b1"), 1)
	expect("remember", "a", "karmada-es-member1/w@uid-a1", "karmada-es-member2/w@uid-a2")
	expect("remember", "b", "karmada-es-member1/x@uid-b1")

	// The same Work written again, newer: one entry, the new UID.
	l.remember(workOf("a", "member1", "w", "uid-a1b"), 2)
	expect("re-remember", "a", "karmada-es-member1/w@uid-a1b", "karmada-es-member2/w@uid-a2")

	// The name passes to another binding: it leaves a's Works and joins b's.
	l.remember(workOf("b", "member2", "w", "uid-b2"), 1)
	expect("owner change", "a", "karmada-es-member1/w@uid-a1b")
	expect("owner change", "b", "karmada-es-member1/x@uid-b1", "karmada-es-member2/w@uid-b2")

	// Forgetting an older UID at a key leaves the newer entry.
	l.forget(types.NamespacedName{Namespace: "karmada-es-member1", Name: "w"}, "uid-a1")
	expect("forget old uid", "a", "karmada-es-member1/w@uid-a1b")
	l.forget(types.NamespacedName{Namespace: "karmada-es-member1", Name: "w"}, "uid-a1b")
	expect("forget", "a")
	l.forget(types.NamespacedName{Namespace: "karmada-es-member2", Name: "w"}, "uid-b2")
	expect("forget", "b", "karmada-es-member1/x@uid-b1")

	// Priming adds the Works it does not know, under their owners, and keeps those it does.
	known := workOf("c", "member1", "x", "uid-c1") // the ledger holds uid-b1 here
	fresh := workOf("c", "member3", "y", "uid-c3")
	cl := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(known, fresh).Build()
	if added, err := l.Prime(context.Background(), cl); err != nil || added != 1 {
		t.Fatalf("Prime = %d, %v; want 1 added", added, err)
	}
	expect("prime", "b", "karmada-es-member1/x@uid-b1")
	expect("prime", "c", "karmada-es-member3/y@uid-c3")
	if l.Len() != 2 {
		t.Fatalf("ledger holds %d entries, want 2", l.Len())
	}
	expect("unknown binding", "nobody")
}

// Workers share one ledger; run with -race. Each worker ends holding the even-numbered
// of its Works, and the index must say so.
func TestLedgerUnderConcurrentWorkers(t *testing.T) {
	l := NewLedger()
	var wg sync.WaitGroup
	for worker := range 4 {
		wg.Go(func() {
			binding := fmt.Sprintf("binding-%d", worker)
			for i := range 50 {
				w := workOf(binding, fmt.Sprintf("member%d", i), "w", types.UID(fmt.Sprintf("uid-%d-%d", worker, i)))
				w.Name = binding
				l.remember(w, 1)
				if !l.Wrote(keyOf(w), w.UID) || !l.current(w, 1) || len(l.WorksOf(bindingNamed(binding))) == 0 {
					t.Errorf("%s: the Work just remembered is not vouched for", keyOf(w))
				}
				if i%2 == 1 {
					l.forget(keyOf(w), w.UID)
				}
			}
		})
	}
	wg.Wait()
	for worker := range 4 {
		if got := len(l.WorksOf(bindingNamed(fmt.Sprintf("binding-%d", worker)))); got != 25 {
			t.Errorf("binding-%d: WorksOf returned %d Works, want 25", worker, got)
		}
	}
}

// WorksOf runs several times per sync; its cost must not grow with the Works of other
// bindings. Compare the sizes: ns/op should be about the same.
func BenchmarkLedgerWorksOf(b *testing.B) {
	const perBinding = 10
	for _, size := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("entries=%d", size), func(b *testing.B) {
			l := NewLedger()
			for i := 0; i < size; i++ {
				w := WorkMetadata()
				w.Namespace, w.Name = fmt.Sprintf("karmada-es-member%d", i%perBinding), fmt.Sprintf("work-%d", i/perBinding)
				w.UID = types.UID(fmt.Sprintf("uid-%d", i))
				w.Annotations = map[string]string{
					workv1alpha2.ResourceBindingNamespaceAnnotation: "default",
					workv1alpha2.ResourceBindingNameAnnotation:      fmt.Sprintf("binding-%d", i/perBinding),
				}
				l.remember(w, 0)
			}
			owner := bindingNamed(fmt.Sprintf("binding-%d", size/perBinding/2))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if n := len(l.WorksOf(owner)); n != perBinding {
					b.Fatalf("WorksOf returned %d Works, want %d", n, perBinding)
				}
			}
		})
	}
}
