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
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
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
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	RunSpecs(t, "binding-controller-manager under faults")
}

var _ = BeforeSuite(func() {
	// envtest logs through controller-runtime; its chatter is not wanted here.
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	dir := GinkgoT().TempDir()

	// A fixed certificate directory keeps the API server's serving certificate (and so the
	// kubeconfig's CA) across a stop and start of kube-apiserver; envtest keeps its port
	// and client CA. With a directory of its own, envtest would make a new CA on restart.
	env = envtestutil.NewEnvironment(envtestutil.ProjectCRDDir())
	certDir := filepath.Join(dir, "apiserver")
	Expect(os.MkdirAll(certDir, 0o700)).To(Succeed())
	env.ControlPlane.APIServer = &envtest.APIServer{CertDir: certDir}
	// kube-apiserver's graceful shutdown waits up to 60 s for open watches; the outage
	// spec does not wait that long: envtest kills the process after apiServerStopTimeout.
	env.ControlPlaneStopTimeout = apiServerStopTimeout
	cfg, err := env.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(context.Background())
	DeferCleanup(cancel)

	kubeconfig = filepath.Join(dir, "kubeconfig")
	Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())

	// Build the binary from this tree, so the test never runs a stale one.
	binary, err = localplane.BuildManager(ctx, dir)
	Expect(err).NotTo(HaveOccurred())

	k8s, err = client.New(cfg, client.Options{Scheme: envtestutil.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	Expect(testkit.JoinClusters(ctx, k8s, members...)).To(Succeed())
	sim = executionsim.New(k8s, 50*time.Millisecond)
	go sim.Run(ctx)
})
