// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	"github.com/binding-controller/binding-controller/internal/testenv/soaker"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// apiServerStopTimeout is how long kube-apiserver may drain after SIGTERM before envtest
// kills it. A graceful shutdown would wait up to 60 s for the manager's open watches.
const apiServerStopTimeout = 5 * time.Second

// outage is how long kube-apiserver stays down.
const outage = 10 * time.Second

var _ = Describe("kube-apiserver outage", func() {
	// While 50 bindings × 3 clusters are being created, kube-apiserver is stopped (SIGTERM,
	// SIGKILL 5 s later; etcd keeps running), left down for 10 s, and started again on
	// the same address with the same certificates. The manager must ride it out — it
	// keeps running and its informers reconnect — and every binding must converge
	// afterwards, with no Work lost, duplicated or orphaned.
	It("converges after kube-apiserver is down for 10 s in the middle of creating 50 bindings × 3 clusters, the manager staying up", func() {
		m := startReadyManager(noLeader...)
		ns := newNamespace("faults-apiserver-outage")
		load := soaker.NewWorkload(k8s, ns, members, uint64(GinkgoRandomSeed()))
		created, done := createInBackground(load, 50, members, 80*time.Millisecond)

		// Mid-sync: some bindings have their Works, more are being created.
		Eventually(created).Should(BeNumerically(">=", 20))
		Eventually(func() float64 { return workCreates(m) }).Should(BeNumerically(">=", 15))
		apiServer := env.ControlPlane.APIServer
		address := apiServer.SecureServing.Address + ":" + apiServer.SecureServing.Port
		By("stopping kube-apiserver after " + itoa(created()) + " bindings and " + ftoa(workCreates(m)) + " Works were created")
		down := time.Now()
		if err := apiServer.Stop(); err != nil {
			Expect(err.Error()).To(ContainSubstring("timeout waiting for process kube-apiserver to stop"))
		}
		Eventually(func() bool { return localplane.PortFree(address) }).Should(BeTrue(), "kube-apiserver still holds "+address)
		time.Sleep(time.Until(down.Add(outage)))
		By("starting kube-apiserver again after " + time.Since(down).Round(time.Second).String())
		apiServer.StopTimeout = time.Minute // the suite's final stop may drain
		Expect(apiServer.Start()).To(Succeed())
		Expect(apiServer.SecureServing.Address+":"+apiServer.SecureServing.Port).To(Equal(address), "kube-apiserver moved")
		// The suite's client and the manager still use the original kubeconfig.
		Eventually(func() error { return k8s.List(ctx, &workv1alpha2.ResourceBindingList{}) }).Should(Succeed())
		up := time.Now()
		AddReportEntry("kube-apiserver outage", "down "+up.Sub(down).Round(100*time.Millisecond).String()+
			" (including its restart)")

		Eventually(done, time.Minute).Should(BeClosed())
		state := expectConverged(ns, 50)
		Expect(state.Works).To(Equal(150))
		Expect(m.Exited()).To(BeFalse(), "the manager exited during the outage (code %d)", m.ExitCode())
		AddReportEntry("manager", "stayed up (pid "+itoa(m.PID())+"); converged "+
			time.Since(up).Round(100*time.Millisecond).String()+" after kube-apiserver was back; "+writes(m))
		Expect(strings.Count(m.Log(), "Starting workers")).To(Equal(2), "one per controller: the manager did not restart them")
	})
})
