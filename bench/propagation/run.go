// SPDX-License-Identifier: Apache-2.0

// Package propagation is the propagation subcommand (make bench): Works/s of the initial
// propagation against a plain client writing the same Works (the ceiling), API requests
// per new Work, requests during a no-op resync and a restart, wide against narrow
// fan-out, controller memory with manifests of two sizes, the same behind
// karmada-webhook, and, each with a JSON file of its own, fresh changes behind a flood,
// the controller's CPU per Work of a Lua-revised kind against a native one, and the
// scale scenario: every per-Work figure at full size against a tenth of it.
package propagation

import (
	"context"
	"fmt"
	"time"

	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/workload"
)

// The propagation table's loads, by the flags.
type loads struct {
	initial, wide, narrow, big, webhook loadSpec
	baseBytes, bigBytes                 int
}

func loadsOf(o *options) (loads, error) {
	l := loads{
		initial: loadSpec{Name: "initial", Bindings: o.bindings, Clusters: o.clusters, PerBinding: o.clusters},
		wide:    loadSpec{Name: "fanout-wide", Bindings: o.fanoutBindings, Clusters: o.fanoutClusters, PerBinding: o.fanoutClusters},
		narrow:  loadSpec{Name: "fanout-narrow", Bindings: o.fanoutBindings * o.fanoutClusters, Clusters: o.fanoutClusters, PerBinding: 1},
		webhook: loadSpec{Name: "webhook", Bindings: o.bindings, Clusters: o.clusters, PerBinding: o.clusters, KarmadaWebhook: true},
	}
	padEnv, base, big, err := workload.PadForScale(o.memoryScale)
	l.baseBytes, l.bigBytes = base, big
	l.big = loadSpec{Name: fmt.Sprintf("memory-%gx", o.memoryScale), Bindings: o.bindings, Clusters: o.clusters, PerBinding: o.clusters, PadEnv: padEnv}
	session.Logf("manifest per Work: %d bytes; the memory scenario's large manifests: %d bytes (%d padding env vars)", base, big, padEnv)
	return l, err
}

// Run runs the propagation subcommand with its flags, args.
func Run(ctx context.Context, args []string) error {
	o, fs, err := parseOptions(args)
	if err != nil {
		return err
	}
	s, err := o.common.Start(ctx, fs, "propagation")
	defer s.Finish()
	if err != nil {
		return err
	}
	p := &propagation{s: s, creators: o.creators, phaseTimeout: o.phaseTimeout,
		spec: controller.Spec{Label: "binding-controller", Binary: s.Binary, Args: o.common.ManagerArgs()}}
	l, err := loadsOf(o)
	if err != nil {
		return err
	}
	rep := &propagationReport{Session: s, Controllers: []string{p.spec.Label}, Runs: map[string][]*runResult{}, Initial: map[string][]*runResult{}}
	runs := map[string]*runResult{} // by load name
	if err := p.propagationScenarios(ctx, o, l, rep, runs); err != nil {
		return err
	}
	var flood *urgentResult
	if o.want["flood"] {
		if flood, err = p.floodRun(ctx, o); err != nil {
			return err
		}
	}
	var interp *interpreterReport
	if o.want["interpreter"] {
		if interp, err = p.interpreterScenario(ctx, o.interpreterBindings, o.interpreterClusters, o.interpRuns); err != nil {
			return err
		}
	}
	var scale *scaleReport
	if o.want["scale"] {
		if scale, err = p.scaleScenario(ctx, o.scale); err != nil {
			return err
		}
	}
	rep.Finished = time.Now()
	rep.Machine.Finish()
	return printAll(o, l, rep, runs, flood, interp, scale)
}

// propagationScenarios runs the loads of propagation.json. The initial load runs --repeat
// times, the controller and the ceiling alternating (ABBA), so that a machine getting
// busier or quieter weighs on both alike; its first run also carries the resync, the
// restart and the memory reading.
func (p *propagation) propagationScenarios(ctx context.Context, o *options, l loads, rep *propagationReport, runs map[string]*runResult) error {
	record := func(r *runResult) {
		runs[r.Load.Name] = r
		rep.Runs[p.spec.Label] = append(rep.Runs[p.spec.Label], r)
	}
	for i := 0; i < o.repeat; i++ {
		controllerFirst := i%2 == 0
		for _, ceiling := range []bool{!controllerFirst, controllerFirst} {
			switch {
			case ceiling && o.want["initial"]:
				cr, err := p.ceilingRun(ctx, l.initial, o.ceilingConcurrency, o.ceilingQPS)
				if err != nil {
					return err
				}
				rep.Ceilings = append(rep.Ceilings, cr)
			case !ceiling && (o.want["initial"] || (i == 0 && (o.want["resync"] || o.want["memory"]))):
				r, err := p.controllerRun(ctx, l.initial, i == 0 && o.want["resync"])
				if err != nil {
					return err
				}
				if i == 0 {
					record(r)
				} else {
					rep.Runs[p.spec.Label] = append(rep.Runs[p.spec.Label], r)
				}
				rep.Initial[p.spec.Label] = append(rep.Initial[p.spec.Label], r)
			}
		}
	}
	for _, run := range []struct {
		want   bool
		load   loadSpec
		resync bool
	}{{o.want["fanout"], l.wide, false}, {o.want["fanout"], l.narrow, false}, {o.want["memory"], l.big, false}, {o.want["webhook"], l.webhook, true}} {
		if run.want {
			r, err := p.controllerRun(ctx, run.load, run.resync)
			if err != nil {
				return err
			}
			record(r)
		}
	}
	return nil
}

// printAll prints every scenario's table and writes its JSON: the scenarios with a file
// of their own first, then propagation.json unless only those ran, so that a run of one
// of them leaves the propagation results of a full run as they are.
func printAll(o *options, l loads, rep *propagationReport, runs map[string]*runResult, flood *urgentResult, interp *interpreterReport, scale *scaleReport) error {
	if scale != nil {
		scale.Finished = rep.Finished
		if err := printScale(scale, o.scaleJSON); err != nil {
			return err
		}
	}
	if interp != nil {
		if err := printInterpreter(interp, o.interpreterJSON); err != nil {
			return err
		}
	}
	if flood != nil {
		if err := printFlood(&urgentReport{Session: rep.Session, Urgent: []*urgentResult{flood}, Finished: rep.Finished}, o.urgentJSON); err != nil {
			return err
		}
	}
	if len(runs) == 0 && len(rep.Ceilings) == 0 {
		fmt.Printf("load average at end: %s; total %s\n", rep.Machine.LoadAvgEnd, report.Dur(rep.Finished.Sub(rep.Started)))
		return nil
	}
	rep.Notes = propagationNotes(o)
	f := &figures{Figures: report.Figures{Labels: rep.Controllers}, rep: rep, runs: runs}
	f.build(o.want, l)
	rep.Figures = f.List
	if err := report.Print("propagation", f.Table(), rep.Notes, rep, o.common.JSONPath); err != nil {
		return err
	}
	fmt.Printf("load average at end: %s; total %s\n", rep.Machine.LoadAvgEnd, report.Dur(rep.Finished.Sub(rep.Started)))
	return nil
}

func propagationNotes(o *options) []string {
	return []string{
		"every load runs on a fresh control plane (kube-apiserver + etcd) with a fresh controller process; templates and namespaces are created before the clock starts",
		"time = first binding create sent → last expected Work seen by one metadata-only watch of all Works (the same watch times the ceiling)",
		fmt.Sprintf("ceiling = a plain controller-runtime client creating the same rendered Works (pkg/render), %d at once, client-side QPS %s, no controller running", o.ceilingConcurrency, qpsText(o.ceilingQPS)),
		"client-side counts are the controller's rest_client_requests_total (labels code, method, host: no resource); client-go counts a watch as a GET",
		"resync trigger: a merge patch of one annotation on every binding (the controller watches binding annotations); nothing a Work depends on changes",
		"restart: after the resync the controller is stopped and a fresh process started on the same objects; its requests are counted from process start (discovery, lists, watches included) until it has reconciled every binding and gone quiet",
		"webhook: the initial load, its resync and the restart again on a control plane with karmada-webhook's Work mutation in front (internal/testenv/workwebhook: every Work gets a random permanent ID, copied into its manifests, on CREATE and UPDATE), as on a real Karmada",
		"heap per cached Work = growth of go_gc_heap_live_bytes from before the bindings (templates already cached) to after the load, ÷ Works, each read once two GCs completed after the moment (the controller's /metrics is scraped until they have: every scrape allocates); it includes the bindings cached alongside (one per binding's clusters' Works)",
		"by-resource counts come from the API server's audit log of the controller's own user (Metadata level, one line per request)",
	}
}

func qpsText(qps float64) string {
	if qps < 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%g", qps)
}
