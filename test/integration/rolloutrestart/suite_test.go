// SPDX-License-Identifier: Apache-2.0

// Package rolloutrestart_test restarts the controller-manager in the middle of a staged
// rollout, against a real kube-apiserver and etcd: the suite owns its manager, so that a
// spec can stop it and start a fresh one with nothing kept in memory.
package rolloutrestart_test

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
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
)

var (
	ctx     context.Context
	k8s     client.Client // uncached: what a user would see
	sim     *executionsim.Simulator
	plane   *suite.Plane
	stopMgr func()
)

func TestRolloutRestart(t *testing.T) {
	suite.Run(t, "Staged rollouts across a controller restart",
		suite.Timeouts{Eventually: 20 * time.Second, Polling: 50 * time.Millisecond})
}

var _ = BeforeSuite(func() {
	crds := envtestutil.ProjectCRDDir()
	plane = suite.StartPlane(suite.PlaneOptions{
		CRDs: []string{envtestutil.KarmadaCRDDir(),
			filepath.Join(crds, "cluster.karmada.io_clusters.yaml"),
			filepath.Join(crds, "rollouts.binding-controller.io_rolloutpolicies.yaml"),
			filepath.Join(crds, "rollouts.binding-controller.io_clusterrolloutpolicies.yaml"),
			filepath.Join(crds, "rollouts.binding-controller.io_bindingrollouts.yaml"),
			filepath.Join(crds, "rollouts.binding-controller.io_clusterbindingrollouts.yaml")},
		Members:   []string{"member1", "member2", "member3"},
		Simulator: 50 * time.Millisecond,
	})
	ctx, k8s, sim = plane.Ctx, plane.Client, plane.Sim
	startManager()
	// Cleanups run last-registered first: the controller stops before the API server.
	DeferCleanup(func() { stopMgr() })
})

// startManager starts a fresh controller-manager in-process: after stopMgr, nothing of
// the last one's memory survives.
func startManager() {
	opts := testkit.InProcessOptions()
	opts.RateLimiter.MaxDelay = 2 * time.Second
	opts.RolloutHealthPollInterval = 200 * time.Millisecond
	opts.SkipControllerNameValidation = true // a restart builds a second one
	stopMgr = plane.RunManager(plane.Config, opts)
}
