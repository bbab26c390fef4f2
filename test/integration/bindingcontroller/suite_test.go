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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/suite"
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	"github.com/binding-controller/binding-controller/pkg/controllermanager"
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
	suite.Run(t, "Binding controller on a real API server",
		suite.Timeouts{Eventually: 20 * time.Second, Polling: 50 * time.Millisecond})
}

var _ = BeforeSuite(func() {
	plane := suite.StartPlane(suite.PlaneOptions{
		CRDs: []string{envtestutil.KarmadaCRDDir(),
			filepath.Join(envtestutil.ProjectCRDDir(), "cluster.karmada.io_clusters.yaml"),
			filepath.Join(envtestutil.RepoRoot(), "test", "testdata", "workload-crds"),
			// The project's own rollouts group, so every spec also runs the rollout phase's
			// no-policy path, and the staged-rollout specs can run.
			filepath.Join(envtestutil.ProjectCRDDir(), "rollouts.binding-controller.io_rolloutpolicies.yaml"),
			filepath.Join(envtestutil.ProjectCRDDir(), "rollouts.binding-controller.io_clusterrolloutpolicies.yaml"),
			filepath.Join(envtestutil.ProjectCRDDir(), "rollouts.binding-controller.io_bindingrollouts.yaml"),
			filepath.Join(envtestutil.ProjectCRDDir(), "rollouts.binding-controller.io_clusterbindingrollouts.yaml")},
		Members: members,
		Manager: func(opts *controllermanager.Options) {
			// Keep the backoff short so a retry-driven recovery shows within the test's patience.
			opts.RateLimiter.MaxDelay = 2 * time.Second
			opts.StuckWorkWarningAfter = 3 * time.Second
			opts.RolloutHealthPollInterval = 200 * time.Millisecond
		},
		Simulator: 50 * time.Millisecond,
		Log:       io.MultiWriter(GinkgoWriter, logs),
	})
	ctx, k8s, sim = plane.Ctx, plane.Client, plane.Sim
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
