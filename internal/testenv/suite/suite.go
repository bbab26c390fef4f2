// SPDX-License-Identifier: Apache-2.0

// Package suite is the bootstrap the Ginkgo suites under test/ share: Run runs a suite's
// specs, StartPlane starts what its specs run against (a real kube-apiserver and etcd,
// the member clusters, the controller-manager in-process, the simulated execution side)
// and stops it again when the suite or container that started it ends.
//
//	func TestSomething(t *testing.T) {
//		suite.Run(t, "something on a real API server", suite.Timeouts{Eventually: 30 * time.Second})
//	}
//
//	var _ = BeforeSuite(func() {
//		plane := suite.StartPlane(suite.PlaneOptions{CRDs: []string{envtestutil.KarmadaCRDDir()}, Manager: suite.ManagerDefaults})
//		ctx, k8s = plane.Ctx, plane.Client
//	})
package suite

import (
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// Timeouts are a suite's defaults for Eventually. A zero field keeps Gomega's own.
type Timeouts struct {
	// Eventually is how long an Eventually waits.
	Eventually time.Duration
	// Polling is how often an Eventually polls.
	Polling time.Duration
}

// Run runs the suite's specs under description.
func Run(t *testing.T, description string, timeouts Timeouts) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	if timeouts.Eventually != 0 {
		gomega.SetDefaultEventuallyTimeout(timeouts.Eventually)
	}
	if timeouts.Polling != 0 {
		gomega.SetDefaultEventuallyPollingInterval(timeouts.Polling)
	}
	ginkgo.RunSpecs(t, description)
}
