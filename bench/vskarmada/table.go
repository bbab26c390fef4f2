// SPDX-License-Identifier: Apache-2.0

package vskarmada

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/freshchange"
	"github.com/binding-controller/binding-controller/bench/report"
)

// row is one figure: both controllers' values in one unit, and ours ÷ Karmada's.
type row struct {
	Section string `json:"section"`
	Name    string `json:"name"`
	// Unit says how the values print: "s", "ms", "MiB", "KiB", "/s", "" (a count) or
	// "%.2f"-style for a bare number.
	Unit    string     `json:"unit"`
	Ours    report.Num `json:"ours"`
	Karmada report.Num `json:"karmada"`
	Ratio   report.Num `json:"oursOverKarmada"`
}

func newRow(section, name, unit string, ours, karmada float64) row {
	return row{Section: section, Name: name, Unit: unit, Ours: report.Num(ours), Karmada: report.Num(karmada), Ratio: report.Num(ours / karmada)}
}

// verbs are the restart's request verbs, in the order the table lists them.
var verbs = []string{"discovery", "list", "watch", "get", "create", "update", "patch", "delete"}

// figures lays out the two results; a figure one controller lacks (a phase that timed
// out) is NaN, n/a in the table.
func figures(fl fleetSpec, o *options, ours, karmada *result) []row {
	var rows []row
	add := func(section, name, unit string, of func(*result) float64) {
		rows = append(rows, newRow(section, name, unit, of(ours), of(karmada)))
	}
	sec := fmt.Sprintf("initial propagation: %d bindings × %d clusters = %d Works", fl.Bindings, fl.Clusters, fl.Works)
	works := float64(fl.Works)
	add(sec, "every Work exists after", "s", func(r *result) float64 { return propagated(r, r.Propagation.Elapsed.Seconds()) })
	add(sec, "Works/s", "/s", func(r *result) float64 { return propagated(r, r.Propagation.WorksPerSec) })
	add(sec, "controller CPU", "s", func(r *result) float64 { return propagated(r, r.Propagation.CPUSeconds) })
	add(sec, "  per Work", "ms", func(r *result) float64 { return propagated(r, 1000*r.Propagation.CPUSeconds/works) })
	add(sec, "kube-apiserver + etcd CPU per Work", "ms", func(r *result) float64 { return propagated(r, 1000*r.Propagation.PlaneCPUSeconds/works) })
	add(sec, "API requests per Work", "%.2f", func(r *result) float64 { return propagated(r, float64(r.Propagation.Requests.Total())/works) })
	sec = "memory (VmRSS), every Work current"
	add(sec, "controller RSS", "MiB", func(r *result) float64 { return propagated(r, mib(r.Memory.Current.RSS)) })
	add(sec, "  growth per Work over idle", "KiB", func(r *result) float64 {
		return propagated(r, float64(r.Memory.Current.RSS-r.Memory.Idle.RSS)/1024/works)
	})
	sec = "restart over the propagated fleet"
	restart := func(name, unit string, of func(*restartResult) float64) {
		add(sec, name, unit, func(r *result) float64 {
			if r.Restart == nil {
				return math.NaN()
			}
			return of(r.Restart)
		})
	}
	restart("process start → last request", "s", func(rs *restartResult) float64 { return rs.LastRequest.Seconds() })
	restart("process start → every binding reconciled", "s", func(rs *restartResult) float64 { return rs.Reconciled.Seconds() })
	restart("requests", "", func(rs *restartResult) float64 { return float64(rs.Requests.Total()) })
	for _, v := range verbs {
		if byVerb(ours, v)+byVerb(karmada, v) > 0 {
			restart("  "+v, "", func(rs *restartResult) float64 { return float64(verbCount(rs.Requests, v)) })
		}
	}
	restart("Work writes", "", func(rs *restartResult) float64 { return float64(rs.WorkWrites) })
	restart("event writes", "", func(rs *restartResult) float64 { return float64(rs.Requests.Writes("events")) })
	restart("controller CPU", "s", func(rs *restartResult) float64 { return rs.CPUSeconds })
	restart("RSS after", "MiB", func(rs *restartResult) float64 { return mib(rs.RSS) })
	restart("Work ledger checkpoint ConfigMaps at start", "", func(rs *restartResult) float64 { return float64(rs.CheckpointConfigMaps) })
	sec = fmt.Sprintf("recovery: a cluster's old Work held %s, %d samples", o.block, o.samples)
	recovered := func(of func(*recoveryResult) float64) func(*result) float64 {
		return func(r *result) float64 {
			if r.Recovery == nil {
				return math.NaN()
			}
			return of(r.Recovery) / 1000
		}
	}
	add(sec, "old Work gone → new Work, median", "s", recovered(func(rr *recoveryResult) float64 { return float64(rr.P50Ms) }))
	add(sec, "  max", "s", recovered(func(rr *recoveryResult) float64 { return float64(rr.MaxMs) }))
	if o.fresh == 0 {
		return rows
	}
	sec = fmt.Sprintf("a second restart: %d bindings' replicas doubled, one every %s from %s after process start", o.fresh, o.freshInterval, o.freshInterval)
	fresh := func(of func(*freshchange.Result) time.Duration) func(*result) float64 {
		return func(r *result) float64 {
			if r.Fresh == nil {
				return math.NaN()
			}
			return of(r.Fresh).Seconds()
		}
	}
	add(sec, "change → its last Work rewritten, p50", "s", fresh(func(fr *freshchange.Result) time.Duration { return fr.P50 }))
	add(sec, "  p99", "s", fresh(func(fr *freshchange.Result) time.Duration { return fr.P99 }))
	add(sec, "  max", "s", fresh(func(fr *freshchange.Result) time.Duration { return fr.Max }))
	return rows
}

// propagated is v, or NaN when r's propagation timed out: a partial fleet's figures
// compare with nothing.
func propagated(r *result, v float64) float64 {
	if r.Propagation.TimedOut {
		return math.NaN()
	}
	return v
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func byVerb(r *result, verb string) int {
	if r.Restart == nil {
		return 0
	}
	return verbCount(r.Restart.Requests, verb)
}

// verbCount counts c's requests of verb, discovery (non-resource requests) apart.
func verbCount(c audit.Counts, verb string) int {
	n := 0
	for k, v := range c {
		kv, rest, _ := strings.Cut(k, " ")
		if strings.HasPrefix(rest, "(non-resource") {
			kv = "discovery"
		}
		if kv == verb {
			n += v
		}
	}
	return n
}

// table prints the rows: figure, ours, Karmada, ours ÷ Karmada.
func table(rows []row) *report.Table {
	t := &report.Table{Header: []string{"figure", "ours", "Karmada", "ours÷Karmada"}}
	for i, r := range rows {
		if i == 0 || r.Section != rows[i-1].Section {
			t.Section(r.Section)
		}
		t.Add(r.Name, value(r.Unit, float64(r.Ours)), value(r.Unit, float64(r.Karmada)), ratio(float64(r.Ratio)))
	}
	return t
}

// value formats v in unit, n/a when there is none.
func value(unit string, v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case unit == "s":
		return report.Dur(time.Duration(v * float64(time.Second)))
	case unit == "MiB":
		return fmt.Sprintf("%.1f MiB", v)
	case unit == "ms" || unit == "KiB":
		return fmt.Sprintf("%.3g %s", v, unit)
	case unit == "/s":
		return fmt.Sprintf("%.0f/s", v)
	case strings.HasPrefix(unit, "%"):
		return fmt.Sprintf(unit, v)
	}
	return fmt.Sprintf("%.0f", v)
}

// ratio formats ours ÷ Karmada's: n/a when either is missing or Karmada's is 0.
func ratio(r float64) string {
	switch {
	case math.IsNaN(r) || math.IsInf(r, 0):
		return "n/a"
	case r >= 100:
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.2g×", r)
}

// notes say how each figure was taken, with both controllers' command lines.
func notes(o *options, results []*result) []string {
	n := []string{
		"each controller runs on a fresh control plane (kube-apiserver + etcd, Karmada's CRDs and the project's Cluster CRD on both), ours first, in this one invocation on this machine",
		fmt.Sprintf("fleet: %d Deployment templates created before the clock starts; their bindings, each to %d clusters, created %d at once with the binding controller's finalizer, as Karmada's detector creates them", o.bindings, o.clusters, o.creators),
		"time = first binding create sent → last Work seen by one metadata-only watch of all Works; CPU = user + system of the controller process (/proc), from the first create until it is quiet (requests unchanged for 1s, queues empty)",
		"RSS = VmRSS (/proc) once two garbage collections completed after the moment; growth per Work = that minus the RSS with the templates cached and no binding yet, ÷ Works",
		"restart: the controller stopped and a fresh process started once the plane is idle; last request = the last request of the controller's user in the API server's audit log before it went quiet; requests by verb from the same log",
		fmt.Sprintf("recovery: as make bench-recovery, on two clusters outside the fleet (the fleet idle around it): binding deleted with one cluster disconnected, recreated with a new permanent ID, the cluster connected after %s; latency = its old Work gone → its new Work, by the same watch", o.block),
		"restart: both controllers are stopped with SIGTERM, as a rollout stops them; this project's saves its Work ledger checkpoint then when --work-ledger-checkpoint-interval is set (--ours-args), and the run fails if the restart finds none",
		fmt.Sprintf("fresh changes: a second restart once the plane is idle again; from %s after process start, one every %s, %d bindings spread over the fleet get their replicas doubled (a spec change every one of their Works must show, which both controllers see through the binding, as a scheduler's change); latency = the change sent → the last of its Works at a newer generation, by the same watch; a change never written counts as the longest", o.freshInterval, o.freshInterval, o.fresh),
		"Karmada's controller-manager runs its resource detector too (always on, not one of --controllers): it caches every propagatable kind, and its memory and CPU include that, as in every Karmada install",
	}
	for _, r := range results {
		n = append(n, r.Label+": "+strings.Join(r.Argv, " "))
	}
	return n
}
