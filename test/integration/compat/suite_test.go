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

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/suite"
	"github.com/binding-controller/binding-controller/pkg/controllermanager"
)

var (
	ctx context.Context
	k8s client.Client // uncached: what a user would see
)

func TestCompatibilityTable(t *testing.T) {
	suite.Run(t, "Karmada compatibility table on a real API server",
		suite.Timeouts{Eventually: 30 * time.Second, Polling: 50 * time.Millisecond})
}

// startPlane starts a control plane with Karmada's CRDs, with or without the stand-in for
// karmada-webhook's Work mutation, and the controller on it; they stop when the container ends.
func startPlane(webhook bool) {
	plane := suite.StartPlane(suite.PlaneOptions{
		CRDs: []string{
			envtestutil.KarmadaCRDDir(), filepath.Join(envtestutil.ProjectCRDDir(), "cluster.karmada.io_clusters.yaml"),
			filepath.Join(envtestutil.RepoRoot(), "test", "integration", "compat", "testdata", "crds"),
		},
		KarmadaWorkWebhook: webhook,
		Manager: func(opts *controllermanager.Options) {
			// Each container runs its own manager in this process.
			opts.SkipControllerNameValidation = true
		},
		// Cases share template names: each case's Works are deleted before the next, and the
		// simulated execution side lets go of them.
		Simulator: 20 * time.Millisecond,
	})
	ctx, k8s = plane.Ctx, plane.Client
}
