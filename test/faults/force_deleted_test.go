// SPDX-License-Identifier: Apache-2.0

package faults

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/soaker"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

var _ = Describe("Binding removed without its finalizer while the controller is down", func() {
	// An operator strips the finalizer from 3 of 6 bindings and deletes them while no
	// controller runs (kubectl patch --type=merge -p '{"metadata":{"finalizers":null}}').
	// Their 9 Works are left naming bindings that are gone. The restarted controller sees
	// the Works appear in its cache without a binding and deletes them; the other 3
	// bindings keep theirs.
	It("deletes the Works of bindings that are gone once it starts again, and only those", func() {
		const bindings, removed = 6, 3
		m := startReadyManager(noLeader...)
		ns := newNamespace("faults-force-deleted")
		load := soaker.NewWorkload(k8s, ns, members, uint64(GinkgoRandomSeed()))
		for i := 0; i < bindings; i++ {
			Expect(load.Create(ctx, appName(i), members)).To(Succeed())
		}
		expectConverged(ns, bindings)
		m.Kill()

		for i := 0; i < removed; i++ {
			rb := &workv1alpha2.ResourceBinding{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: soaker.BindingName(appName(i))}, rb)).To(Succeed())
			base := rb.DeepCopy()
			rb.Finalizers = nil
			Expect(k8s.Patch(ctx, rb, client.MergeFrom(base))).To(Succeed())
			Expect(load.Delete(ctx, appName(i))).To(Succeed())
			Expect(worksOf(ns, rb.Name)).To(HaveLen(len(members)), "the Works stay while no controller runs")
		}

		startReadyManager(noLeader...)
		state := expectConverged(ns, bindings-removed)
		Expect(state.Works).To(Equal((bindings - removed) * len(members)))
		for i := 0; i < removed; i++ {
			Expect(describeWorks(ns, soaker.BindingName(appName(i)))()).To(BeEmpty())
		}
	})
})
