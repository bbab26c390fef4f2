// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/binding-controller/binding-controller/internal/testenv/soaker"
)

var _ = Describe("Binding deleted while a cluster is blocked", func() {
	// member1 is disconnected (its execution side no longer releases deleted Works), then
	// 5 of 10 bindings × 3 clusters are deleted. Each deleted binding is released at once
	// — its finalizer does not wait for member1 — and its member2 and member3 Works are
	// gone, while its member1 Work stays terminating. The other 5 bindings are untouched.
	// Once member1 reconnects its Works are released and everything has converged.
	It("releases a deleted binding and its other Works while member1 is blocked, and cleans member1's Work once it reconnects", func() {
		const bindings, deleted = 10, 5
		m := startReadyManager(noLeader...)
		ns := newNamespace("faults-blocked-delete")
		load := soaker.NewWorkload(k8s, ns, members, uint64(GinkgoRandomSeed()))
		for i := 0; i < bindings; i++ {
			Expect(load.Create(ctx, appName(i), members)).To(Succeed())
		}
		expectConverged(ns, bindings)

		sim.Disconnect("member1")
		DeferCleanup(sim.Connect, "member1")
		for i := 0; i < deleted; i++ {
			Expect(load.Delete(ctx, appName(i))).To(Succeed())
		}
		for i := 0; i < deleted; i++ {
			rb := soaker.BindingName(appName(i))
			Eventually(bindingGone(ns, rb)).Should(BeTrue(), rb+" is still held by its finalizer")
			Eventually(describeWorks(ns, rb)).Should(ConsistOf("member1:terminating"), rb)
		}
		// Blocked, not forgotten: the other bindings stay converged, and the only problems
		// are the deleted bindings' member1 Works.
		Consistently(func(g Gomega) {
			state, err := check(ns)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(state.Bindings).To(Equal(bindings - deleted))
			g.Expect(state.Problems).To(HaveLen(deleted), state.Summary(20))
			for _, p := range state.Problems {
				g.Expect(p.Cluster).To(Equal("member1"), p.String())
				g.Expect(p.What).To(ContainSubstring("its binding is gone"), p.String())
				g.Expect(p.What).To(ContainSubstring("terminating"), p.String())
			}
		}, 2*time.Second, 250*time.Millisecond).Should(Succeed())

		sim.Connect("member1")
		expectConverged(ns, bindings-deleted)
		for i := 0; i < deleted; i++ {
			Expect(describeWorks(ns, soaker.BindingName(appName(i)))()).To(BeEmpty())
		}
		Expect(m.Exited()).To(BeFalse())
	})
})
