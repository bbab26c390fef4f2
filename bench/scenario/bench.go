// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/karmadabuild"
)

// scenarioNames are what --scenarios takes; the fleet's initial propagation always
// runs, and the subcommand says what else does by default.
var (
	scenarioNames    = []string{"initial", "ceiling", "resync", "restart", "recovery", "fresh", "fanout", "memory", "webhook"}
	defaultScenarios = map[string]string{"propagation": "ceiling,resync,restart,fanout,memory,webhook", "vs-karmada": "restart,recovery,fresh"}
)

type options struct {
	common                              session.Common
	want                                map[string]bool
	fleet                               load
	phases                              phases
	checkout, work, karmadaArgs, versus string
	oursArgs, oursEnv                   string
	ceilingConcurrency                  int
	ceilingQPS, memoryScale             float64
	fanoutBindings, fanoutClusters      int
}

func parseOptions(sub string, args []string) (*options, *flag.FlagSet, error) {
	fs := flag.NewFlagSet(sub, flag.ContinueOnError)
	o := &options{want: map[string]bool{}, fleet: load{Name: "fleet"}}
	ph := &o.phases
	o.common.Register(fs, sub)
	scenarios := fs.String("scenarios", defaultScenarios[sub], "comma-separated scenarios: "+strings.Join(scenarioNames, ", "))
	fs.IntVar(&o.fleet.Bindings, "bindings", 1000, "bindings of the fleet, one Deployment template each")
	fs.IntVar(&o.fleet.Clusters, "clusters", 10, "member clusters every binding of the fleet targets")
	fs.IntVar(&ph.creators, "creators", 8, "goroutines creating bindings (and patching them for the resync)")
	fs.DurationVar(&ph.timeout, "phase-timeout", 10*time.Minute, "cap on waiting for every Work of a load, for a resync or a restart to reconcile every binding, and for the fresh changes")
	fs.StringVar(&o.checkout, "karmada", "", "Karmada checkout (a work tree, or a git directory as the fetch tool leaves it) to build Karmada's controller-manager from and run side by side with this project's")
	fs.StringVar(&o.work, "karmada-work", filepath.Join(envtestutil.RepoRoot(), "bin", "karmada"),
		"where Karmada's sources and controller-manager go; a controller-manager already there is used as it is (building one takes minutes: delete it to rebuild)")
	fs.StringVar(&o.karmadaArgs, "karmada-args", "", "extra flags for Karmada's controller-manager, space-separated, appended to the tuned ones")
	fs.StringVar(&o.versus, "versus", "", "name=flags: instead of Karmada, this project's controller with these flags too, side by side (e.g. \"backoff=--watch-works=false\")")
	fs.StringVar(&o.oursArgs, "ours-args", "", "extra flags for this project's controller-manager alone, space-separated, appended to --manager-args (e.g. \"--work-ledger-checkpoint-interval=30s\")")
	fs.StringVar(&o.oursEnv, "ours-env", "", "space-separated NAME=value set in this project's controller's environment alone, e.g. \"GOMEMLIMIT=717MiB\" for a container sized for the fleet")
	blocks := fs.String("recovery-blocks", "10s", "recovery: comma-separated durations a blocked cluster's old Work stays terminating after its binding is recreated")
	fs.IntVar(&ph.recoverySamples, "recovery-samples", 2, "recovery: samples per block duration")
	fs.IntVar(&ph.fresh, "fresh-changes", 20, "fresh: bindings, spread over the fleet, whose replicas are doubled during a second restart")
	fs.DurationVar(&ph.freshInterval, "fresh-interval", 250*time.Millisecond, "fresh: time between two changes, the first this long after the restarted process starts")
	fs.IntVar(&o.ceilingConcurrency, "ceiling-concurrency", 0, "ceiling: Works the plain client creates at once (0: --concurrent-resourcebinding-syncs × --cluster-sync-concurrency of the manager, 5 × 8 = 40 unless --manager-args says otherwise)")
	fs.Float64Var(&o.ceilingQPS, "ceiling-qps", -1, "ceiling: client-side QPS limit of the plain client (negative: none)")
	fs.IntVar(&o.fanoutBindings, "fanout-bindings", 1, "fanout: bindings of the wide load")
	fs.IntVar(&o.fanoutClusters, "fanout-clusters", 500, "fanout: member clusters every wide binding targets; the narrow load has fanout-bindings × fanout-clusters bindings of one cluster each")
	fs.Float64Var(&o.memoryScale, "memory-scale", 10, "memory: how many times larger the manifests of the second load are")
	if err := session.Parse(fs, args); err != nil {
		return nil, nil, err
	}
	return o, fs, o.complete(*scenarios, *blocks)
}

// complete checks the flags and derives what they imply.
func (o *options) complete(scenarios, blocks string) error {
	for _, sc := range session.SplitList(scenarios) {
		if !slices.Contains(scenarioNames, sc) {
			return fmt.Errorf("--scenarios: unknown scenario %q", sc)
		}
		o.want[sc] = true
	}
	for _, b := range session.SplitList(blocks) {
		d, err := time.ParseDuration(b)
		if err != nil || d < 0 {
			return fmt.Errorf("--recovery-blocks: bad duration %q", b)
		}
		o.phases.recoveryBlocks = append(o.phases.recoveryBlocks, d)
	}
	ph := &o.phases
	if min(o.fleet.Bindings, o.fleet.Clusters, ph.creators, ph.recoverySamples, len(ph.recoveryBlocks), o.fanoutBindings, o.fanoutClusters) < 1 ||
		o.want["fresh"] && (ph.fresh < 1 || ph.fresh > o.fleet.Bindings) {
		return fmt.Errorf("sizes, counts and --creators must be positive, --fresh-changes at most --bindings")
	}
	if name, _, ok := strings.Cut(o.versus, "="); o.versus != "" && (!ok || name == "" || strings.HasPrefix(name, "-") || o.checkout != "") {
		return fmt.Errorf("--versus wants name=flags, and not with --karmada")
	}
	o.fleet.PerBinding = o.fleet.Clusters
	ph.resync, ph.restart = o.want["resync"], o.want["restart"] || o.want["recovery"] || o.want["fresh"]
	if !o.want["recovery"] {
		ph.recoverySamples = 0
	}
	if !o.want["fresh"] {
		ph.fresh = 0
	}
	o.ceilingConcurrency = cmp.Or(o.ceilingConcurrency, controller.Concurrency(o.common.ManagerArgs()))
	return nil
}

// sides are ours, with --manager-args and then --ours-args, and, side by side with it,
// Karmada's given its binary, or ours again with --versus's flags.
func (o *options) sides(oursBin string, karmada *karmadaSource) []side {
	us := ours(controller.Spec{Label: "ours", Binary: oursBin, Args: append(o.common.ManagerArgs(), strings.Fields(o.oursArgs)...), Env: strings.Fields(o.oursEnv)})
	switch name, args, _ := strings.Cut(o.versus, "="); {
	case karmada != nil:
		return []side{us, {spec: controller.Spec{Label: "Karmada", Binary: karmada.Binary, Args: karmadaArgs(us.spec.Args, strings.Fields(o.karmadaArgs)),
			ReadyPath: "/healthz"}, reconciler: "binding-controller"}}
	case o.versus != "":
		return []side{us, ours(controller.Spec{Label: name, Binary: oursBin, Args: append(slices.Clip(us.spec.Args), strings.Fields(args)...)})}
	}
	return []side{us}
}

// karmadaArgs runs Karmada's controller-manager as a fair operator would for a large
// fleet: its binding controllers alone, client-side throttling out of the way (its
// defaults, 40 QPS with a burst of 60, would time the limiter, not the controller), and
// as many bindings synced at once as ours syncs. extra comes last, so it overrides.
func karmadaArgs(oursArgs, extra []string) []string {
	syncs := cmp.Or(controller.Flag(oursArgs, "concurrent-resourcebinding-syncs"), "5") // ours' default
	return append([]string{"--controllers=binding", "--kube-api-qps=5000", "--kube-api-burst=10000", "--concurrent-resourcebinding-syncs=" + syncs}, extra...)
}

// benchReport is what one invocation measured, as its JSON holds it.
type benchReport struct {
	*session.Session
	Karmada  *karmadaSource     `json:"karmada,omitempty"`
	Fleet    load               `json:"fleet"`
	Results  []*result          `json:"results"` // ours first
	Ceiling  *propagation       `json:"ceiling,omitempty"`
	Loads    map[string]*result `json:"loads,omitempty"` // fanout, memory, webhook: ours alone
	Figures  []report.Figure    `json:"figures"`
	Notes    []string           `json:"notes"`
	Finished time.Time          `json:"finished"`
}

type karmadaSource struct{ Checkout, Commit, Binary string }

// Run runs subcommand sub with its flags, args: propagation (make bench, make
// bench-recovery), vs-karmada (make bench-vs-karmada) or rollout (make bench-rollout).
func Run(ctx context.Context, sub string, args []string) error {
	if sub == "rollout" {
		return rollout(ctx, args)
	}
	o, fs, err := parseOptions(sub, args)
	if err != nil {
		return err
	}
	s, err := o.common.Start(ctx, fs, sub)
	defer s.Finish()
	if err != nil {
		return err
	}
	rep := &benchReport{Session: s, Fleet: o.fleet, Loads: map[string]*result{}}
	if o.checkout != "" {
		session.Logf("Karmada's controller-manager: from %s, in %s", o.checkout, o.work)
		rep.Karmada = &karmadaSource{Checkout: o.checkout, Commit: karmadabuild.Commit(ctx, o.checkout)}
		var crdDir string
		if rep.Karmada.Binary, crdDir, err = karmadabuild.Build(ctx, o.checkout, o.work, os.Stdout); err != nil {
			return err
		}
		// On both planes, whichever controller runs on it: Karmada's CRDs, which its
		// controller-manager needs, and the project's Cluster CRD.
		if o.fleet.crds, err = karmadabuild.CRDPaths(crdDir); err != nil {
			return err
		}
	}
	if err := rep.measure(ctx, o); err != nil {
		return err
	}
	s.Machine.Finish()
	f := rep.figures(o)
	rep.Figures, rep.Notes, rep.Finished = f.List, rep.notes(o), time.Now()
	if err := report.Print(sub, f.Table(), rep.Notes, rep, o.common.JSONPath); err != nil {
		return err
	}
	fmt.Printf("load average at end: %s; total %s\n", s.Machine.LoadAvgEnd, report.Dur(rep.Finished.Sub(s.Started)))
	return nil
}

// measure runs each side over the fleet, each on a fresh plane, then the ceiling and
// the other loads the scenarios ask for, ours alone.
func (rep *benchReport) measure(ctx context.Context, o *options) error {
	seq := 0
	start := func(l load, label string) (*env, error) {
		seq++
		return startEnv(ctx, filepath.Join(rep.Dir, fmt.Sprintf("%02d-%s-%s", seq, url.PathEscape(label), l.Name)), l)
	}
	runOn := func(l load, sd side, ph phases) (*result, error) {
		e, err := start(l, sd.spec.Label)
		if err != nil {
			return nil, err
		}
		defer e.stop()
		res, err := e.run(ctx, sd, ph)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sd.spec.Label, err)
		}
		return res, nil
	}
	sides := o.sides(rep.Binary, rep.Karmada)
	for _, sd := range sides {
		res, err := runOn(o.fleet, sd, o.phases)
		if err != nil {
			return err
		}
		rep.Results = append(rep.Results, res)
	}
	if o.want["ceiling"] {
		e, err := start(o.fleet, "ceiling")
		if err != nil {
			return err
		}
		rep.Ceiling, err = e.ceiling(ctx, o.ceilingConcurrency, o.ceilingQPS, o.phases.timeout)
		if e.stop(); err != nil {
			return err
		}
	}
	padEnv, err := workload.PadForScale(o.memoryScale)
	if err != nil {
		return err
	}
	memory, webhook := o.fleet, o.fleet
	memory.Name, memory.PadEnv, memory.crds, webhook.Name, webhook.Webhook, webhook.crds = "memory", padEnv, nil, "webhook", true, nil
	for _, l := range []struct {
		want   bool
		load   load
		resync bool
	}{
		{o.want["fanout"], load{Name: "fanout-wide", Bindings: o.fanoutBindings, Clusters: o.fanoutClusters, PerBinding: o.fanoutClusters}, false},
		{o.want["fanout"], load{Name: "fanout-narrow", Bindings: o.fanoutBindings * o.fanoutClusters, Clusters: o.fanoutClusters, PerBinding: 1}, false},
		{o.want["memory"], memory, false},
		{o.want["webhook"], webhook, true},
	} {
		if l.want {
			ph := phases{creators: o.phases.creators, timeout: o.phases.timeout, resync: l.resync, restart: l.resync}
			if rep.Loads[l.load.Name], err = runOn(l.load, sides[0], ph); err != nil {
				return err
			}
		}
	}
	return nil
}
