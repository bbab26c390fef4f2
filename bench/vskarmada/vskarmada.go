// SPDX-License-Identifier: Apache-2.0

// Package vskarmada is the vs-karmada subcommand (make bench-vs-karmada): Karmada's own
// binding controller, built from a Karmada checkout, and this project's, one after the
// other in one invocation, each on a fresh control plane over the same fleet; every
// figure side by side and as a ratio. The figures: the initial propagation's time and
// the controller's CPU over it, its memory with every Work current, a restart over the
// propagated fleet, the recovery of a cluster whose old Work was held, and changes made
// during a second restart.
package vskarmada

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/karmadabuild"
)

type options struct {
	common                       session.Common
	checkout, work, karmadaArgs  string
	oursArgs, oursEnv            string
	bindings, clusters, creators int
	block                        time.Duration
	samples, fresh               int
	freshInterval                time.Duration
	phaseTimeout                 time.Duration
}

func parseOptions(args []string) (*options, *flag.FlagSet, error) {
	fs := flag.NewFlagSet("vs-karmada", flag.ContinueOnError)
	o := &options{}
	o.common.Register(fs, "vs-karmada")
	fs.StringVar(&o.checkout, "karmada", "", "Karmada checkout (a work tree, or a git directory as the fetch tool leaves it) to build Karmada's controller-manager from (required)")
	fs.StringVar(&o.work, "karmada-work", filepath.Join(envtestutil.RepoRoot(), "bin", "karmada"),
		"where Karmada's sources and controller-manager go; a controller-manager already there is used as it is (building one takes minutes: delete it to rebuild)")
	fs.StringVar(&o.karmadaArgs, "karmada-args", "", "extra flags for Karmada's controller-manager, space-separated, appended to the tuned ones")
	fs.StringVar(&o.oursArgs, "ours-args", "", "extra flags for this project's controller-manager, space-separated, appended to --manager-args (e.g. \"--work-ledger-checkpoint-interval=30s\")")
	fs.StringVar(&o.oursEnv, "ours-env", "", "space-separated NAME=value set in this project's controller's environment only, e.g. \"GOMEMLIMIT=717MiB\" for a container sized for the fleet")
	fs.IntVar(&o.bindings, "bindings", 1000, "bindings of the fleet, one Deployment template each")
	fs.IntVar(&o.clusters, "clusters", 10, "member clusters every binding targets")
	fs.IntVar(&o.creators, "creators", 8, "goroutines creating the bindings")
	fs.DurationVar(&o.block, "recovery-block", 10*time.Second, "recovery: how long the blocked cluster's old Work stays terminating after its binding is recreated")
	fs.IntVar(&o.samples, "recovery-samples", 2, "recovery: samples per controller")
	fs.IntVar(&o.fresh, "fresh-changes", 20, "bindings, spread over the fleet, whose replicas are doubled during a second restart (0: no second restart)")
	fs.DurationVar(&o.freshInterval, "fresh-interval", 250*time.Millisecond, "time between two fresh changes, the first this long after the restarted process starts")
	fs.DurationVar(&o.phaseTimeout, "phase-timeout", 10*time.Minute, "cap on waiting for every Work of the fleet, and for a restart to reconcile every binding")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go -C bench run . vs-karmada --karmada <checkout> [flags]\n\n"+
			"Karmada's controller-manager (its binding controllers alone, built from --karmada) and this project's,\n"+
			"one after the other, each on a fresh control plane with the same fleet: --bindings Deployment\n"+
			"templates, a binding each to --clusters members. For each: time until every Work exists, the\n"+
			"controller's CPU over it and its RSS after; a restart over the propagated fleet (process start to its\n"+
			"last request, its requests by verb, its Work writes, RSS); --recovery-samples recoveries of a cluster\n"+
			"whose old Work was held --recovery-block; a second restart during which --fresh-changes bindings change,\n"+
			"each timed until its Works show it. The table shows both and ours ÷ Karmada's.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := session.Parse(fs, args); err != nil {
		return nil, nil, err
	}
	if o.checkout == "" {
		fmt.Fprintln(os.Stderr, "vs-karmada: --karmada <a Karmada checkout or fetched git directory> is required")
		return nil, nil, session.ErrUsage
	}
	if min(o.bindings, o.clusters, o.creators, o.samples) < 1 || o.fresh < 0 || o.fresh > o.bindings {
		return nil, nil, fmt.Errorf("--bindings, --clusters, --creators and --recovery-samples must be positive, --fresh-changes at most --bindings")
	}
	return o, fs, nil
}

// side is one of the two controllers.
type side struct {
	spec controller.Spec
	// reconciler names its ResourceBinding controller in controller_runtime_reconcile_total.
	reconciler string
}

// checkpoints says whether the side saves this project's Work ledger checkpoint, which
// a restart is then expected to find.
func (sd side) checkpoints() bool {
	d, err := time.ParseDuration(controller.Flag(sd.spec.Args, "work-ledger-checkpoint-interval"))
	return sd.reconciler == "resourcebinding" && err == nil && d > 0
}

// sides are ours, with --manager-args and then --ours-args, and Karmada's, syncing as
// many bindings at once as ours.
func (o *options) sides(oursBin, karmadaBin string) []side {
	ours := oursSide(oursBin, append(o.common.ManagerArgs(), strings.Fields(o.oursArgs)...), strings.Fields(o.oursEnv))
	return []side{ours, karmadaSide(karmadaBin, ours.spec.Args, strings.Fields(o.karmadaArgs))}
}

func oursSide(bin string, args, env []string) side {
	return side{spec: controller.Spec{Label: "ours", Binary: bin, Args: args, Env: env}, reconciler: "resourcebinding"}
}

func karmadaSide(bin string, oursArgs, extra []string) side {
	return side{spec: controller.Spec{Label: "karmada", Binary: bin, Args: karmadaArgs(oursArgs, extra), ReadyPath: "/healthz"},
		reconciler: "binding-controller"}
}

// karmadaArgs runs Karmada's controller-manager as a fair operator would for a large
// fleet: its binding controllers alone, client-side throttling out of the way (its
// defaults, 40 QPS with a burst of 60, would time the limiter, not the controller), and
// as many bindings synced at once as ours syncs. extra comes last, so it overrides.
func karmadaArgs(oursArgs, extra []string) []string {
	syncs := controller.Flag(oursArgs, "concurrent-resourcebinding-syncs")
	if syncs == "" {
		syncs = "5" // ours' default
	}
	return append([]string{"--controllers=binding", "--kube-api-qps=5000", "--kube-api-burst=10000",
		"--concurrent-resourcebinding-syncs=" + syncs}, extra...)
}

// vsReport is what the JSON holds.
type vsReport struct {
	*session.Session
	Karmada  karmadaSource `json:"karmada"`
	Fleet    fleetSpec     `json:"fleet"`
	Results  []*result     `json:"results"` // ours, then Karmada's
	Figures  []row         `json:"figures"`
	Notes    []string      `json:"notes"`
	Finished time.Time     `json:"finished"`
}

type karmadaSource struct {
	Checkout string `json:"checkout"`
	Commit   string `json:"commit"`
	Binary   string `json:"binary"`
}

type fleetSpec struct {
	Bindings int `json:"bindings"`
	Clusters int `json:"clusters"`
	Works    int `json:"works"`
}

// Run runs the vs-karmada subcommand with its flags, args.
func Run(ctx context.Context, args []string) error {
	o, fs, err := parseOptions(args)
	if err != nil {
		return err
	}
	s, err := o.common.Start(ctx, fs, "vs-karmada")
	defer s.Finish()
	if err != nil {
		return err
	}
	session.Logf("Karmada's controller-manager: from %s, in %s", o.checkout, o.work)
	bin, crdDir, err := karmadabuild.Build(ctx, o.checkout, o.work, os.Stdout)
	if err != nil {
		return err
	}
	r := &runner{o: o, s: s}
	if r.crds, err = karmadabuild.CRDPaths(crdDir); err != nil {
		return err
	}
	rep := &vsReport{Session: s, Karmada: karmadaSource{Checkout: o.checkout, Commit: karmadabuild.Commit(ctx, o.checkout), Binary: bin},
		Fleet: fleetSpec{Bindings: o.bindings, Clusters: o.clusters, Works: o.bindings * o.clusters}}
	for _, sd := range o.sides(s.Binary, bin) {
		res, err := r.run(ctx, sd)
		if err != nil {
			return fmt.Errorf("%s: %w", sd.spec.Label, err)
		}
		rep.Results = append(rep.Results, res)
	}
	rep.Finished = time.Now()
	rep.Machine.Finish()
	rep.Figures = figures(rep.Fleet, o, rep.Results[0], rep.Results[1])
	rep.Notes = notes(o, rep.Results)
	if err := report.Print("vs-karmada", table(rep.Figures), rep.Notes, rep, o.common.JSONPath); err != nil {
		return err
	}
	fmt.Printf("load average at end: %s; total %s\n", rep.Machine.LoadAvgEnd, report.Dur(rep.Finished.Sub(rep.Started)))
	return nil
}
