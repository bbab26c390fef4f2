// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/binding-controller/binding-controller/bench/benchkit"
)

func propagationTable(rep *propagationReport, specs []benchkit.ControllerSpec, runs map[string]map[string]*runResult,
	want map[string]bool, initial, wide, narrow, big, behindWebhook loadSpec, baseBytes, bigBytes int) *benchkit.Table {
	b := &tableBuilder{}
	for _, s := range specs {
		b.labels = append(b.labels, s.Label)
	}
	ceilings := rep.Ceilings
	reps := len(ceilings)
	for _, l := range b.labels {
		if n := len(rep.Initial[l]); n > reps {
			reps = n
		}
	}
	// medianOf is the median of f over every initial run of r's controller (timeouts: 0).
	medianOf := func(r *runResult, f func(*runResult) float64) float64 {
		var xs []float64
		for _, x := range rep.Initial[r.Controller] {
			if !x.TimedOut {
				xs = append(xs, f(x))
			}
		}
		return median(xs)
	}
	ceilingMedian := func(f func(*ceilingResult) float64) float64 {
		var xs []float64
		for _, c := range ceilings {
			if !c.TimedOut {
				xs = append(xs, f(c))
			}
		}
		return median(xs)
	}
	worksPerSec := func(r *runResult) float64 { return r.WorksPerSec }
	steady := func(r *runResult) float64 { return float64(r.SteadyWorksPerSec) }

	if want["initial"] {
		title := "initial propagation: " + initial.String()
		if reps > 1 {
			title += fmt.Sprintf(" — medians of %d runs, controller and ceiling alternating", reps)
		}
		b.sectionRow(title)
		b.row("time until every Work exists", info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
			var parts []string
			for _, x := range rep.Initial[r.Controller] {
				if x.TimedOut {
					parts = append(parts, fmt.Sprintf("TIMEOUT (%d/%d)", x.Seen, x.Works))
				} else {
					parts = append(parts, benchkit.Dur(x.Elapsed))
				}
			}
			return strings.Join(parts, ", "), ""
		})), "")
		b.row("  of which creating the bindings", info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
			return benchkit.Dur(r.CreateElapsed), ""
		})), "")
		b.row("controller Works/s (10–90% of Works)", info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
			return rate(medianOf(r, worksPerSec)) + " (" + rate(medianOf(r, steady)) + ")", ""
		})), "")
		b.row("controller CPU-seconds per 1000 Works", info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
			return fmt.Sprintf("%.2f", medianOf(r, func(x *runResult) float64 { return x.CPUSeconds * 1000 / float64(x.Seen) })), ""
		})), "")
		if len(ceilings) > 0 {
			c0 := ceilings[0]
			name := fmt.Sprintf("ceiling Works/s (plain client, %d at once, QPS %s)", c0.Concurrency, qpsText(c0.QPS))
			cw := ceilingMedian(func(c *ceilingResult) float64 { return c.WorksPerSec })
			cs := ceilingMedian(func(c *ceilingResult) float64 { return float64(c.SteadyWorksPerSec) })
			val := rate(cw) + " (" + rate(cs) + ")"
			if math.IsNaN(cw) {
				val = fmt.Sprintf("TIMEOUT (%d/%d)", c0.Seen, c0.Works)
			}
			b.row(name, single(val), "")
			cp := ceilingMedian(func(c *ceilingResult) float64 { return c.PlaneCPUSeconds * 1000 / float64(c.Seen) })
			b.row("kube-apiserver + etcd CPU-seconds per 1000 Works: controller ÷ ceiling", info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
				x := medianOf(r, func(x *runResult) float64 { return x.PlaneCPUSeconds * 1000 / float64(x.Seen) })
				return fmt.Sprintf("%.2f ÷ %.2f = %.2f", x, cp, x/cp), ""
			})), "")
			b.row("controller ÷ ceiling", b.each(runs, initial.Name, func(r *runResult) (string, string) {
				x := medianOf(r, worksPerSec) / cw
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return "n/a", "MISS"
				}
				return fmt.Sprintf("%.2f", x), benchkit.Verdict(x >= targetCeilingRatio)
			}), fmt.Sprintf("≥ %.2f", targetCeilingRatio))
			if reps > 1 {
				b.row("  run by run (in order)", info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
					var parts []string
					for i, x := range rep.Initial[r.Controller] {
						if i < len(ceilings) && !x.TimedOut && !ceilings[i].TimedOut {
							parts = append(parts, fmt.Sprintf("%.2f", x.WorksPerSec/ceilings[i].WorksPerSec))
						}
					}
					return strings.Join(parts, ", "), ""
				})), "")
			}
			b.row("  the same, 10–90% of Works", info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
				x := medianOf(r, steady) / cs
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return "n/a", ""
				}
				return fmt.Sprintf("%.2f", x), ""
			})), "")
		}

		b.sectionRow("API requests during the initial propagation, per new Work")
		b.row("all requests, client-side (rest_client_requests_total)", b.each(runs, initial.Name, func(r *runResult) (string, string) {
			total := float64(r.Requests.ClientTotal)
			if math.IsNaN(total) {
				return "n/a (no metrics)", ""
			}
			x := total / float64(r.Seen)
			return fmt.Sprintf("%.3f (%.0f)", x, total), benchkit.Verdict(math.Abs(x-targetRequestsPerNew) < 0.005)
		}), "exactly 1")
		for _, m := range methodsOf(runs, initial.Name) {
			b.row("  "+m, info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
				if r.Requests.ClientByMethod == nil {
					return "n/a", ""
				}
				v := r.Requests.ClientByMethod[m]
				return fmt.Sprintf("%.3f (%.0f)", v/float64(r.Seen), v), ""
			})), "")
		}
		if anyAudit(runs, initial.Name) {
			b.row("Work requests, audit log (works.work.karmada.io)", b.each(runs, initial.Name, func(r *runResult) (string, string) {
				n := r.Requests.Audit.Match("works.work.karmada.io")
				x := float64(n) / float64(r.Seen)
				return fmt.Sprintf("%.3f (%d)", x, n), benchkit.Verdict(math.Abs(x-targetRequestsPerNew) < 0.005)
			}), "exactly 1")
			b.row("all requests, audit log", info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
				n := r.Requests.Audit.Total()
				return fmt.Sprintf("%.3f (%d)", float64(n)/float64(r.Seen), n), ""
			})), "")
			for _, k := range auditKeysOf(runs, initial.Name, 12) {
				b.row("  "+k, info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
					n := r.Requests.Audit[k]
					return fmt.Sprintf("%.3f (%d)", float64(n)/float64(r.Seen), n), ""
				})), "")
			}
			if len(ceilings) > 0 {
				b.row("ceiling client, audit log", single(auditSummary(ceilings[0].Audit)), "")
			}
		}
		b.row("binding_controller_work_writes_total", info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
			return methods(r.Requests.WorkWrites), ""
		})), "")
	}

	if want["resync"] {
		b.sectionRow("no-op resync: every binding re-queued (annotation patched), nothing to change")
		b.row("bindings re-queued / reconciles seen", info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
			if r.Resync == nil {
				return "n/a", ""
			}
			return fmt.Sprintf("%d / %.0f", r.Resync.Bindings, r.Resync.Reconciles), ""
		})), "")
		b.row("time to reconcile them all", info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
			if r.Resync == nil {
				return "n/a", ""
			}
			return benchkit.Dur(r.Resync.Elapsed), ""
		})), "")
		b.row("writes (client POST/PUT/PATCH/DELETE · audit)", b.each(runs, initial.Name, func(r *runResult) (string, string) {
			if r.Resync == nil {
				return "n/a", "MISS"
			}
			rc := r.Resync.Requests
			client := math.NaN()
			if rc.ClientByMethod != nil {
				client = rc.ClientByMethod["POST"] + rc.ClientByMethod["PUT"] + rc.ClientByMethod["PATCH"] + rc.ClientByMethod["DELETE"]
			}
			audit := rc.Audit.Writes("")
			ok := audit == 0 && (math.IsNaN(client) || client == 0)
			return fmt.Sprintf("%s · %d", num(client), audit), benchkit.Verdict(ok)
		}), "0")
		b.row("live reads (client GET incl. watches · audit get/list)", b.each(runs, initial.Name, func(r *runResult) (string, string) {
			if r.Resync == nil {
				return "n/a", "MISS"
			}
			rc := r.Resync.Requests
			client := math.NaN()
			if rc.ClientByMethod != nil {
				client = rc.ClientByMethod["GET"]
			}
			audit := rc.Audit.Reads("")
			ok := audit == 0
			if !rep.auditOn() {
				ok = client == 0
			}
			return fmt.Sprintf("%s · %d", num(client), audit), benchkit.Verdict(ok)
		}), "0")
		for _, k := range resyncAuditKeys(runs, initial.Name) {
			b.row("  "+k, info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
				if r.Resync == nil {
					return "n/a", ""
				}
				return fmt.Sprint(r.Resync.Requests.Audit[k]), ""
			})), "")
		}
		b.row("binding_controller_work_writes_total", info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
			if r.Resync == nil {
				return "n/a", ""
			}
			return methods(r.Resync.Requests.WorkWrites), ""
		})), "")
	}

	if want["resync"] {
		b.sectionRow("restart: a fresh controller process re-syncs the same bindings (no target; from process start)")
		rs := func(fn func(r *resyncResult) string) cells {
			return info(b.each(runs, initial.Name, func(r *runResult) (string, string) {
				if r.Restart == nil {
					return "n/a", ""
				}
				return fn(r.Restart), ""
			}))
		}
		b.row("bindings reconciled / time from process start", rs(func(r *resyncResult) string {
			return fmt.Sprintf("%.0f / %s", float64(r.Reconciles), benchkit.Dur(r.Elapsed))
		}), "")
		b.row("client requests by method", rs(func(r *resyncResult) string { return methods(r.Requests.ClientByMethod) }), "")
		b.row("writes · live get/list (audit)", rs(func(r *resyncResult) string {
			return fmt.Sprintf("%d · %d", r.Requests.Audit.Writes(""), r.Requests.Audit.Reads(""))
		}), "")
		var keys []string
		seen := map[string]bool{}
		for _, m := range runs {
			if r := m[initial.Name]; r != nil && r.Restart != nil {
				for _, k := range r.Restart.Requests.Audit.Keys() {
					if !seen[k] && len(keys) < 16 {
						seen[k] = true
						keys = append(keys, k)
					}
				}
			}
		}
		for _, k := range keys {
			b.row("  "+k, rs(func(r *resyncResult) string { return fmt.Sprint(r.Requests.Audit[k]) }), "")
		}
		b.row("binding_controller_work_writes_total", rs(func(r *resyncResult) string { return methods(r.Requests.WorkWrites) }), "")
	}

	if want["webhook"] {
		b.webhookSection(runs, behindWebhook, rep.auditOn())
	}

	if want["fanout"] {
		b.sectionRow(fmt.Sprintf("fan-out: the same %d Works, wide and narrow", wide.works()))
		timeOf := func(r *runResult) (string, string) {
			if r.TimedOut {
				return fmt.Sprintf("TIMEOUT (%d/%d)", r.Seen, r.Works), ""
			}
			return fmt.Sprintf("%s (%s Works/s)", benchkit.Dur(r.Elapsed), rate(r.WorksPerSec)), ""
		}
		b.row(fmt.Sprintf("wide: %d × %d clusters", wide.Bindings, wide.PerBinding), info(b.each(runs, wide.Name, timeOf)), "")
		b.row(fmt.Sprintf("narrow: %d bindings × 1 cluster", narrow.Bindings), info(b.each(runs, narrow.Name, timeOf)), "")
		b.row("wide ÷ narrow time", b.each(runs, wide.Name, func(r *runResult) (string, string) {
			n := runs[r.Controller][narrow.Name]
			if r.TimedOut || n == nil || n.TimedOut || n.Elapsed == 0 {
				return "n/a", "MISS"
			}
			x := r.Elapsed.Seconds() / n.Elapsed.Seconds()
			return fmt.Sprintf("%.2f", x), benchkit.Verdict(x <= targetFanoutRatio)
		}), fmt.Sprintf("≤ %.0f", targetFanoutRatio))
	}

	if want["memory"] {
		b.sectionRow(fmt.Sprintf("controller memory with every Work cached (%s)", initial.String()))
		memRows := func(load loadSpec, manifest int) {
			b.row(fmt.Sprintf("peak RSS (VmHWM), %s manifests", benchkit.Bytes(float64(manifest))), info(b.each(runs, load.Name, func(r *runResult) (string, string) {
				return benchkit.Bytes(float64(r.MemAfter.PeakRSS)), ""
			})), "")
			b.row("  Go heap in use / live (before the load)", info(b.each(runs, load.Name, func(r *runResult) (string, string) {
				return benchkit.Bytes(r.MemBefore.HeapInuse) + " / " + benchkit.Bytes(r.MemBefore.HeapLive), ""
			})), "")
			b.row("  Go heap in use / live (all Works cached)", info(b.each(runs, load.Name, func(r *runResult) (string, string) {
				return benchkit.Bytes(r.MemAfter.HeapInuse) + " / " + benchkit.Bytes(r.MemAfter.HeapLive), ""
			})), "")
			b.row("  heap per cached Work", info(b.each(runs, load.Name, func(r *runResult) (string, string) {
				return benchkit.Bytes(r.heapPerWork()), ""
			})), "")
		}
		memRows(initial, baseBytes)
		memRows(big, bigBytes)
		b.row(fmt.Sprintf("heap per Work, %.0f× manifest ÷ 1×", float64(bigBytes)/float64(baseBytes)), b.each(runs, big.Name, func(r *runResult) (string, string) {
			n := runs[r.Controller][initial.Name]
			x := r.heapPerWork() / n.heapPerWork()
			if math.IsNaN(x) {
				return "n/a", "MISS"
			}
			return fmt.Sprintf("%.2f×", x), benchkit.Verdict(x <= targetMemoryGrowth)
		}), fmt.Sprintf("≤ %.2f× (flat)", targetMemoryGrowth))
		b.row(fmt.Sprintf("template cache: extra heap per template, %s → %s manifest", benchkit.Bytes(baseBytes), benchkit.Bytes(bigBytes)),
			info(b.each(runs, big.Name, func(r *runResult) (string, string) {
				n := runs[r.Controller][initial.Name]
				x := (float64(r.MemBefore.HeapLive) - float64(n.MemBefore.HeapLive)) / float64(big.Bindings)
				return benchkit.Bytes(x), ""
			})), "")
	}
	rep.Figures = b.figures
	return figureTable(b.labels, rep.Figures)
}

func anyAudit(runs map[string]map[string]*runResult, load string) bool {
	for _, m := range runs {
		if r := m[load]; r != nil && len(r.Requests.Audit) > 0 {
			return true
		}
	}
	return false
}

func methodsOf(runs map[string]map[string]*runResult, load string) []string {
	set := map[string]bool{}
	for _, m := range runs {
		if r := m[load]; r != nil {
			for k := range r.Requests.ClientByMethod {
				set[k] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func auditKeysOf(runs map[string]map[string]*runResult, load string, max int) []string {
	total := benchkit.AuditCounts{}
	for _, m := range runs {
		if r := m[load]; r != nil {
			for k, v := range r.Requests.Audit {
				total[k] += v
			}
		}
	}
	keys := total.Keys()
	if len(keys) > max {
		keys = keys[:max]
	}
	return keys
}

func resyncAuditKeys(runs map[string]map[string]*runResult, load string) []string {
	total := benchkit.AuditCounts{}
	for _, m := range runs {
		if r := m[load]; r != nil && r.Resync != nil {
			for k, v := range r.Resync.Requests.Audit {
				total[k] += v
			}
		}
	}
	return total.Keys()
}

func auditSummary(a benchkit.AuditCounts) string {
	var parts []string
	for _, k := range a.Keys() {
		parts = append(parts, fmt.Sprintf("%s %d", k, a[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func rate(v float64) string {
	if v == 0 || math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", v)
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", v)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// webhookSection holds the figures of the load run behind karmada-webhook's Work
// mutation: with every Work current, neither a resync nor a restart may read a Work by
// itself or write one.
func (b *tableBuilder) webhookSection(runs map[string]map[string]*runResult, load loadSpec, auditOn bool) {
	b.sectionRow(fmt.Sprintf("behind karmada-webhook's Work mutation: %s, every Work current", load))
	works := func(phase func(r *runResult) *resyncResult, what func(a benchkit.AuditCounts) int) cells {
		return b.each(runs, load.Name, func(r *runResult) (string, string) {
			rs := phase(r)
			if rs == nil || !auditOn {
				return "n/a", "MISS"
			}
			n := what(rs.Requests.Audit)
			return fmt.Sprint(n), benchkit.Verdict(n == 0)
		})
	}
	resync := func(r *runResult) *resyncResult { return r.Resync }
	restart := func(r *runResult) *resyncResult { return r.Restart }
	gets := func(a benchkit.AuditCounts) int { return a["get works.work.karmada.io"] }
	writes := func(a benchkit.AuditCounts) int { return a.Writes("works.work.karmada.io") }
	b.row("initial: Work requests per new Work (audit)", info(b.each(runs, load.Name, func(r *runResult) (string, string) {
		n := r.Requests.Audit.Match("works.work.karmada.io")
		return fmt.Sprintf("%.3f (%d)", float64(n)/float64(max(r.Seen, 1)), n), ""
	})), "")
	b.row("no-op resync: Work GETs (audit)", works(resync, gets), "0")
	b.row("no-op resync: Work writes (audit)", works(resync, writes), "0")
	b.row("restart: Work GETs (audit)", works(restart, gets), "0")
	b.row("restart: Work PUTs (audit)", works(restart, func(a benchkit.AuditCounts) int { return a["update works.work.karmada.io"] }), "0")
	b.row("restart: Work writes (audit)", works(restart, writes), "0")
	b.row("restart: Work lists (audit)", info(works(restart, func(a benchkit.AuditCounts) int { return a["list works.work.karmada.io"] })), "")
	b.row("restart: all requests (audit)", info(works(restart, func(a benchkit.AuditCounts) int { return a.Total() })), "")
	b.row("restart: events recorded (audit)", works(restart, func(a benchkit.AuditCounts) int {
		return a.Match("events", "create", "update", "patch")
	}), "0")
	b.row("restart: binding_controller_work_writes_total", info(b.each(runs, load.Name, func(r *runResult) (string, string) {
		if r.Restart == nil {
			return "n/a", ""
		}
		return methods(r.Restart.Requests.WorkWrites), ""
	})), "")
}
