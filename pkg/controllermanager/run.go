// SPDX-License-Identifier: Apache-2.0

package controllermanager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/binding-controller/binding-controller/pkg/apis"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/bindingcontroller"
	"github.com/binding-controller/binding-controller/pkg/cachecompact"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	"github.com/binding-controller/binding-controller/pkg/workcache"
)

// Scheme returns the types the manager reads and writes.
func Scheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := apis.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// RestConfig loads the kubeconfig named by o, or the default chain when none is named.
func (o *Options) RestConfig() (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if o.Kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	} else {
		cfg, err = ctrl.GetConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.QPS = float32(o.KubeAPIQPS)
	cfg.Burst = o.KubeAPIBurst
	cfg.UserAgent = "binding-controller-manager"
	return cfg, nil
}

// Run starts the manager and blocks until ctx is cancelled or the manager fails.
func Run(ctx context.Context, o *Options) error {
	enabled, err := o.EnabledControllers()
	if err != nil {
		return err
	}
	cfg, err := o.RestConfig()
	if err != nil {
		return err
	}
	if err := checkAPIServer(ctx, cfg, o); err != nil {
		return err
	}
	mgr, err := NewManager(ctx, cfg, o)
	if err != nil {
		return err
	}
	ctrl.Log.Info("Starting binding-controller-manager", "controllers", enabled, "leaderElect", o.LeaderElect,
		"apiServer", cfg.Host)
	return mgr.Start(ctx)
}

// NewManager returns a manager running the enabled binding controllers, with probes, not
// yet started.
func NewManager(ctx context.Context, cfg *rest.Config, o *Options) (manager.Manager, error) {
	enabled, err := o.EnabledControllers()
	if err != nil {
		return nil, err
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: o.MetricsBindAddress},
		HealthProbeBindAddress:        o.HealthProbeBindAddress,
		PprofBindAddress:              o.pprofBindAddress(),
		LeaderElection:                o.LeaderElect,
		LeaderElectionID:              o.LeaderElectResourceName,
		LeaderElectionNamespace:       o.LeaderElectResourceNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.LeaderElectLeaseDuration,
		RenewDeadline:                 &o.LeaderElectRenewDeadline,
		RetryPeriod:                   &o.LeaderElectRetryPeriod,
		GracefulShutdownTimeout:       &o.GracefulShutdownTimeout,
		// Resource templates are of any kind and read as unstructured objects; caching
		// them keeps a resync from costing a live read per binding. The cache holds them
		// as JSON (cachecompact), not as nested maps ten times the size.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Cache:  cache.Options{DefaultTransform: cachecompact.Transform},
		// The bindings apart, and the Works and templates apart again, so that the
		// controllers start without waiting for them.
		NewCache:   workcache.NewFunc(workapply.WorkMetadata(), &workv1alpha2.ResourceBinding{}, &workv1alpha2.ClusterResourceBinding{}),
		Controller: config.Controller{SkipNameValidation: &o.SkipControllerNameValidation},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := bindingcontroller.Setup(ctx, mgr, bindingcontroller.Options{
		Enabled:                       enabled,
		ResourceBindingWorkers:        o.ResourceBindingWorkers,
		ClusterResourceBindingWorkers: o.ClusterResourceBindingWorkers,
		ClusterSyncConcurrency:        o.ClusterSyncConcurrency,
		RateLimiter:                   o.RateLimiter,
		BlockedWorkRecheckInterval:    o.BlockedWorkRecheckInterval,
		StuckWorkWarningAfter:         o.StuckWorkWarningAfter,
		RolloutHealthPollInterval:     o.RolloutHealthPollInterval,
		RolloutRevisionNamespace:      o.LeaderElectResourceNamespace,
		DisableWorkWatch:              !o.WatchWorks,
		DisableChangesWhileListing:    !o.ServeChangesWhileListing,
		LedgerCheckpoint: bindingcontroller.LedgerCheckpointOptions{
			Namespace: o.LeaderElectResourceNamespace,
			Name:      o.LeaderElectResourceName + "-work-ledger",
			Interval:  o.WorkLedgerCheckpointInterval,
		},
	}); err != nil {
		return nil, err
	}
	if err := addProbes(mgr); err != nil {
		return nil, err
	}
	return mgr, nil
}

// checkAPIServer fails fast, with one clear line, when the API server cannot be reached,
// instead of retrying quietly forever.
func checkAPIServer(ctx context.Context, cfg *rest.Config, o *Options) error {
	ctx, cancel := context.WithTimeout(ctx, o.APIServerCheckTimeout)
	defer cancel()
	probe := rest.CopyConfig(cfg)
	probe.Timeout = o.APIServerCheckTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return fmt.Errorf("cannot reach the API server at %s: %w", cfg.Host, err)
	}
	if err := dc.RESTClient().Get().AbsPath("/version").Do(ctx).Error(); err != nil {
		return fmt.Errorf("cannot reach the API server at %s: %w", cfg.Host, err)
	}
	return nil
}

// cacheSyncWatcher records when the informer caches have synced. It runs on every replica,
// not only the leader: a standby must be ready to take over, and say so.
type cacheSyncWatcher struct {
	cache  interface{ WaitForCacheSync(context.Context) bool }
	synced *atomic.Bool
}

func (w *cacheSyncWatcher) Start(ctx context.Context) error {
	// The Works and templates too: the controllers start without them, but a replica is
	// only caught up once it can re-verify every binding.
	works, split := w.cache.(*workcache.Cache)
	if w.cache.WaitForCacheSync(ctx) && (!split || works.WaitForWorks(ctx)) {
		w.synced.Store(true)
	}
	<-ctx.Done()
	return nil
}

func (w *cacheSyncWatcher) NeedLeaderElection() bool { return false }

// addProbes serves /healthz while the process lives and /readyz once the informer caches
// have synced, the Works' and templates' included, so a rollout waits for a replica that
// can actually serve.
func addProbes(mgr manager.Manager) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	var synced atomic.Bool
	err := mgr.Add(&cacheSyncWatcher{cache: mgr.GetCache(), synced: &synced})
	if err != nil {
		return err
	}
	return mgr.AddReadyzCheck("informers-synced", func(*http.Request) error {
		if !synced.Load() {
			return errors.New("informer caches have not synced yet")
		}
		return nil
	})
}

// pprofBindAddress is where profiling is served: nowhere ("0") unless asked for.
func (o *Options) pprofBindAddress() string {
	if !o.EnablePprof {
		return "0"
	}
	return o.ProfilingBindAddress
}
