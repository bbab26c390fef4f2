// SPDX-License-Identifier: Apache-2.0

// Package deploy_test checks the kustomize deployment manifests under config/ and the
// Dockerfile:
//
//   - config/default, config/local, config/samples (and config/samples/members)
//     are rendered with the real `kubectl kustomize` from the envtest assets;
//   - every rendered object is created on a real kube-apiserver (envtest, with the project's
//     CRDs) with server-side dry run and strict field validation, so a misspelt or misplaced
//     field fails; nothing is persisted;
//   - the manager Deployment is locked down (non-root, read-only root filesystem, no
//     privilege escalation, no capabilities, RuntimeDefault seccomp, requests and limits,
//     probes) and its arguments parse with the binary's own flag set;
//   - the ClusterRole is exactly the generated config/rbac/role.yaml, whose only wildcard
//     rule is read-only, and leader election is confined to a namespaced Role;
//   - config/default installs no CRD and no Namespace (it goes into an existing Karmada),
//     config/local does (standalone control plane).
//
// Run with: KUBEBUILDER_ASSETS=$PWD/bin/k8s go test ./test/integration/deploy/... -count=1
package deploy_test

import (
	"context"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/suite"
)

// targetNamespace is the namespace config/default installs into.
const targetNamespace = "karmada-system"

var (
	ctx context.Context
	k8s client.Client

	// rendered holds the output of `kubectl kustomize` per config directory.
	rendered map[string][]*unstructured.Unstructured
)

// renderedDirs are the kustomize directories the suite renders, relative to the repo root.
var renderedDirs = []string{
	"config/default",
	"config/local",
	"config/samples",
	"config/samples/members",
}

func TestDeploy(t *testing.T) {
	suite.Run(t, "Deployment manifests integration suite", suite.Timeouts{})
}

var _ = BeforeSuite(func() {
	// Rendering needs no API server; do it first so a broken kustomization fails fast.
	kubectl := filepath.Join(envtestutil.BinaryAssetsDir(), "kubectl")
	rendered = map[string][]*unstructured.Unstructured{}
	for _, dir := range renderedDirs {
		rendered[dir] = render(kubectl, dir)
	}

	plane := suite.StartPlane(suite.PlaneOptions{CRDs: []string{envtestutil.ProjectCRDDir()}})
	ctx, k8s = plane.Ctx, plane.Client

	// A dry-run create of a namespaced object needs its namespace to exist for real.
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: targetNamespace}})).To(Succeed())
})
