// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/soaker"
)

const (
	leaseName = "faults-binding-controller"
	acquired  = "Successfully acquired lease"
)

// leaderArgs elect a leader on a short lease, as test/e2e does.
var leaderArgs = []string{"--leader-elect=true", "--leader-elect-resource-namespace=default",
	"--leader-elect-resource-name=" + leaseName, "--leader-elect-lease-duration=4s",
	"--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms"}

var _ = Describe("Leader failover under load", func() {
	// Two managers elect a leader on a 4 s lease. While 50 bindings × 3 clusters are
	// being created, the leader is SIGKILLed (it cannot release the lease); the standby
	// takes the lease once it expires and converges everything — the bindings the old
	// leader had half-synced and those created during the handover — with no Work
	// duplicated or orphaned. The standby writes nothing before it leads.
	It("hands over to the standby when the leader is SIGKILLed mid-load, and the standby converges every binding", func() {
		leader := startManager(leaderArgs...)
		Eventually(leader.Log).Should(ContainSubstring(acquired))
		waitSyncing(leader)
		// Not startReadyManager: a standby is never ready (see the known bug below).
		standby := startManager(leaderArgs...)
		Eventually(standby.Log).Should(ContainSubstring("Attempting to acquire leader lease"))

		ns := newNamespace("faults-leader-failover")
		load := soaker.NewWorkload(k8s, ns, members, uint64(GinkgoRandomSeed()))
		created, done := createInBackground(load, 50, members, 80*time.Millisecond)
		Eventually(created).Should(BeNumerically(">=", 20))
		Eventually(func() float64 { return workCreates(leader) }).Should(BeNumerically(">=", 15))

		Expect(standby.Log()).NotTo(ContainSubstring(workersStarted), "the standby must not run controllers")
		Expect(workCreates(standby)).To(BeZero())
		By("SIGKILLing the leader after " + itoa(created()) + " bindings and " + ftoa(workCreates(leader)) + " Works")
		leaderWrites := writes(leader)
		leader.Kill()
		killed := time.Now()

		Eventually(standby.Log, 30*time.Second).Should(ContainSubstring(acquired))
		took := time.Since(killed)
		Expect(standby.WaitReady(ctx, 30*time.Second)).To(Succeed(), "the new leader must become ready")
		Eventually(done, time.Minute).Should(BeClosed())
		state := expectConverged(ns, 50)
		Expect(state.Works).To(Equal(150))
		Expect(standby.Exited()).To(BeFalse())
		Expect(strings.Count(standby.Log(), acquired)).To(Equal(1))
		lease := &coordinationv1.Lease{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: leaseName}, lease)).To(Succeed())
		Expect(ptr.Deref(lease.Spec.HolderIdentity, "")).NotTo(BeEmpty())
		AddReportEntry("handover", "standby acquired the lease "+took.Round(100*time.Millisecond).String()+
			" after the leader's SIGKILL; leader wrote "+leaderWrites+"; standby wrote "+writes(standby))
	})
})

var _ = Describe("Standby readiness", func() {
	// config/default runs two replicas with leader election and a readiness probe on
	// /readyz, which the README describes as "ready once caches synced". A standby has
	// its caches synced while it waits for the lease, so it should be ready; otherwise
	// the second pod never becomes Ready and 'kubectl rollout status' never completes.
	It("reports a standby manager ready (/readyz) once its caches have synced, while it waits for the lease", func() {
		leader := startManager(leaderArgs...)
		Eventually(leader.Log).Should(ContainSubstring(acquired))
		standby := startManager(leaderArgs...)
		Eventually(standby.Log).Should(ContainSubstring("Attempting to acquire leader lease"))
		Expect(standby.WaitReady(ctx, 30*time.Second)).To(Succeed())
		Expect(standby.Log()).NotTo(ContainSubstring(acquired))
	})
})
