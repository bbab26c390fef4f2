// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/report"
)

// Targets the figures are held against.
const (
	targetCeilingRatio   = 0.80 // controller Works/s ÷ ceiling Works/s, at least
	targetRequestsPerNew = 1.0  // API requests per new Work, exactly
	targetFanoutRatio    = 2.0  // wide ÷ narrow time, at most
	targetMemoryGrowth   = 1.25 // heap per cached Work, 10× manifest ÷ 1× manifest, at most
)

// figures builds propagation.json's figures from the runs, by load name.
type figures struct {
	report.Figures
	rep  *propagationReport
	runs map[string]*runResult
}

// info adds a figure without a target.
func (f *figures) info(name, value string) { f.Add(name, report.Cells{Values: []string{value}}, "") }

// held adds a figure held against target, and whether it meets it.
func (f *figures) held(name, value, target string, ok bool) {
	f.Add(name, report.Cells{Values: []string{value}, Verdicts: []string{report.Verdict(ok)}}, target)
}

func (f *figures) build(want map[string]bool, l loads) {
	if want["initial"] {
		f.initial(l.initial)
		f.requests(f.runs[l.initial.Name])
	}
	if want["resync"] {
		f.resync(f.runs[l.initial.Name].Resync)
		f.restart(f.runs[l.initial.Name].Restart)
	}
	if want["webhook"] {
		f.webhook(l.webhook, f.runs[l.webhook.Name])
	}
	if want["fanout"] {
		f.fanout(l.wide, l.narrow)
	}
	if want["memory"] {
		f.memory(l)
	}
}

// medianOf is the median of v over every initial run that did not time out.
func (f *figures) medianOf(v func(*runResult) float64) float64 {
	var xs []float64
	for _, x := range f.rep.Initial[f.Labels[0]] {
		if !x.TimedOut {
			xs = append(xs, v(x))
		}
	}
	return report.Median(xs)
}

func (f *figures) ceilingMedian(v func(*ceilingResult) float64) float64 {
	var xs []float64
	for _, c := range f.rep.Ceilings {
		if !c.TimedOut {
			xs = append(xs, v(c))
		}
	}
	return report.Median(xs)
}

func ratioText(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", x)
}

func timeoutText(seen, works int) string { return fmt.Sprintf("TIMEOUT (%d/%d)", seen, works) }

func (f *figures) initial(load loadSpec) {
	initial, ceilings := f.rep.Initial[f.Labels[0]], f.rep.Ceilings
	title := "initial propagation: " + load.String()
	if reps := max(len(ceilings), len(initial)); reps > 1 {
		title += fmt.Sprintf(" — medians of %d runs, controller and ceiling alternating", reps)
	}
	f.Section(title)
	var times, ratios []string
	for i, x := range initial {
		switch {
		case x.TimedOut:
			times = append(times, timeoutText(x.Seen, x.Works))
			continue
		case i < len(ceilings) && !ceilings[i].TimedOut:
			ratios = append(ratios, fmt.Sprintf("%.2f", x.WorksPerSec/ceilings[i].WorksPerSec))
		}
		times = append(times, report.Dur(x.Elapsed))
	}
	worksPerSec := f.medianOf(func(x *runResult) float64 { return x.WorksPerSec })
	steady := f.medianOf(func(x *runResult) float64 { return float64(x.SteadyWorksPerSec) })
	f.info("time until every Work exists", strings.Join(times, ", "))
	f.info("  of which creating the bindings", report.Dur(f.runs[load.Name].CreateElapsed))
	f.info("controller Works/s (10–90% of Works)", report.Rate(worksPerSec)+" ("+report.Rate(steady)+")")
	f.info("controller CPU-seconds per 1000 Works", fmt.Sprintf("%.2f", f.medianOf(func(x *runResult) float64 { return x.CPUSeconds * 1000 / float64(x.Seen) })))
	if len(ceilings) == 0 {
		return
	}
	c0 := ceilings[0]
	cw := f.ceilingMedian(func(c *ceilingResult) float64 { return c.WorksPerSec })
	cs := f.ceilingMedian(func(c *ceilingResult) float64 { return float64(c.SteadyWorksPerSec) })
	val := report.Rate(cw) + " (" + report.Rate(cs) + ")"
	if math.IsNaN(cw) {
		val = timeoutText(c0.Seen, c0.Works)
	}
	f.Add(fmt.Sprintf("ceiling Works/s (plain client, %d at once, QPS %s)", c0.Concurrency, qpsText(c0.QPS)), report.Cells{Values: []string{val}}, "")
	cp := f.ceilingMedian(func(c *ceilingResult) float64 { return c.PlaneCPUSeconds * 1000 / float64(c.Seen) })
	x := f.medianOf(func(x *runResult) float64 { return x.PlaneCPUSeconds * 1000 / float64(x.Seen) })
	f.info("kube-apiserver + etcd CPU-seconds per 1000 Works: controller ÷ ceiling", fmt.Sprintf("%.2f ÷ %.2f = %.2f", x, cp, x/cp))
	ratio := worksPerSec / cw
	f.held("controller ÷ ceiling", ratioText(ratio), fmt.Sprintf("≥ %.2f", targetCeilingRatio), !math.IsInf(ratio, 0) && ratio >= targetCeilingRatio)
	if len(initial) > 1 || len(ceilings) > 1 {
		f.info("  run by run (in order)", strings.Join(ratios, ", "))
	}
	f.info("  the same, 10–90% of Works", ratioText(steady/cs))
}

// perWork formats n requests per Work seen, and n.
func perWork(n float64, r *runResult) string { return fmt.Sprintf("%.3f (%.0f)", n/float64(r.Seen), n) }

func (f *figures) requests(r *runResult) {
	f.Section("API requests during the initial propagation, per new Work")
	exactlyOne := func(n float64) bool { return math.Abs(n/float64(r.Seen)-targetRequestsPerNew) < 0.005 }
	total := float64(r.Requests.ClientTotal)
	f.held("all requests, client-side (rest_client_requests_total)", perWork(total, r), "exactly 1", exactlyOne(total))
	for _, m := range slices.Sorted(maps.Keys(r.Requests.ClientByMethod)) {
		f.info("  "+m, perWork(r.Requests.ClientByMethod[m], r))
	}
	if a := r.Requests.Audit; len(a) > 0 {
		works := float64(a.Match("works.work.karmada.io"))
		f.held("Work requests, audit log (works.work.karmada.io)", perWork(works, r), "exactly 1", exactlyOne(works))
		f.info("all requests, audit log", perWork(float64(a.Total()), r))
		for _, k := range first(a.Keys(), 12) {
			f.info("  "+k, perWork(float64(a[k]), r))
		}
		if len(f.rep.Ceilings) > 0 {
			f.info("ceiling client, audit log", f.rep.Ceilings[0].Audit.String())
		}
	}
	f.info("binding_controller_work_writes_total", methods(r.Requests.WorkWrites))
}

func first(keys []string, n int) []string { return keys[:min(n, len(keys))] }

func (f *figures) resync(rs *resyncResult) {
	f.Section("no-op resync: every binding re-queued (annotation patched), nothing to change")
	if rs == nil {
		f.held("writes (client POST/PUT/PATCH/DELETE · audit)", "n/a", "0", false)
		return
	}
	c, a := rs.Requests.ClientByMethod, rs.Requests.Audit
	clientWrites := c["POST"] + c["PUT"] + c["PATCH"] + c["DELETE"]
	f.info("bindings re-queued / reconciles seen", fmt.Sprintf("%d / %.0f", rs.Bindings, rs.Reconciles))
	f.info("time to reconcile them all", report.Dur(rs.Elapsed))
	f.held("writes (client POST/PUT/PATCH/DELETE · audit)", fmt.Sprintf("%.0f · %d", clientWrites, a.Writes("")), "0", a.Writes("") == 0 && clientWrites == 0)
	f.held("live reads (client GET incl. watches · audit get/list)", fmt.Sprintf("%.0f · %d", c["GET"], a.Reads("")), "0", a.Reads("") == 0)
	for _, k := range a.Keys() {
		f.info("  "+k, fmt.Sprint(a[k]))
	}
	f.info("binding_controller_work_writes_total", methods(rs.Requests.WorkWrites))
}

func (f *figures) restart(rs *resyncResult) {
	f.Section("restart: a fresh controller process re-syncs the same bindings (no target; from process start)")
	if rs == nil {
		f.info("bindings reconciled / time from process start", "n/a")
		return
	}
	a := rs.Requests.Audit
	f.info("bindings reconciled / time from process start", fmt.Sprintf("%.0f / %s", float64(rs.Reconciles), report.Dur(rs.Elapsed)))
	f.info("client requests by method", methods(rs.Requests.ClientByMethod))
	f.info("writes · live get/list (audit)", fmt.Sprintf("%d · %d", a.Writes(""), a.Reads("")))
	for _, k := range first(a.Keys(), 16) {
		f.info("  "+k, fmt.Sprint(a[k]))
	}
	f.info("binding_controller_work_writes_total", methods(rs.Requests.WorkWrites))
}

// webhook holds the figures of the load run behind karmada-webhook's Work mutation: with
// every Work current, neither a resync nor a restart may read a Work by itself or write one.
func (f *figures) webhook(load loadSpec, r *runResult) {
	f.Section(fmt.Sprintf("behind karmada-webhook's Work mutation: %s, every Work current", load))
	n := r.Requests.Audit.Match("works.work.karmada.io")
	f.info("initial: Work requests per new Work (audit)", fmt.Sprintf("%.3f (%d)", float64(n)/float64(max(r.Seen, 1)), n))
	for _, c := range []struct {
		name    string
		phase   *resyncResult
		count   func(audit.Counts) int
		heldTo0 bool
	}{
		{"no-op resync: Work GETs (audit)", r.Resync, func(a audit.Counts) int { return a["get works.work.karmada.io"] }, true},
		{"no-op resync: Work writes (audit)", r.Resync, func(a audit.Counts) int { return a.Writes("works.work.karmada.io") }, true},
		{"restart: Work GETs (audit)", r.Restart, func(a audit.Counts) int { return a["get works.work.karmada.io"] }, true},
		{"restart: Work PUTs (audit)", r.Restart, func(a audit.Counts) int { return a["update works.work.karmada.io"] }, true},
		{"restart: Work writes (audit)", r.Restart, func(a audit.Counts) int { return a.Writes("works.work.karmada.io") }, true},
		{"restart: Work lists (audit)", r.Restart, func(a audit.Counts) int { return a["list works.work.karmada.io"] }, false},
		{"restart: all requests (audit)", r.Restart, audit.Counts.Total, false},
		{"restart: events recorded (audit)", r.Restart, func(a audit.Counts) int { return a.Match("events", "create", "update", "patch") }, true},
	} {
		value, n := "n/a", -1
		if c.phase != nil {
			n = c.count(c.phase.Requests.Audit)
			value = fmt.Sprint(n)
		}
		if c.heldTo0 {
			f.held(c.name, value, "0", n == 0)
		} else {
			f.info(c.name, value)
		}
	}
	writes := "n/a"
	if r.Restart != nil {
		writes = methods(r.Restart.Requests.WorkWrites)
	}
	f.info("restart: binding_controller_work_writes_total", writes)
}

func (f *figures) fanout(wide, narrow loadSpec) {
	f.Section(fmt.Sprintf("fan-out: the same %d Works, wide and narrow", wide.works()))
	w, n := f.runs[wide.Name], f.runs[narrow.Name]
	timeOf := func(r *runResult) string {
		if r.TimedOut {
			return timeoutText(r.Seen, r.Works)
		}
		return fmt.Sprintf("%s (%s Works/s)", report.Dur(r.Elapsed), report.Rate(r.WorksPerSec))
	}
	f.info(fmt.Sprintf("wide: %d × %d clusters", wide.Bindings, wide.PerBinding), timeOf(w))
	f.info(fmt.Sprintf("narrow: %d bindings × 1 cluster", narrow.Bindings), timeOf(n))
	x := math.NaN()
	if !w.TimedOut && !n.TimedOut && n.Elapsed > 0 {
		x = w.Elapsed.Seconds() / n.Elapsed.Seconds()
	}
	f.held("wide ÷ narrow time", ratioText(x), fmt.Sprintf("≤ %.0f", targetFanoutRatio), x <= targetFanoutRatio)
}

func (f *figures) memory(l loads) {
	f.Section(fmt.Sprintf("controller memory with every Work cached (%s)", l.initial))
	base, big := f.runs[l.initial.Name], f.runs[l.big.Name]
	for _, m := range []struct {
		r        *runResult
		manifest int
	}{{base, l.baseBytes}, {big, l.bigBytes}} {
		f.info(fmt.Sprintf("peak RSS (VmHWM), %s manifests", report.Bytes(m.manifest)), report.Bytes(m.r.MemAfter.PeakRSS))
		f.info("  Go heap in use / live (before the load)", report.Bytes(m.r.MemBefore.HeapInuse)+" / "+report.Bytes(m.r.MemBefore.HeapLive))
		f.info("  Go heap in use / live (all Works cached)", report.Bytes(m.r.MemAfter.HeapInuse)+" / "+report.Bytes(m.r.MemAfter.HeapLive))
		f.info("  heap per cached Work", report.Bytes(m.r.heapPerWork()))
	}
	x := big.heapPerWork() / base.heapPerWork()
	value := "n/a"
	if !math.IsNaN(x) {
		value = fmt.Sprintf("%.2f×", x)
	}
	f.held(fmt.Sprintf("heap per Work, %.0f× manifest ÷ 1×", float64(l.bigBytes)/float64(l.baseBytes)), value, fmt.Sprintf("≤ %.2f× (flat)", targetMemoryGrowth), x <= targetMemoryGrowth)
	f.info(fmt.Sprintf("template cache: extra heap per template, %s → %s manifest", report.Bytes(l.baseBytes), report.Bytes(l.bigBytes)),
		report.Bytes((float64(big.MemBefore.HeapLive)-float64(base.MemBefore.HeapLive))/float64(l.big.Bindings)))
}
