// SPDX-License-Identifier: Apache-2.0

// Package controllermanager holds the binding-controller-manager's flags and runs it.
package controllermanager

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/binding-controller/binding-controller/pkg/bindingcontroller"
)

// knownControllers are the names --controllers accepts.
var knownControllers = []string{
	bindingcontroller.ResourceBindingControllerName,
	bindingcontroller.ClusterResourceBindingControllerName,
}

// Options are the manager's settings. Names follow Karmada's controller-manager where
// Karmada has the same knob, so an operator's flags carry over.
type Options struct {
	Kubeconfig  string
	Controllers []string

	ResourceBindingWorkers        int
	ClusterResourceBindingWorkers int
	ClusterSyncConcurrency        int
	RateLimiter                   bindingcontroller.RateLimiterOptions
	BlockedWorkRecheckInterval    time.Duration
	StuckWorkWarningAfter         time.Duration
	RolloutHealthPollInterval     time.Duration
	WatchWorks                    bool
	ServeChangesWhileListing      bool
	WorkLedgerCheckpointInterval  time.Duration

	KubeAPIQPS   float64
	KubeAPIBurst int

	LeaderElect                  bool
	LeaderElectLeaseDuration     time.Duration
	LeaderElectRenewDeadline     time.Duration
	LeaderElectRetryPeriod       time.Duration
	LeaderElectResourceNamespace string
	LeaderElectResourceName      string

	MetricsBindAddress      string
	HealthProbeBindAddress  string
	EnablePprof             bool
	ProfilingBindAddress    string
	GracefulShutdownTimeout time.Duration
	APIServerCheckTimeout   time.Duration

	Zap zap.Options

	// SkipControllerNameValidation lets one process build a second manager with the same
	// controllers: a test that restarts the manager in-process. No flag sets it.
	SkipControllerNameValidation bool
}

// NewOptions returns the defaults; the binding controllers' own are
// bindingcontroller.DefaultOptions.
func NewOptions() *Options {
	d := bindingcontroller.DefaultOptions()
	return &Options{
		Controllers:                   []string{"*"},
		ResourceBindingWorkers:        d.ResourceBindingWorkers,
		ClusterResourceBindingWorkers: d.ClusterResourceBindingWorkers,
		ClusterSyncConcurrency:        d.ClusterSyncConcurrency,
		RateLimiter:                   d.RateLimiter,
		BlockedWorkRecheckInterval:    d.BlockedWorkRecheckInterval,
		StuckWorkWarningAfter:         d.StuckWorkWarningAfter,
		RolloutHealthPollInterval:     d.RolloutHealthPollInterval,
		WatchWorks:                    true,
		ServeChangesWhileListing:      true,
		// A restart then reads no Work's manifest: at 100,000 Works it took 8.4 s to its
		// last request against 26-28 s listing the whole Works (docs/scaling.md).
		WorkLedgerCheckpointInterval: 30 * time.Second,
		// Client-side throttling off: the API server's priority and fairness does the
		// limiting (client-go backs off on its 429s). Karmada's 40 QPS caps a binding
		// controller far below what the API server can take.
		KubeAPIQPS:                   -1,
		KubeAPIBurst:                 1000,
		LeaderElect:                  true,
		LeaderElectLeaseDuration:     15 * time.Second,
		LeaderElectRenewDeadline:     10 * time.Second,
		LeaderElectRetryPeriod:       2 * time.Second,
		LeaderElectResourceNamespace: "karmada-system",
		LeaderElectResourceName:      "binding-controller-manager",
		MetricsBindAddress:           ":8080",
		HealthProbeBindAddress:       ":8081",
		ProfilingBindAddress:         ":6060",
		GracefulShutdownTimeout:      30 * time.Second,
		APIServerCheckTimeout:        15 * time.Second,
		// A failed sync is an expected, reported event, not a bug: no stack traces for it.
		Zap: zap.Options{StacktraceLevel: zapcore.PanicLevel},
	}
}

// AddFlags registers every option on fs.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig,
		"Path to a kubeconfig of the Karmada control plane. Empty: $KUBECONFIG, then the in-cluster config, then ~/.kube/config.")
	fs.Func("controllers", fmt.Sprintf(
		"Comma-separated controllers to run. '*' runs all; 'foo' enables foo; '-foo' disables foo. All: %s. (default \"*\")",
		strings.Join(knownControllers, ", ")), func(v string) error {
		o.Controllers = strings.Split(v, ",")
		return nil
	})
	fs.IntVar(&o.ResourceBindingWorkers, "concurrent-resourcebinding-syncs", o.ResourceBindingWorkers,
		"How many ResourceBindings are synced at once.")
	fs.IntVar(&o.ClusterResourceBindingWorkers, "concurrent-cluster-resourcebinding-syncs", o.ClusterResourceBindingWorkers,
		"How many ClusterResourceBindings are synced at once.")
	fs.IntVar(&o.ClusterSyncConcurrency, "cluster-sync-concurrency", o.ClusterSyncConcurrency,
		"How many target clusters of one binding have their Works written at once.")
	fs.DurationVar(&o.RateLimiter.BaseDelay, "rate-limiter-base-delay", o.RateLimiter.BaseDelay,
		"First retry delay of a binding whose sync failed; doubles with each failure.")
	fs.DurationVar(&o.RateLimiter.MaxDelay, "rate-limiter-max-delay", o.RateLimiter.MaxDelay,
		"Longest retry delay of a binding whose sync keeps failing.")
	fs.Float64Var(&o.RateLimiter.QPS, "rate-limiter-qps", o.RateLimiter.QPS, "Overall retry rate of failed syncs, per second.")
	fs.IntVar(&o.RateLimiter.BucketSize, "rate-limiter-bucket-size", o.RateLimiter.BucketSize, "Overall retry burst of failed syncs.")
	fs.DurationVar(&o.BlockedWorkRecheckInterval, "blocked-work-recheck-interval", o.BlockedWorkRecheckInterval,
		"How often a binding blocked only by terminating Works looks again, in case the Work's deletion event was missed.")
	fs.DurationVar(&o.StuckWorkWarningAfter, "stuck-work-warning-after", o.StuckWorkWarningAfter,
		"How long a cluster may stay blocked by a terminating Work before one WorkStuckDeleting Warning event names it.")
	fs.DurationVar(&o.RolloutHealthPollInterval, "rollout-health-poll-interval", o.RolloutHealthPollInterval,
		"How often a binding under a staged rollout whose clusters are not all healthy yet reads their Works' status again.")
	fs.BoolVar(&o.WatchWorks, "watch-works", o.WatchWorks,
		"Watch the Works the controller manages, so a deleted or edited Work re-syncs its binding at once. "+
			"Turning it off leaves recovery to the retry backoff, as in Karmada; only for comparison.")
	fs.BoolVar(&o.ServeChangesWhileListing, "serve-changes-while-listing", o.ServeChangesWhileListing,
		"On a start, sync a binding changed while the bindings are still being listed at once, read from the API server. "+
			"Turning it off has such a change wait for the list; only for comparison.")
	fs.DurationVar(&o.WorkLedgerCheckpointInterval, "work-ledger-checkpoint-interval", o.WorkLedgerCheckpointInterval,
		"How often the leader saves what it knows of the Works it wrote (UID, generation and a spec hash, about 27 bytes a Work) "+
			"into ConfigMaps named <--leader-elect-resource-name>-work-ledger-<i> in --leader-elect-resource-namespace, when it changed, and once more on shutdown. "+
			"A start then trusts the Works the checkpoint vouches for without reading their manifests. 0 keeps no checkpoint: every start lists the Works.")
	fs.Float64Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS,
		"Client-side request rate limit towards the API server, per second. Negative (the default) turns client-side throttling off and leaves the limiting to the API server's priority and fairness.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Client-side request burst towards the API server, when --kube-api-qps is positive.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"Elect a leader on a Lease so that only one replica writes Works.")
	fs.DurationVar(&o.LeaderElectLeaseDuration, "leader-elect-lease-duration", o.LeaderElectLeaseDuration,
		"How long a non-leader waits after the last renewal before it takes over.")
	fs.DurationVar(&o.LeaderElectRenewDeadline, "leader-elect-renew-deadline", o.LeaderElectRenewDeadline,
		"How long the leader keeps retrying to renew before it steps down.")
	fs.DurationVar(&o.LeaderElectRetryPeriod, "leader-elect-retry-period", o.LeaderElectRetryPeriod,
		"How often candidates try to acquire or renew the lease.")
	fs.StringVar(&o.LeaderElectResourceNamespace, "leader-elect-resource-namespace", o.LeaderElectResourceNamespace,
		"Namespace of the controller's own objects: the leader election Lease, the Work ledger checkpoint, and the template revisions of ClusterResourceBindings under a staged rollout.")
	fs.StringVar(&o.LeaderElectResourceName, "leader-elect-resource-name", o.LeaderElectResourceName,
		"Name of the leader election Lease.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		"Address the Prometheus metrics endpoint binds to; '0' disables it.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress,
		"Address /healthz and /readyz bind to; '0' disables them.")
	fs.BoolVar(&o.EnablePprof, "enable-pprof", o.EnablePprof,
		"Serve Go profiling at --profiling-bind-address under /debug/pprof/.")
	fs.StringVar(&o.ProfilingBindAddress, "profiling-bind-address", o.ProfilingBindAddress,
		"Address /debug/pprof/ binds to when --enable-pprof is set.")
	fs.DurationVar(&o.GracefulShutdownTimeout, "graceful-shutdown-timeout", o.GracefulShutdownTimeout,
		"How long in-flight syncs may take to finish after SIGTERM.")
	o.Zap.BindFlags(fs)
}

// Validate reports every flag value that cannot work, as one error.
func (o *Options) Validate() error {
	var errs []error
	if _, err := o.EnabledControllers(); err != nil {
		errs = append(errs, err)
	}
	positive := map[string]int{
		"--concurrent-resourcebinding-syncs":         o.ResourceBindingWorkers,
		"--concurrent-cluster-resourcebinding-syncs": o.ClusterResourceBindingWorkers,
		"--cluster-sync-concurrency":                 o.ClusterSyncConcurrency,
		"--rate-limiter-bucket-size":                 o.RateLimiter.BucketSize,
	}
	if o.WorkLedgerCheckpointInterval < 0 {
		errs = append(errs, fmt.Errorf("--work-ledger-checkpoint-interval must not be negative, got %s", o.WorkLedgerCheckpointInterval))
	}
	for name, d := range map[string]time.Duration{
		"--blocked-work-recheck-interval": o.BlockedWorkRecheckInterval,
		"--stuck-work-warning-after":      o.StuckWorkWarningAfter,
		"--rollout-health-poll-interval":  o.RolloutHealthPollInterval,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", name, d))
		}
	}
	for _, name := range sortedNames(positive) {
		if positive[name] <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, positive[name]))
		}
	}
	if o.RateLimiter.BaseDelay <= 0 || o.RateLimiter.MaxDelay < o.RateLimiter.BaseDelay {
		errs = append(errs, fmt.Errorf("--rate-limiter-base-delay (%s) must be positive and at most --rate-limiter-max-delay (%s)",
			o.RateLimiter.BaseDelay, o.RateLimiter.MaxDelay))
	}
	if o.RateLimiter.QPS <= 0 {
		errs = append(errs, fmt.Errorf("--rate-limiter-qps must be positive, got %g", o.RateLimiter.QPS))
	}
	if o.LeaderElect {
		if !(o.LeaderElectRetryPeriod > 0 && o.LeaderElectRetryPeriod < o.LeaderElectRenewDeadline &&
			o.LeaderElectRenewDeadline < o.LeaderElectLeaseDuration) {
			errs = append(errs, fmt.Errorf("leader election needs 0 < --leader-elect-retry-period (%s) < --leader-elect-renew-deadline (%s) < --leader-elect-lease-duration (%s)",
				o.LeaderElectRetryPeriod, o.LeaderElectRenewDeadline, o.LeaderElectLeaseDuration))
		}
	}
	if (o.LeaderElect || o.WorkLedgerCheckpointInterval > 0) && o.LeaderElectResourceNamespace == "" {
		errs = append(errs, errors.New("--leader-elect-resource-namespace must not be empty: it holds the leader election Lease and the Work ledger checkpoint"))
	}
	return errors.Join(errs...)
}

// EnabledControllers resolves --controllers against the known controller names.
func (o *Options) EnabledControllers() (map[string]bool, error) {
	enabled := map[string]bool{}
	star := false
	explicit := map[string]bool{}
	for _, raw := range o.Controllers {
		name := strings.TrimSpace(raw)
		switch {
		case name == "":
			continue
		case name == "*":
			star = true
			continue
		}
		disabled := strings.HasPrefix(name, "-")
		name = strings.TrimPrefix(name, "-")
		if !slices.Contains(knownControllers, name) {
			return nil, fmt.Errorf("--controllers: unknown controller %q (known: %s)", name, strings.Join(knownControllers, ", "))
		}
		explicit[name] = !disabled
	}
	for _, name := range knownControllers {
		on, set := explicit[name]
		enabled[name] = (star && !set) || on
	}
	if !slices.ContainsFunc(knownControllers, func(n string) bool { return enabled[n] }) {
		return nil, errors.New("--controllers enables no controller")
	}
	return enabled, nil
}

func sortedNames(m map[string]int) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
