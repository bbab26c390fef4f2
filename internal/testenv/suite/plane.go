// SPDX-License-Identifier: Apache-2.0

package suite

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	"github.com/binding-controller/binding-controller/pkg/controllermanager"
)

// PlaneOptions say what StartPlane starts.
type PlaneOptions struct {
	// CRDs are the CRD files and directories to install (see envtestutil.NewEnvironment).
	CRDs []string
	// KarmadaWorkWebhook puts the stand-in for karmada-webhook's Work mutation in front
	// of the API server (see envtestutil.Options).
	KarmadaWorkWebhook bool
	// Configure, when set, adjusts the environment before it starts.
	Configure func(*envtest.Environment) error
	// Members are joined to the plane (testkit.JoinClusters) before the manager starts,
	// so that its first syncs already find them.
	Members []string
	// Manager, when set, runs the controller-manager in-process with
	// testkit.InProcessOptions as Manager adjusts them; nil runs none (the suite runs the
	// binary, or no controller at all).
	Manager func(*controllermanager.Options)
	// Simulator is how often the simulated execution side (executionsim) releases deleted
	// Works; zero runs none, and deleted Works then keep their finalizer.
	Simulator time.Duration
	// Log receives controller-runtime's log, in development mode so that a misuse of the
	// logger panics; nil means GinkgoWriter, which shows it for failed specs only.
	Log io.Writer
}

// ManagerDefaults runs the manager with testkit.InProcessOptions as they are.
func ManagerDefaults(*controllermanager.Options) {}

// Plane is a running control plane and what runs on it.
type Plane struct {
	// Ctx ends when the plane stops.
	Ctx context.Context
	// Env runs kube-apiserver and etcd; a suite may stop and start them.
	Env *envtestutil.Env
	// Config is an admin rest.Config.
	Config *rest.Config
	// Client is uncached: it sees what a user would.
	Client client.Client
	// Sim is nil without PlaneOptions.Simulator.
	Sim *executionsim.Simulator
}

// StartPlane starts a control plane as opts say, from a BeforeSuite or BeforeAll: it
// stops when the suite or container ends, the manager first, then the simulator, then
// the API server, so that nothing is left talking to a server that is gone. A failure
// to start fails the node.
func StartPlane(opts PlaneOptions) *Plane {
	log := opts.Log
	if log == nil {
		log = ginkgo.GinkgoWriter
	}
	ctrllog.SetLogger(zap.New(zap.WriteTo(log), zap.UseDevMode(true)))

	env, err := envtestutil.StartWith(envtestutil.Options{
		CRDPaths: opts.CRDs, KarmadaWorkWebhook: opts.KarmadaWorkWebhook, Configure: opts.Configure,
	})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(env.Stop)
	p := &Plane{Env: env, Config: env.Config}
	var cancel context.CancelFunc
	p.Ctx, cancel = context.WithCancel(context.Background())
	ginkgo.DeferCleanup(cancel)

	p.Client, err = client.New(env.Config, client.Options{Scheme: envtestutil.Scheme()})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(testkit.JoinClusters(p.Ctx, p.Client, opts.Members...)).To(gomega.Succeed())

	if opts.Manager != nil {
		mopts := testkit.InProcessOptions()
		opts.Manager(mopts)
		// Cleanups run last-registered first: the controller stops before the API server.
		ginkgo.DeferCleanup(p.RunManager(env.Config, mopts))
	}
	if opts.Simulator != 0 {
		p.Sim = executionsim.New(p.Client, opts.Simulator)
		go p.Sim.Run(p.Ctx)
	}
	return p
}

// RunManager starts a controller-manager in-process against cfg, the plane's or one
// that watches the manager's requests, until the returned stop is called; a manager
// that fails to run fails the spec. Specs that restart the manager call it themselves.
func (p *Plane) RunManager(cfg *rest.Config, opts *controllermanager.Options) (stop func()) {
	stop, err := testkit.RunManager(p.Ctx, cfg, opts, func(err error) {
		defer ginkgo.GinkgoRecover()
		ginkgo.Fail(err.Error())
	})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return stop
}

// BuildManager builds the manager binary from this tree, so that a suite never runs a
// stale one, and writes the plane's admin kubeconfig for it, both into a directory
// removed when the suite ends.
func (p *Plane) BuildManager() (binary, kubeconfig string) {
	dir := ginkgo.GinkgoT().TempDir()
	kubeconfig = filepath.Join(dir, "kubeconfig")
	gomega.Expect(os.WriteFile(kubeconfig, p.Env.KubeConfig, 0o600)).To(gomega.Succeed())
	binary, err := localplane.BuildManager(p.Ctx, dir)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return binary, kubeconfig
}
