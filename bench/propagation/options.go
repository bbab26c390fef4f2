// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/session"
)

// scenarioNames are the scenarios --scenarios takes, in the order they run.
var scenarioNames = []string{"initial", "fanout", "resync", "memory", "webhook", "flood", "interpreter", "scale"}

// options are the subcommand's flags.
type options struct {
	common                                               session.Common
	want                                                 map[string]bool
	bindings, clusters, fanoutBindings, fanoutClusters   int
	creators, ceilingConcurrency, repeat                 int
	ceilingQPS, memoryScale                              float64
	phaseTimeout                                         time.Duration
	urgentChanges                                        int
	urgentInterval                                       time.Duration
	floodBindings, floodClusters                         int
	floodNamespace                                       string
	interpreterBindings, interpreterClusters, interpRuns int
	interpreterJSON, urgentJSON, scaleJSON               string
	scale                                                scaleOptions
}

func (o *options) register(fs *flag.FlagSet) (scenarios, scaleEnv *string) {
	o.common.Register(fs, "propagation")
	results := func(name string) string { return filepath.Join("bench", "results", name+".json") }
	scenarios = fs.String("scenarios", "initial,fanout,resync,memory,webhook,interpreter", "comma-separated scenarios: "+strings.Join(scenarioNames, ", "))
	fs.IntVar(&o.urgentChanges, "urgent-changes", 20, "flood and scale: fresh changes made during the backlog, alternately a new binding and a changed one")
	fs.DurationVar(&o.urgentInterval, "urgent-interval", 250*time.Millisecond, "flood and scale: time between two fresh changes, the first at the backlog's start")
	fs.IntVar(&o.floodBindings, "flood-bindings", 5000, "flood: bindings created at once")
	fs.StringVar(&o.floodNamespace, "flood-namespace", "bench-flood", "flood: namespace of the flood's templates and bindings (the fresh changes are in namespace "+templateNamespace+"; the same name puts them in the flood's namespace)")
	fs.IntVar(&o.floodClusters, "flood-clusters", 1, "flood: member clusters every flood binding targets")
	fs.IntVar(&o.bindings, "bindings", 1000, "bindings of the initial propagation (one Deployment template each)")
	fs.IntVar(&o.clusters, "clusters", 10, "member clusters every binding of the initial propagation targets")
	fs.IntVar(&o.fanoutBindings, "fanout-bindings", 1, "bindings of the wide fan-out")
	fs.IntVar(&o.fanoutClusters, "fanout-clusters", 500, "member clusters every wide fan-out binding targets; the narrow load has fanout-bindings × fanout-clusters bindings of one cluster each")
	fs.IntVar(&o.creators, "creators", 8, "goroutines creating bindings (and patching them for the resync)")
	fs.IntVar(&o.ceilingConcurrency, "ceiling-concurrency", 0, "Works the plain client creates at once (0: --concurrent-resourcebinding-syncs × --cluster-sync-concurrency of the manager, 5 × 8 = 40 unless --manager-args says otherwise)")
	fs.Float64Var(&o.ceilingQPS, "ceiling-qps", -1, "client-side QPS limit of the plain client (negative: none)")
	fs.Float64Var(&o.memoryScale, "memory-scale", 10, "how many times larger the manifests of the memory scenario's second run are")
	fs.DurationVar(&o.phaseTimeout, "phase-timeout", 10*time.Minute, "cap on waiting for every Work of one load")
	fs.IntVar(&o.repeat, "repeat", 1, "how many times the initial load runs, controller and ceiling alternating; Works/s are medians")
	fs.IntVar(&o.interpreterBindings, "interpreter-bindings", 200, "bindings of each load of the interpreter scenario")
	fs.IntVar(&o.interpreterClusters, "interpreter-clusters", 10, "member clusters every binding of the interpreter scenario targets")
	fs.IntVar(&o.interpRuns, "interpreter-rounds", 2, "rounds of the interpreter scenario, each a native and a Lua load (ABBA order)")
	fs.StringVar(&o.interpreterJSON, "interpreter-json", results("interpreter"), "where the interpreter scenario writes its results as JSON (relative: to the repository root)")
	fs.StringVar(&o.urgentJSON, "urgent-json", results("urgent"), "where the flood scenario writes its results as JSON (relative: to the repository root)")
	sc := &o.scale
	fs.IntVar(&sc.load.Bindings, "scale-bindings", 10000, "scale: narrow bindings at full size")
	fs.IntVar(&sc.load.Clusters, "scale-clusters", 10, "scale: member clusters every narrow binding targets")
	fs.IntVar(&sc.load.WideClusters, "scale-wide-clusters", 2000, "scale: member clusters of the one wide binding at full size")
	fs.IntVar(&sc.divisor, "scale-divisor", 10, "scale: the small run is the full size ÷ this")
	fs.IntVar(&sc.changes, "scale-changes", 100, "scale: changes made one at a time to the idle fleet, each timed")
	scaleEnv = fs.String("scale-env", "", "scale: space-separated NAME=value set in the controller's environment (e.g. \"GOMEMLIMIT=700MiB GOGC=100\")")
	fs.BoolVar(&sc.memoryLimit, "scale-memory-limit", true, "scale: run the controller at both sizes with GOMEMLIMIT at 90% of the RSS budget (8 KiB) times the full size's Works, as an operator sizing its container for the full fleet would (unless --scale-env sets GOMEMLIMIT)")
	fs.BoolVar(&sc.ceiling, "scale-ceiling", true, "scale: also time a plain client creating the narrow Works at each size, for the control plane's CPU per Work")
	fs.BoolVar(&sc.finalizer, "scale-finalizer", true, "scale: create the bindings with the binding controller's finalizer, as Karmada's detector does (false: the controller adds it, one patch per binding)")
	fs.BoolVar(&sc.urgent, "scale-urgent", true, "scale: restart the full size a second time and make --urgent-changes fresh changes while it re-verifies")
	fs.BoolVar(&sc.again, "scale-small-again", true, "scale: run the small size again after the full size; the full size is held against the mean of both, and their difference shows the machine's drift")
	fs.IntVar(&sc.restarts, "scale-restarts", 3, "scale: timed restarts at each size, one after the other; the table compares the median")
	fs.DurationVar(&sc.profile, "scale-profile", 0, "scale: take CPU profiles of kube-apiserver (and of the controller, when --manager-args serve them: --enable-pprof --profiling-bind-address=…) for this long, from the moment 40% of each size's initial Works exist, into the work directory (see --keep)")
	fs.StringVar(&o.scaleJSON, "scale-json", results("scale"), "where the scale scenario writes its results as JSON (relative: to the repository root)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go -C bench run . propagation [flags]\n\n"+
			"Every load runs on a fresh control plane with a fresh controller process. initial: --bindings ×\n"+
			"--clusters created at once, time until every Work exists, against a plain client creating the same\n"+
			"rendered Works (the ceiling); API requests per new Work. resync: every binding re-queued (an\n"+
			"annotation patched) with nothing to change; writes and reads counted; then a restart. fanout:\n"+
			"--fanout-bindings × --fanout-clusters against the same number of Works as one-cluster bindings. memory:\n"+
			"peak RSS and Go heap with every Work cached, and again with --memory-scale × larger manifests. webhook:\n"+
			"the initial load, its resync and a restart behind karmada-webhook's Work mutation. flood: fresh changes\n"+
			"while --flood-bindings are created at once (its own JSON, --urgent-json). interpreter:\n"+
			"--interpreter-bindings × --interpreter-clusters of a native Deployment and of a custom kind revised by a\n"+
			"ResourceInterpreterCustomization's Lua, alternating; controller CPU per Work side by side (its own JSON,\n"+
			"--interpreter-json). scale: --scale-bindings × --scale-clusters plus one binding × --scale-wide-clusters,\n"+
			"against 1/--scale-divisor of it: Works/s, idle-change latency, CPU per sync, memory per Work, restart\n"+
			"time and requests, control-plane CPU per Work against a plain client, fresh changes during a restart\n"+
			"(its own JSON, --scale-json).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	return scenarios, scaleEnv
}

func parseOptions(args []string) (*options, *flag.FlagSet, error) {
	fs := flag.NewFlagSet("propagation", flag.ContinueOnError)
	o := &options{want: map[string]bool{}}
	scenarios, scaleEnv := o.register(fs)
	if err := session.Parse(fs, args); err != nil {
		return nil, nil, err
	}
	for _, sc := range session.SplitList(*scenarios) {
		if !slices.Contains(scenarioNames, sc) {
			return nil, nil, fmt.Errorf("--scenarios: unknown scenario %q", sc)
		}
		o.want[sc] = true
	}
	sc := &o.scale
	if min(o.bindings, o.clusters, o.fanoutBindings, o.fanoutClusters, o.creators, o.repeat, o.interpreterBindings, o.interpreterClusters,
		o.interpRuns, sc.load.Bindings, sc.load.Clusters, sc.load.WideClusters, sc.divisor, sc.changes) < 1 {
		return nil, nil, fmt.Errorf("sizes and --creators must be positive")
	}
	if o.ceilingConcurrency <= 0 {
		o.ceilingConcurrency = controller.Concurrency(o.common.ManagerArgs())
	}
	sc.env, sc.urgentChanges, sc.urgentInterval = strings.Fields(*scaleEnv), o.urgentChanges, o.urgentInterval
	return o, fs, nil
}
