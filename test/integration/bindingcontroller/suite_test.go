// SPDX-License-Identifier: Apache-2.0

// Package bindingcontroller_test runs the binding controllers in-process against a real
// kube-apiserver and etcd with Karmada's own published CRDs installed, so what is proven
// here holds on a real Karmada control plane.
package bindingcontroller_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
)

var (
	ctx  context.Context
	k8s  client.Client // uncached: what a user would see
	sim  *executionsim.Simulator
	logs = &testkit.SyncBuffer{}
)

// members have execution namespaces from the start.
var members = []string{"member1", "member2", "member3"}

func TestBindingController(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	RunSpecs(t, "Binding controller on a real API server")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(io.MultiWriter(GinkgoWriter, logs)), zap.UseDevMode(true)))

	env, cfg, err := envtestutil.Start(envtestutil.KarmadaCRDDir(),
		filepath.Join(envtestutil.ProjectCRDDir(), "cluster.karmada.io_clusters.yaml"),
		filepath.Join(envtestutil.RepoRoot(), "test", "testdata", "workload-crds"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(context.Background())

	k8s, err = client.New(cfg, client.Options{Scheme: envtestutil.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	Expect(testkit.JoinClusters(ctx, k8s, members...)).To(Succeed())

	opts := testkit.InProcessOptions()
	// Keep the backoff short so a retry-driven recovery shows within the test's patience.
	opts.RateLimiter.MaxDelay = 2 * time.Second
	opts.StuckWorkWarningAfter = 3 * time.Second
	stop, err := testkit.RunManager(ctx, cfg, opts, func(err error) { defer GinkgoRecover(); Fail(err.Error()) })
	Expect(err).NotTo(HaveOccurred())
	// Cleanups run last-registered first: the controller stops before the API server.
	DeferCleanup(func() { stop(); cancel() })

	sim = executionsim.New(k8s, 50*time.Millisecond)
	go sim.Run(ctx)
})

var nsCounter int

// newNamespace creates a namespace for one spec's templates and bindings, so that specs
// never share a Work name.
func newNamespace() string {
	nsCounter++
	name := fmt.Sprintf("it-%d-%d", GinkgoParallelProcess(), nsCounter)
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}
