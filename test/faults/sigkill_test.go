// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"fmt"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/binding-controller/binding-controller/internal/testenv/soaker"
)

var _ = Describe("Manager killed mid-sync", func() {
	// 50 bindings × 3 clusters are created, then rescheduled and some deleted, while the
	// manager is SIGKILLed 8 times, each time 50–500 ms after its workers started — in
	// the middle of its syncs, with no chance to finish a write or clean up — and started
	// again. Afterwards every Work exists exactly once per target cluster, no Work is
	// orphaned, every binding converges and every deleted binding is gone: its finalizer
	// was released although the manager died during its deletion more than once.
	It("leaves no duplicated or orphaned Work and releases every deleted binding after 8 SIGKILLs at random points of a sync", func() {
		const bindings, deleted, kills = 50, 10, 8
		ns := newNamespace("faults-sigkill")
		seed := uint64(GinkgoRandomSeed())
		load := soaker.NewWorkload(k8s, ns, members, seed)
		rng := rand.New(rand.NewPCG(seed, 7))

		// The load: create all, rescheduling an earlier one after every second create, then
		// delete some and reschedule others; about 15 s of it, spanning the kills.
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			for i := 0; i < bindings; i++ {
				createRetrying(load, appName(i), members)
				if i%2 == 1 {
					Expect(load.Update(ctx, appName(rng.IntN(i)), nil)).To(Succeed())
				}
				time.Sleep(200 * time.Millisecond)
			}
			for i := 0; i < deleted; i++ {
				Expect(load.Delete(ctx, appName(i))).To(Succeed())
				Expect(load.Update(ctx, appName(deleted+rng.IntN(bindings-deleted)), nil)).To(Succeed())
				time.Sleep(200 * time.Millisecond)
			}
		}()

		var killLog []string
		for k := 0; k < kills; k++ {
			m := startManager(noLeader...)
			waitSyncing(m)
			offset := time.Duration(50+rng.IntN(451)) * time.Millisecond
			time.Sleep(offset)
			w := writes(m)
			m.Kill()
			killLog = append(killLog, fmt.Sprintf("#%d after %s (%s)", k+1, offset, w))
		}
		AddReportEntry("SIGKILLs (time after the workers started; the killed process's Work writes)", killLog)
		Eventually(done, time.Minute).Should(BeClosed())

		m := startReadyManager(noLeader...)
		state := expectConverged(ns, bindings-deleted)
		Expect(state.Works).To(BeNumerically(">=", bindings-deleted))
		for i := 0; i < deleted; i++ {
			Expect(bindingGone(ns, soaker.BindingName(appName(i)))()).To(BeTrue())
			Expect(describeWorks(ns, soaker.BindingName(appName(i)))()).To(BeEmpty())
		}
		AddReportEntry("final manager", writes(m))
	})
})
