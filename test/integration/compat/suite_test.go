// Package compat runs the compatibility table — every case under pkg/render/testdata/golden,
// each an input (binding, template, override policies, Clusters) and the Works Karmada's
// rules give for it, citing the Karmada rule it encodes — through the controller on a real
// kube-apiserver and etcd with Karmada's published CRDs. pkg/render's TestGolden checks the
// same table against the pure renderer; here the Works are the ones the API server stores.
package compat_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/binding-controller/binding-controller/test/envtestutil"
	"github.com/binding-controller/binding-controller/test/executionsim"
	"github.com/binding-controller/binding-controller/test/testkit"
)

var (
	ctx context.Context
	k8s client.Client // uncached: what a user would see
	cfg *rest.Config
)

func TestCompatibilityTable(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	RunSpecs(t, "Karmada compatibility table on a real API server")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(io.MultiWriter(GinkgoWriter, io.Discard)), zap.UseDevMode(true)))
	env, c, err := envtestutil.Start(envtestutil.KarmadaCRDDir(),
		filepath.Join(envtestutil.ProjectCRDDir(), "cluster.karmada.io_clusters.yaml"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	cfg = c
	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(context.Background())
	k8s, err = client.New(cfg, client.Options{Scheme: envtestutil.Scheme()})
	Expect(err).NotTo(HaveOccurred())

	stop, err := testkit.RunManager(ctx, cfg, testkit.InProcessOptions(), func(err error) { defer GinkgoRecover(); Fail(err.Error()) })
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { stop(); cancel() })

	// Cases share template names: each case's Works are deleted before the next, and the
	// simulated execution side lets go of them.
	sim := executionsim.New(k8s, 20*time.Millisecond)
	go sim.Run(ctx)
})
