// SPDX-License-Identifier: Apache-2.0

// Package e2e runs the built binding-controller-manager binary as its own process against
// a real kube-apiserver and etcd, plays Karmada's execution side, and checks what a user
// sees: Works through the API, events, and the process log.
package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/suite"
)

var (
	ctx        context.Context
	k8s        client.Client
	sim        *executionsim.Simulator
	binary     string
	kubeconfig string
)

func TestE2E(t *testing.T) {
	suite.Run(t, "binding-controller-manager binary end to end",
		suite.Timeouts{Eventually: 30 * time.Second, Polling: 100 * time.Millisecond})
}

var _ = BeforeSuite(func() {
	plane := suite.StartPlane(suite.PlaneOptions{
		CRDs: []string{envtestutil.ProjectCRDDir(),
			filepath.Join(envtestutil.RepoRoot(), "test", "testdata", "workload-crds"),
			filepath.Join(envtestutil.RepoRoot(), "test", "e2e", "testdata", "hostile-crds")},
		Members:   []string{"member1", "member2", "member3"},
		Simulator: 50 * time.Millisecond,
	})
	ctx, k8s, sim = plane.Ctx, plane.Client, plane.Sim
	binary, kubeconfig = plane.BuildManager()
})
