// SPDX-License-Identifier: Apache-2.0

// Package compat runs the compatibility table — every case under pkg/render/testdata/golden,
// each an input (binding, template, override policies, Clusters) and the Works Karmada's
// rules give for it, citing the Karmada rule it encodes — through the controller on a real
// kube-apiserver and etcd with Karmada's published CRDs. pkg/render's TestGolden checks the
// same table against the pure renderer; here the Works are the ones the API server stores.
package compat_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
)

var (
	ctx context.Context
	k8s client.Client // uncached: what a user would see
)

func TestCompatibilityTable(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	RunSpecs(t, "Karmada compatibility table on a real API server")
}

// startPlane starts a control plane with Karmada's CRDs, with or without the stand-in for
// karmada-webhook's Work mutation, and the controller on it; they stop when the container ends.
func startPlane(webhook bool) {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	env, err := envtestutil.StartWith(envtestutil.Options{
		CRDPaths: []string{
			envtestutil.KarmadaCRDDir(), filepath.Join(envtestutil.ProjectCRDDir(), "cluster.karmada.io_clusters.yaml"),
			filepath.Join(envtestutil.RepoRoot(), "test", "integration", "compat", "testdata", "crds"),
		},
		KarmadaWorkWebhook: webhook,
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(context.Background())
	k8s, err = client.New(env.Config, client.Options{Scheme: envtestutil.Scheme()})
	Expect(err).NotTo(HaveOccurred())

	opts := testkit.InProcessOptions()
	// Each container runs its own manager in this process.
	opts.SkipControllerNameValidation = true
	stop, err := testkit.RunManager(ctx, env.Config, opts, func(err error) { defer GinkgoRecover(); Fail(err.Error()) })
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { stop(); cancel() })

	// Cases share template names: each case's Works are deleted before the next, and the
	// simulated execution side lets go of them.
	sim := executionsim.New(k8s, 20*time.Millisecond)
	go sim.Run(ctx)
}
