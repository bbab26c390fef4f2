// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/bench/report"
)

// Targets the figures are held against.
const (
	targetCeilingRatio = 0.80 // controller Works/s ÷ ceiling Works/s, at least
	targetFanoutRatio  = 2.0  // wide ÷ narrow time, at most
	targetMemoryGrowth = 1.25 // heap per cached Work, large manifests ÷ small, at most
)

// figures lay the fleet's results out, a column per side (and their ratio with two),
// then the other loads', ours alone. A figure a side lacks is n/a: a phase it did not
// get to, or any of a propagation that timed out (a partial fleet compares with nothing).
func (rep *benchReport) figures(o *options) *report.Figures {
	f := report.NewFigures(mapEach(rep.Results, func(r *result) string { return r.Label })...)
	each := func(of func(*result) float64) []float64 {
		return mapEach(rep.Results, func(r *result) float64 { return orNaN(!r.Propagation.TimedOut, func() float64 { return of(r) }) })
	}
	works := float64(o.fleet.works())
	f.Section("initial propagation: " + o.fleet.String())
	f.Add("every Work exists after", "s", each(func(r *result) float64 { return r.Propagation.Elapsed.Seconds() })...)
	f.Add("Works/s", "%.0f/s", each(func(r *result) float64 { return r.Propagation.WorksPerSec })...)
	f.Add("controller CPU", "s", each(func(r *result) float64 { return r.Propagation.CPUSeconds })...)
	f.Add("  per Work", "%.3g ms", each(func(r *result) float64 { return 1000 * r.Propagation.CPUSeconds / works })...)
	f.Add("kube-apiserver + etcd CPU per Work", "%.3g ms", each(func(r *result) float64 { return 1000 * r.Propagation.PlaneCPUSeconds / works })...)
	f.Held("Work requests per new Work (audit)", "%.3f", "exactly 1", func(v float64) bool { return math.Abs(v-1) < 0.0005 },
		each(func(r *result) float64 { return float64(r.Propagation.Requests.Match("works.work.karmada.io")) / works })...)
	f.Add("all requests per new Work (audit)", "%.3f", each(func(r *result) float64 { return float64(r.Propagation.Requests.Total()) / works })...)
	verbFigures(f, "%.3f", func(verb string) []float64 {
		return each(func(r *result) float64 { return float64(r.Propagation.Requests.Match("", verb)) / works })
	})
	if c := rep.Ceiling; c != nil {
		f.Add(fmt.Sprintf("ceiling: a plain client creating the same Works, %d at once: Works/s", o.ceilingConcurrency), "%.0f/s", orNaN(!c.TimedOut, func() float64 { return c.WorksPerSec }))
		f.Add("  kube-apiserver + etcd CPU per Work", "%.3g ms", 1000*c.PlaneCPUSeconds/float64(c.Seen))
		f.Held("controller ÷ ceiling Works/s", "%.2f", fmt.Sprintf("≥ %.2f", targetCeilingRatio), func(v float64) bool { return v >= targetCeilingRatio },
			each(func(r *result) float64 { return r.Propagation.WorksPerSec / c.WorksPerSec })...)
		f.Add("kube-apiserver + etcd CPU per Work, the controller's ÷ the plain client's", "%.2f",
			each(func(r *result) float64 {
				return r.Propagation.PlaneCPUSeconds / works / (c.PlaneCPUSeconds / float64(c.Seen))
			})...)
	}
	f.Section("memory (VmRSS), every Work current")
	f.Add("controller RSS", "%.1f MiB", each(func(r *result) float64 { return mib(r.Current.RSS) })...)
	f.Add("  growth per Work over idle", "%.3g KiB", each(func(r *result) float64 { return float64(r.Current.RSS-r.Idle.RSS) / 1024 / works })...)
	if o.phases.resync {
		phaseFigures(f, "no-op resync: every binding re-queued (an annotation patched), nothing to change", mapEach(rep.Results, func(r *result) *phase { return r.Resync }), false)
	}
	if o.phases.restart {
		phaseFigures(f, "restart: a fresh process over the fleet, from process start", mapEach(rep.Results, func(r *result) *phase { return r.Restart }), true)
	}
	rep.recoveryFigures(f, o)
	rep.loadFigures(f)
	return f
}

// mapEach is of applied to each of xs.
func mapEach[T, U any](xs []T, of func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = of(x)
	}
	return out
}

// verbFigures add a row per verb any column used, of(verb) its values.
func verbFigures(f *report.Figures, unit string, of func(verb string) []float64) {
	for _, verb := range []string{"discovery", "list", "watch", "get", "create", "update", "patch", "delete"} {
		if values := of(verb); slices.ContainsFunc(values, func(v float64) bool { return v > 0 }) {
			f.Add("  "+verb, unit, values...)
		}
	}
}

// phaseFigures are a resync's or a restart's, a column each: neither may write, a
// resync may not read live, and a restart may not read a Work by itself.
func phaseFigures(f *report.Figures, title string, phases []*phase, restart bool) {
	f.Section(title)
	of := func(v func(*phase) float64) []float64 {
		return mapEach(phases, func(ph *phase) float64 { return orNaN(ph != nil, func() float64 { return v(ph) }) })
	}
	zero := func(v float64) bool { return v == 0 }
	f.Add("every binding reconciled after", "s", of(func(ph *phase) float64 { return ph.Reconciled.Seconds() })...)
	f.Add("last request after", "s", of(func(ph *phase) float64 { return ph.LastRequest.Seconds() })...)
	f.Held("writes (audit)", "%.0f", "0", zero, of(func(ph *phase) float64 { return float64(ph.Requests.Writes("")) })...)
	f.Held("  of Works", "%.0f", "0", zero, of(func(ph *phase) float64 { return float64(ph.Requests.Writes("works.work.karmada.io")) })...)
	if restart {
		f.Held("Work GETs (audit)", "%.0f", "0", zero, of(func(ph *phase) float64 { return float64(ph.Requests["get works.work.karmada.io"]) })...)
	} else {
		f.Held("live reads: get, list (audit)", "%.0f", "0", zero, of(func(ph *phase) float64 { return float64(ph.Requests.Reads("")) })...)
	}
	f.Add("all requests (audit)", "%.0f", of(func(ph *phase) float64 { return float64(ph.Requests.Total()) })...)
	verbFigures(f, "%.0f", func(verb string) []float64 {
		return of(func(ph *phase) float64 { return float64(ph.Requests.Match("", verb)) })
	})
	f.Add("controller CPU", "s", of(func(ph *phase) float64 { return ph.CPUSeconds })...)
	if restart {
		f.Add("RSS after", "%.1f MiB", of(func(ph *phase) float64 { return mib(ph.RSS) })...)
		f.Add("Work ledger checkpoint ConfigMaps at start", "%.0f", of(func(ph *phase) float64 { return float64(ph.CheckpointConfigMaps) })...)
	}
}

// recoveryFigures are the recoveries after each block and the fresh changes, a column
// per side.
func (rep *benchReport) recoveryFigures(f *report.Figures, o *options) {
	if ph := o.phases; ph.recoverySamples > 0 {
		f.Section(fmt.Sprintf("recovery, with the restarted process: a blocked cluster's old Work gone → its new Work, %d samples each", ph.recoverySamples))
		for i, block := range ph.recoveryBlocks {
			rec := func(v func(*recoveries) report.Num) []float64 {
				return mapEach(rep.Results, func(r *result) float64 {
					return orNaN(len(r.Recovery) > i, func() float64 { return float64(v(r.Recovery[i])) / 1000 })
				})
			}
			f.Add(fmt.Sprintf("blocked %s: median", block), "s", rec(func(x *recoveries) report.Num { return x.P50Ms })...)
			f.Add("  max", "s", rec(func(x *recoveries) report.Num { return x.MaxMs })...)
		}
	}
	if ph := o.phases; ph.fresh > 0 {
		f.Section(fmt.Sprintf("a second restart: %d bindings' replicas doubled, one every %s from %s after process start; change → its last Work rewritten",
			ph.fresh, ph.freshInterval, ph.freshInterval))
		fresh := func(v func(*freshChanges) time.Duration) []float64 {
			return mapEach(rep.Results, func(r *result) float64 { return orNaN(r.Fresh != nil, func() float64 { return v(r.Fresh).Seconds() }) })
		}
		f.Add("p50", "s", fresh(func(fc *freshChanges) time.Duration { return fc.P50 })...)
		f.Add("p99", "s", fresh(func(fc *freshChanges) time.Duration { return fc.P99 })...)
		f.Add("max", "s", fresh(func(fc *freshChanges) time.Duration { return fc.Max })...)
		f.Add("Works' first watch after process start (ours: the bindings cached)", "s", fresh(func(fc *freshChanges) time.Duration { return fc.WorksWatchAt })...)
		f.Add("  p99 of the changes made from then on", "s", fresh(func(fc *freshChanges) time.Duration { return fc.P99AfterWorksWatch })...)
		stream := func(of func(*bindingsStream) []time.Duration) []float64 {
			return mapEach(rep.Results, func(r *result) float64 {
				return orNaN(r.Stream != nil, func() float64 { return median(of(r.Stream)).Seconds() })
			})
		}
		f.Add("the bindings' initial stream to a bare client, idle plane: read", "s", stream(func(s *bindingsStream) []time.Duration { return s.Read })...)
		f.Add("  decoded", "s", stream(func(s *bindingsStream) []time.Duration { return s.Decoded })...)
	}
}

// loadFigures are the other loads', ours alone.
func (rep *benchReport) loadFigures(f *report.Figures) {
	if w := rep.Loads["webhook"]; w != nil {
		f.Section(fmt.Sprintf("behind karmada-webhook's Work mutation: %s, %s", w.Load, w.Label))
		f.Add("initial: Work requests per new Work (audit)", "%.3f", float64(w.Propagation.Requests.Match("works.work.karmada.io"))/float64(w.Propagation.Seen))
		phaseFigures(f, "behind the webhook: no-op resync", []*phase{w.Resync}, false)
		phaseFigures(f, "behind the webhook: restart", []*phase{w.Restart}, true)
	}
	elapsed := func(r *result) float64 { return orNaN(!r.Propagation.TimedOut, r.Propagation.Elapsed.Seconds) }
	if wide, narrow := rep.Loads["fanout-wide"], rep.Loads["fanout-narrow"]; wide != nil {
		f.Section(fmt.Sprintf("fan-out: the same %d Works, wide and narrow, %s", wide.Load.works(), wide.Label))
		f.Add(fmt.Sprintf("wide: %d × %d clusters", wide.Load.Bindings, wide.Load.PerBinding), "s", elapsed(wide))
		f.Add(fmt.Sprintf("narrow: %d bindings × 1 cluster", narrow.Load.Bindings), "s", elapsed(narrow))
		f.Held("wide ÷ narrow time", "%.2f", fmt.Sprintf("≤ %.0f", targetFanoutRatio), func(v float64) bool { return v <= targetFanoutRatio }, elapsed(wide)/elapsed(narrow))
	}
	if big := rep.Loads["memory"]; big != nil {
		base := rep.Results[0]
		heap := func(r *result) float64 {
			return float64(r.Current.HeapLive-r.Idle.HeapLive) / float64(r.Propagation.Seen)
		}
		f.Section(fmt.Sprintf("memory: the live heap with every Work cached, %s", base.Label))
		for _, m := range []*result{base, big} {
			f.Add(fmt.Sprintf("heap per cached Work, %s manifests", report.Bytes(m.ManifestBytes)), "%.3g KiB", heap(m)/1024)
			f.Add("  peak RSS (VmHWM)", "%.1f MiB", mib(m.Current.PeakRSS))
		}
		f.Held(fmt.Sprintf("heap per Work, %.0f× manifest ÷ 1×", float64(big.ManifestBytes)/float64(base.ManifestBytes)), "%.2f",
			fmt.Sprintf("≤ %.2f (flat)", targetMemoryGrowth), func(v float64) bool { return v <= targetMemoryGrowth }, heap(big)/heap(base))
		f.Add("template cache: extra heap per template", "%.3g KiB", float64(big.Idle.HeapLive-base.Idle.HeapLive)/float64(base.Load.Bindings)/1024)
	}
}

// orNaN is v() when ok, else NaN: a figure not measured.
func orNaN(ok bool, v func() float64) float64 {
	if !ok {
		return math.NaN()
	}
	return v()
}

// notes say how the figures were taken, with the controllers' command lines.
func (rep *benchReport) notes(o *options) []string {
	ph := o.phases
	n := []string{
		fmt.Sprintf("fleet: %s; each side on a fresh control plane (kube-apiserver + etcd; with Karmada, Karmada's CRDs and the project's Cluster CRD), ours first, in this one invocation on this machine; templates created before the clock starts; bindings created %d at once with the binding controller's finalizer, as Karmada's detector creates them", o.fleet, ph.creators),
		"time = first binding create sent → last Work seen by one metadata-only watch of all Works; CPU = user + system of the controller process (/proc), and of kube-apiserver + etcd, from the first create until the controller is quiet (requests unchanged for 1s, queues empty); requests = the API server's audit log of the controller's user",
		"RSS = VmRSS (/proc) once two garbage collections completed after the moment; growth per Work = that minus the RSS with the templates cached and no binding yet, ÷ Works",
	}
	for _, c := range []struct {
		want bool
		note string
	}{
		{o.want["ceiling"], "ceiling: a plain controller-runtime client creating the same rendered Works (pkg/render) on a fresh plane, no controller running"},
		{ph.resync, "resync: a merge patch of one annotation on every binding (the controller watches binding annotations); nothing a Work depends on changes"},
		{ph.restart, "restart: the controller stopped with SIGTERM, as a rollout stops it (ours saves its Work ledger checkpoint then, when --work-ledger-checkpoint-interval is set, and the run fails if the restart finds none), and a fresh process started once the plane is idle; requests from process start until it has reconciled every binding and gone quiet"},
		{ph.recoverySamples > 0, "recovery: with the restarted process, on two clusters outside the fleet: a binding deleted with one cluster disconnected (its Work there stays terminating), recreated with a new permanent ID, the cluster connected after the block; latency = its old Work gone → its new Work, by the same watch; failed and timed-out samples are left out and keep their error in the JSON"},
		{ph.fresh > 0, "fresh changes: a second restart once the plane is idle again; the bindings spread over the fleet get their replicas doubled (a spec change every one of their Works must show, which both controllers see through the binding, as a scheduler's change); latency = the change sent → the last of its Works at a newer generation, by the same watch; a change never written counts as the longest"},
		{o.want["webhook"], "webhook: the fleet again, with its resync and restart, behind karmada-webhook's Work mutation (internal/testenv/workwebhook: every Work gets a random permanent ID, copied into its manifests, on CREATE and UPDATE), as on a real Karmada"},
		{o.want["memory"], "memory: heap per cached Work = growth of go_gc_heap_live_bytes from before the bindings (templates cached) to after the load, ÷ Works; it includes the bindings cached alongside"},
		{rep.Karmada != nil, "Karmada's controller-manager runs its resource detector too (always on, not one of --controllers): it caches every propagatable kind, and its memory and CPU include that, as in every Karmada install"},
	} {
		if c.want {
			n = append(n, c.note)
		}
	}
	for _, r := range append(rep.Results, rep.Loads["memory"]) {
		if r != nil {
			n = append(n, r.Label+": "+strings.Join(r.Argv, " "))
		}
	}
	return n
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
