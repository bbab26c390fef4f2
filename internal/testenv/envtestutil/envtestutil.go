// SPDX-License-Identifier: Apache-2.0

// Package envtestutil starts a real kube-apiserver and etcd (controller-runtime's
// envtest) with the project's CRDs installed, for integration and e2e tests.
//
// The control-plane binaries are taken from $KUBEBUILDER_ASSETS or, when it is unset,
// from <repo root>/bin/k8s, where 'make envtest' builds them.
//
// Ginkgo suites start it through internal/testenv/suite (StartPlane), which adds the
// manager, the simulated execution side and the cleanup order; the bench and the
// differential fuzzer use StartWith directly.
package envtestutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/binding-controller/binding-controller/internal/testenv/workwebhook"
	"github.com/binding-controller/binding-controller/pkg/apis"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// AssetsEnv is the environment variable naming the directory holding kube-apiserver,
// etcd and kubectl.
const AssetsEnv = "KUBEBUILDER_ASSETS"

var (
	repoRootOnce sync.Once
	repoRoot     string
)

// RepoRoot returns the root directory of the repository: the closest directory holding
// the main module's go.mod, walking up from the working directory (go test runs in the
// package directory) and, failing that, from this source file. It panics when none is
// found. Nested modules (bench/, hack/tools/...) have a go.mod of their own, skipped:
// what is found from them is the repository's root, where bin/k8s and config/ are.
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

// mainModule is the module path RepoRoot looks for.
const mainModule = "github.com/binding-controller/binding-controller"

func findGoMod(dir string) (string, bool) {
	for {
		if modulePath(filepath.Join(dir, "go.mod")) == mainModule {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// modulePath is the module line of the go.mod at path, "" when there is none.
func modulePath(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
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

// WorkloadCRDDir returns <repo root>/test/testdata/workload-crds: minimal CRDs of
// third-party and custom workload kinds.
func WorkloadCRDDir() string {
	return filepath.Join(RepoRoot(), "test", "testdata", "workload-crds")
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

// Options say what StartWith starts.
type Options struct {
	// CRDPaths are the CRDs to install (see NewEnvironment).
	CRDPaths []string
	// KarmadaWorkWebhook puts a stand-in for karmada-webhook's Work mutation
	// (internal/testenv/workwebhook) in front of the API server, as on a real Karmada control plane:
	// every Work written gets a permanent ID, copied into its manifests.
	KarmadaWorkWebhook bool
	// Configure, when set, adjusts the environment before it starts (API server flags, say).
	Configure func(*envtest.Environment) error
}

// Env is a running control plane.
type Env struct {
	*envtest.Environment
	// Config is an admin rest.Config.
	Config  *rest.Config
	webhook *workwebhook.Server
}

// Stop stops the webhook, when there is one, then kube-apiserver and etcd.
func (e *Env) Stop() error {
	e.webhook.Stop()
	return e.Environment.Stop()
}

// StartWith starts a control plane as Start does, with the options. With
// KarmadaWorkWebhook it returns once the API server calls the webhook for Works.
func StartWith(opts Options) (*Env, error) {
	env := NewEnvironment(opts.CRDPaths...)
	for _, bin := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(env.BinaryAssetsDirectory, bin)); err != nil {
			return nil, fmt.Errorf("envtest binary %s not found in %s (set %s or run 'make envtest'): %w",
				bin, env.BinaryAssetsDirectory, AssetsEnv, err)
		}
	}
	if opts.KarmadaWorkWebhook {
		env.WebhookInstallOptions.MutatingWebhooks = append(env.WebhookInstallOptions.MutatingWebhooks, workwebhook.Configuration())
	}
	if opts.Configure != nil {
		if err := opts.Configure(env); err != nil {
			return nil, err
		}
	}
	e := &Env{Environment: env}
	fail := func(err error) (*Env, error) {
		if stopErr := e.Stop(); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the control plane: %w", stopErr))
		}
		return nil, err
	}
	cfg, err := env.Start()
	if err != nil {
		return fail(fmt.Errorf("starting envtest: %w", err))
	}
	e.Config = cfg
	if opts.KarmadaWorkWebhook {
		if e.webhook, err = workwebhook.Serve(&env.WebhookInstallOptions); err != nil {
			return fail(err)
		}
		if err := waitForWorkWebhook(cfg); err != nil {
			return fail(err)
		}
	}
	return e, nil
}

// waitForWorkWebhook waits until the API server calls the Work webhook: it picks up a
// new webhook configuration a moment after it is created, and a Work written before
// then would not be mutated. A dry-run create shows the webhook's work without storing it.
func waitForWorkWebhook(cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return err
	}
	probe := func() (bool, error) {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "webhook-probe"}}
		err := c.Create(context.Background(), w, client.DryRunAll)
		return err == nil && w.Labels[workv1alpha2.WorkPermanentIDLabel] != "", err
	}
	var last error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var ok bool
		if ok, last = probe(); ok {
			return nil
		}
	}
	return fmt.Errorf("the API server does not call the Work webhook (last error: %v)", last)
}
