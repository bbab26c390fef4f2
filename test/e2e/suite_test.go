// SPDX-License-Identifier: Apache-2.0

// Package e2e runs the built binding-controller-manager binary as its own process against
// a real kube-apiserver and etcd, plays Karmada's execution side, and checks what a user
// sees: Works through the API, events, and the process log.
package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
)

var (
	ctx        context.Context
	k8s        client.Client
	sim        *executionsim.Simulator
	binary     string
	kubeconfig string
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "binding-controller-manager binary end to end")
}

var _ = BeforeSuite(func() {
	env, cfg, err := envtestutil.Start(envtestutil.ProjectCRDDir(),
		filepath.Join(envtestutil.RepoRoot(), "test", "testdata", "workload-crds"),
		filepath.Join(envtestutil.RepoRoot(), "test", "e2e", "testdata", "hostile-crds"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(context.Background())
	DeferCleanup(cancel)

	dir := GinkgoT().TempDir()
	kubeconfig = filepath.Join(dir, "kubeconfig")
	Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())

	// Build the binary from this tree, so the test never runs a stale one.
	binary, err = localplane.BuildManager(ctx, dir)
	Expect(err).NotTo(HaveOccurred())

	k8s, err = client.New(cfg, client.Options{Scheme: envtestutil.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	Expect(testkit.JoinClusters(ctx, k8s, "member1", "member2", "member3")).To(Succeed())
	sim = executionsim.New(k8s, 50*time.Millisecond)
	go sim.Run(ctx)
})
