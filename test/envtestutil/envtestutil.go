/*
Copyright 2026 The binding-controller Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package envtestutil starts a real kube-apiserver and etcd (controller-runtime's
// envtest) with the project's CRDs installed, for integration and e2e tests.
//
// The control-plane binaries are taken from $KUBEBUILDER_ASSETS or, when it is unset,
// from <repo root>/bin/k8s, where 'make envtest' builds them.
//
// Typical use in a Ginkgo suite:
//
//	env, cfg, err := envtestutil.Start(envtestutil.ProjectCRDDir())
//	Expect(err).NotTo(HaveOccurred())
//	DeferCleanup(env.Stop)
//	c, err := client.New(cfg, client.Options{Scheme: envtestutil.Scheme()})
package envtestutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/binding-controller/binding-controller/pkg/apis"
)

// AssetsEnv is the environment variable naming the directory holding kube-apiserver,
// etcd and kubectl.
const AssetsEnv = "KUBEBUILDER_ASSETS"

var (
	repoRootOnce sync.Once
	repoRoot     string
)

// RepoRoot returns the root directory of the repository: the closest directory holding
// a go.mod, walking up from the working directory (go test runs in the package
// directory) and, failing that, from this source file. It panics when none is found.
func RepoRoot() string {
	repoRootOnce.Do(func() {
		var starts []string
		if wd, err := os.Getwd(); err == nil {
			starts = append(starts, wd)
		}
		if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
			starts = append(starts, filepath.Dir(file))
		}
		for _, dir := range starts {
			if root, ok := findGoMod(dir); ok {
				repoRoot = root
				return
			}
		}
	})
	if repoRoot == "" {
		panic("envtestutil: cannot find the repository root (no go.mod above the working directory)")
	}
	return repoRoot
}

func findGoMod(dir string) (string, bool) {
	for {
		if fi, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !fi.IsDir() {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// BinaryAssetsDir returns the directory the control-plane binaries are taken from:
// $KUBEBUILDER_ASSETS, or <repo root>/bin/k8s when it is unset.
func BinaryAssetsDir() string {
	if dir := os.Getenv(AssetsEnv); dir != "" {
		return dir
	}
	return filepath.Join(RepoRoot(), "bin", "k8s")
}

// ProjectCRDDir returns <repo root>/config/crd/bases, the project's generated CRDs.
func ProjectCRDDir() string {
	return filepath.Join(RepoRoot(), "config", "crd", "bases")
}

// KarmadaCRDDir returns <repo root>/test/testdata/karmada-crds, a copy of Karmada's
// published CRDs (Works, bindings, override policies) used for compatibility tests.
func KarmadaCRDDir() string {
	return filepath.Join(RepoRoot(), "test", "testdata", "karmada-crds")
}

// Scheme returns a new scheme holding client-go's built-in types and every API group of
// the project (pkg/apis.AddToScheme).
func Scheme() *k8sruntime.Scheme {
	s := k8sruntime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apis.AddToScheme(s))
	return s
}

// NewEnvironment returns an envtest.Environment, not yet started, that installs the CRDs
// found in crdPaths (directories or files). A relative path is taken relative to the
// working directory when it exists there, else relative to the repository root. A
// missing path makes Start fail (ErrorIfCRDPathMissing).
func NewEnvironment(crdPaths ...string) *envtest.Environment {
	paths := make([]string, 0, len(crdPaths))
	for _, p := range crdPaths {
		paths = append(paths, resolvePath(p))
	}
	return &envtest.Environment{
		BinaryAssetsDirectory: BinaryAssetsDir(),
		CRDDirectoryPaths:     paths,
		ErrorIfCRDPathMissing: true,
	}
}

func resolvePath(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if _, err := os.Stat(p); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return filepath.Join(RepoRoot(), p)
}

// Start starts a kube-apiserver and etcd with the CRDs of crdPaths installed (see
// NewEnvironment; e.g. Start(ProjectCRDDir())), waits until the CRDs are served and
// returns the running environment and an admin rest.Config. The caller must call
// env.Stop(). When the binaries are missing the error says how to build them.
func Start(crdPaths ...string) (*envtest.Environment, *rest.Config, error) {
	env := NewEnvironment(crdPaths...)
	for _, bin := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(env.BinaryAssetsDirectory, bin)); err != nil {
			return nil, nil, fmt.Errorf("envtest binary %s not found in %s (set %s or run 'make envtest'): %w",
				bin, env.BinaryAssetsDirectory, AssetsEnv, err)
		}
	}
	cfg, err := env.Start()
	if err != nil {
		if stopErr := env.Stop(); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the control plane: %w", stopErr))
		}
		return nil, nil, fmt.Errorf("starting envtest: %w", err)
	}
	return env, cfg, nil
}
