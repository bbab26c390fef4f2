// SPDX-License-Identifier: Apache-2.0

// Package faults injects faults into the built binding-controller-manager binary running
// as its own process against a real kube-apiserver and etcd — the API server stopped and
// restarted, the manager SIGKILLed mid-sync, leader failover, a conflict storm, a blocked
// cluster, a template deleted under a binding — and checks that everything converges once
// the fault ends (internal/testenv/soaker.Check: every binding's Works exist exactly once per
// target cluster, none orphaned, WorksSynced True). It also runs the soak
// (internal/testenv/soaker) in-process for SOAK_DURATION (default 30s).
package faults

import (
	"context"
	"io"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/suite"
)

var (
	ctx        context.Context
	k8s        client.Client
	sim        *executionsim.Simulator
	env        *envtest.Environment
	binary     string
	kubeconfig string
)

// members are the member clusters of the fault cases; every one has its execution namespace.
var members = []string{"member1", "member2", "member3"}

func TestFaults(t *testing.T) {
	suite.Run(t, "binding-controller-manager under faults",
		suite.Timeouts{Eventually: 30 * time.Second, Polling: 200 * time.Millisecond})
}

var _ = BeforeSuite(func() {
	plane := suite.StartPlane(suite.PlaneOptions{
		CRDs: []string{envtestutil.ProjectCRDDir()},
		Configure: func(e *envtest.Environment) error {
			// A fixed certificate directory keeps the API server's serving certificate (and so the
			// kubeconfig's CA) across a stop and start of kube-apiserver; envtest keeps its port
			// and client CA. With a directory of its own, envtest would make a new CA on restart.
			e.ControlPlane.APIServer = &envtest.APIServer{CertDir: GinkgoT().TempDir()}
			// kube-apiserver's graceful shutdown waits up to 60 s for open watches; the outage
			// spec does not wait that long: envtest kills the process after apiServerStopTimeout.
			e.ControlPlaneStopTimeout = apiServerStopTimeout
			return nil
		},
		Members:   members,
		Simulator: 50 * time.Millisecond,
		// envtest logs through controller-runtime; its chatter is not wanted here.
		Log: io.Discard,
	})
	ctx, k8s, sim, env = plane.Ctx, plane.Client, plane.Sim, plane.Env.Environment
	binary, kubeconfig = plane.BuildManager()
})
