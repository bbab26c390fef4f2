// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/bench/benchkit"
)

// table lays out the scale scenario: a column per run and the ratio full ÷ small (the
// mean of the small runs when the small size ran again after the full one), held
// against targetScaleGrowth where the figure is a cost per Work or per sync; with two
// small runs, the last column is the second's figure ÷ the first's: the machine's drift.
func (rep *scaleReport) table() *benchkit.Table {
	small, full := rep.Runs[0], rep.Runs[1]
	smalls := []*scaleRun{small}
	div := "1/" + fmt.Sprint(rep.Divisor)
	labels := []string{div, "full"}
	if len(rep.Runs) > 2 {
		smalls = append(smalls, rep.Runs[2])
		labels = append(labels, div+" again")
	}
	runs := append([]*scaleRun{small, full}, smalls[1:]...)
	ratioCol := len(runs)
	if len(smalls) > 1 {
		labels = append(labels, "full ÷ "+div+" (mean)", "again ÷ first")
	} else {
		labels = append(labels, "full ÷ "+div)
	}
	b := &tableBuilder{labels: labels}
	perRun := func(f func(*scaleRun) string) []string {
		v := make([]string, len(labels))
		for i, r := range runs {
			v[i] = f(r)
		}
		return v
	}
	// cost adds a figure that must not grow with the fleet: the value of each run and the
	// ratio, which meets the target when at most targetScaleGrowth.
	cost := func(name string, f func(*scaleRun) float64, format func(float64) string, held bool) {
		base := 0.0
		for _, r := range smalls {
			base += f(r)
		}
		ratio := f(full) / (base / float64(len(smalls)))
		c := cells{values: perRun(func(r *scaleRun) string { return format(f(r)) })}
		c.values[ratioCol] = fmt.Sprintf("%.2f", ratio)
		if len(smalls) > 1 {
			c.values[ratioCol+1] = fmt.Sprintf("%.2f", f(smalls[1])/f(smalls[0]))
		}
		target := ""
		if held {
			c.verdicts = make([]string, len(labels))
			c.verdicts[ratioCol] = benchkit.Verdict(!math.IsNaN(ratio) && ratio <= targetScaleGrowth)
			target = fmt.Sprintf("ratio ≤ %.1f", targetScaleGrowth)
		}
		b.row(name, c, target)
	}
	both := func(name string, f func(*scaleRun) string) {
		b.row(name, info(cells{values: perRun(f)}), "")
	}
	// fullOnly puts v in the full size's column.
	fullOnly := func(v string) cells {
		c := make([]string, len(labels))
		c[1] = v
		return cells{values: c}
	}
	ms := func(v float64) string { return fmt.Sprintf("%.2f ms", v) }
	dur := func(v float64) string { return benchkit.Dur(time.Duration(v)) }
	bytes := func(v float64) string { return benchkit.Bytes(v) }

	again := ""
	if len(smalls) > 1 {
		again = ", before and after it"
	}
	b.sectionRow(fmt.Sprintf("scale: %s, against 1/%d of it (%s)%s, each on a fresh control plane", full.Load, rep.Divisor, small.Load, again))
	cost("machine speed, just before the propagation: SHA-256 of 64 MiB", func(r *scaleRun) float64 { return float64(r.Speed.CPU) }, dur, false)
	cost("  2M dependent reads over 128 MiB", func(r *scaleRun) float64 { return float64(r.Speed.Memory) }, dur, false)
	both("initial propagation: every Work exists after", func(r *scaleRun) string { return benchkit.Dur(r.Initial.Elapsed) })
	both("  Works/s (10–90% of Works)", func(r *scaleRun) string {
		return rate(r.Initial.WorksPerSec) + " (" + rate(float64(r.Initial.SteadyWorksPerSec)) + ")"
	})
	cost("time per Work of the initial propagation", func(r *scaleRun) float64 { return 1000 * r.Initial.Elapsed.Seconds() / float64(r.Initial.Seen) }, ms, true)
	both("  the wide binding's last Work, after", func(r *scaleRun) string {
		return fmt.Sprintf("%s (%d clusters)", benchkit.Dur(r.WideElapsed), r.Load.WideClusters)
	})
	cost("idle fleet: one binding's change → its last Work, p50", func(r *scaleRun) float64 { return float64(r.IdleP50) }, dur, true)
	cost("idle fleet: the same, p99", func(r *scaleRun) float64 { return float64(r.IdleP99) }, dur, true)
	cost("  the API server's own time per Work update in those changes, p50 (audit log)", func(r *scaleRun) float64 { return float64(r.IdleWorkUpdateP50) }, dur, false)
	both("  changes timed", func(r *scaleRun) string { return fmt.Sprint(len(r.Idle)) })
	cost("controller CPU per sync", func(r *scaleRun) float64 { return 1000 * r.CPUSeconds / r.Syncs }, ms, true)
	both("  syncs per binding", func(r *scaleRun) string { return fmt.Sprintf("%.2f", r.Syncs/float64(r.Load.Bindings+1)) })
	cost("controller CPU per Work", func(r *scaleRun) float64 { return 1000 * perWork(r.CPUSeconds, r.Load) }, ms, true)
	cost("controller RSS per cached Work, all in", func(r *scaleRun) float64 { return perWork(float64(r.Memory.RSS), r.Load) }, bytes, true)
	b.row("  RSS per Work at full size", fullOnly(benchkit.Bytes(perWork(float64(full.Memory.RSS), full.Load))),
		fmt.Sprintf("< %s", benchkit.Bytes(targetRSSPerWork)))
	b.figures[len(b.figures)-1].Result = map[string]string{"full": benchkit.Verdict(perWork(float64(full.Memory.RSS), full.Load) < targetRSSPerWork)}
	cost("controller Go heap (live) per cached Work, all in", func(r *scaleRun) float64 { return perWork(float64(r.Memory.HeapLive), r.Load) }, bytes, true)
	both("  RSS / heap live / heap in use", func(r *scaleRun) string {
		return benchkit.Bytes(r.Memory.RSS) + " / " + benchkit.Bytes(r.Memory.HeapLive) + " / " + benchkit.Bytes(r.Memory.HeapInuse)
	})

	b.sectionRow("restart: a fresh process on every Work current, from process start")
	both("first sync (caches listed, workers started)", func(r *scaleRun) string { return benchkit.Dur(r.Restart.FirstSync) })
	cost("steady (every binding reconciled, then quiet), per Work", func(r *scaleRun) float64 { return 1000 * perWork(r.Restart.Steady.Seconds(), r.Load) }, ms, true)
	both("  steady after (median of the restarts; each)", func(r *scaleRun) string {
		each := make([]string, len(r.Restarts))
		for i, x := range r.Restarts {
			each[i] = benchkit.Dur(x.Steady)
		}
		return benchkit.Dur(r.Restart.Steady) + " (" + strings.Join(each, ", ") + ")"
	})
	both("  the plane came back to idle before each restart after", func(r *scaleRun) string {
		each := make([]string, len(r.Restarts))
		for i, x := range r.Restarts {
			each[i] = benchkit.Dur(x.PlaneSettled)
		}
		return strings.Join(each, ", ")
	})
	both("Work writes / Work GETs (audit log)", func(r *scaleRun) string {
		a := r.Restart.Requests.Audit
		return fmt.Sprintf("%d / %d", a.Writes("works.work.karmada.io"), a["get works.work.karmada.io"])
	})
	b.figures[len(b.figures)-1].Target = "0 / 0 at full size"
	b.figures[len(b.figures)-1].Result = map[string]string{"full": benchkit.Verdict(
		full.Restart.Requests.Audit.Writes("works.work.karmada.io") == 0 && full.Restart.Requests.Audit["get works.work.karmada.io"] == 0)}
	both("all requests (audit log)", func(r *scaleRun) string { return fmt.Sprint(r.Restart.Requests.Audit.Total()) })
	both("  by verb", func(r *scaleRun) string { return byVerb(r.Restart.Requests.Audit) })
	both("  lists of Works (paged)", func(r *scaleRun) string { return fmt.Sprint(r.Restart.Requests.Audit["list works.work.karmada.io"]) })

	withFinalizer := "without their finalizer: the controller adds it"
	if full.Finalizer {
		withFinalizer = "with their finalizer, as Karmada's detector creates them"
	}
	b.sectionRow("requests per binding of the initial propagation (audit log), Works excluded; bindings created " + withFinalizer)
	for _, k := range scaleAuditKeys(runs...) {
		both(k, func(r *scaleRun) string {
			return fmt.Sprintf("%.3f", float64(r.Requests.Audit[k])/float64(r.Load.Bindings+1))
		})
	}
	both("Work requests per Work", func(r *scaleRun) string {
		return fmt.Sprintf("%.3f", perWork(float64(r.Requests.Audit.Match("works.work.karmada.io")), r.Load))
	})

	// Which process the cores went to says where the ceiling is: a controller that used
	// little of them cannot make the propagation much faster by using less.
	b.sectionRow("where the cores went during the initial propagation: CPU-seconds ÷ its seconds, and per Work")
	cores := func(v float64) string { return fmt.Sprintf("%.2f cores", v) }
	for _, p := range []struct {
		name string
		cpu  func(*scaleRun) float64
	}{
		{"controller", func(r *scaleRun) float64 { return r.CPUSeconds }},
		{"kube-apiserver", func(r *scaleRun) float64 { return r.APIServerCPUSeconds }},
		{"etcd", func(r *scaleRun) float64 { return r.EtcdCPUSeconds }},
	} {
		both(p.name, func(r *scaleRun) string { return cores(p.cpu(r) / r.Initial.Elapsed.Seconds()) })
		cost("  "+p.name+" CPU per Work", func(r *scaleRun) float64 { return 1000 * perWork(p.cpu(r), r.Load) }, ms, false)
	}

	if !slices.ContainsFunc(runs, func(r *scaleRun) bool { return r.Ceiling == nil }) {
		b.sectionRow("control plane: kube-apiserver + etcd CPU per Work, the controller's load against a plain client's")
		cost("controller's load", func(r *scaleRun) float64 { return 1000 * perWork(r.PlaneCPUSeconds, r.Load) }, ms, true)
		cost("plain client creating the narrow Works", func(r *scaleRun) float64 {
			return 1000 * r.Ceiling.PlaneCPUSeconds / float64(r.Ceiling.Seen)
		}, ms, false)
		cost("controller's ÷ plain client's", func(r *scaleRun) float64 {
			return perWork(r.PlaneCPUSeconds, r.Load) / (r.Ceiling.PlaneCPUSeconds / float64(r.Ceiling.Seen))
		}, func(v float64) string { return fmt.Sprintf("%.2f", v) }, false)
		both("plain client Works/s", func(r *scaleRun) string { return rate(r.Ceiling.WorksPerSec) })
		// The plain client's pace at the same size is the plane's own: what the
		// propagation's time per Work grows by beyond it is the controller's share.
		cost("time per Work, the controller's ÷ the plain client's", func(r *scaleRun) float64 {
			return (r.Initial.Elapsed.Seconds() / float64(r.Initial.Seen)) / (r.Ceiling.Elapsed.Seconds() / float64(r.Ceiling.Seen))
		}, func(v float64) string { return fmt.Sprintf("%.2f", v) }, false)
	}
	if u := rep.Urgent; u != nil {
		b.sectionRow(fmt.Sprintf("fresh changes during the full size's restart: %d, one every %s, alternately a new and a changed binding", len(u.Changes), u.Interval))
		b.row("first sync after process start (no change can sync before)", fullOnly(benchkit.Dur(u.FirstSync)), "")
		b.row("latency p50 / p99 / max", fullOnly(benchkit.Dur(u.P50)+" / "+benchkit.Dur(u.P99)+" / "+benchkit.Dur(u.Max)), "p99 ≤ 1s")
		b.figures[len(b.figures)-1].Result = map[string]string{"full": benchkit.Verdict(u.Error == "" && u.P99 <= time.Second)}
		b.row("re-verification took", fullOnly(benchkit.Dur(u.Backlog)), "")
	}
	rep.Figures = b.figures
	return figureTable(b.labels, rep.Figures)
}

// byVerb sums a by "verb resource" in verbs, discovery apart.
func byVerb(a benchkit.AuditCounts) string {
	sums := map[string]int{}
	for k, n := range a {
		verb, rest, _ := strings.Cut(k, " ")
		if strings.HasPrefix(rest, "(non-resource") {
			verb = "discovery"
		}
		sums[verb] += n
	}
	parts := make([]string, 0, len(sums))
	for _, v := range slices.Sorted(maps.Keys(sums)) {
		parts = append(parts, fmt.Sprintf("%s %d", v, sums[v]))
	}
	return strings.Join(parts, ", ")
}

// scaleAuditKeys are the non-Work request kinds either size made, sorted.
func scaleAuditKeys(runs ...*scaleRun) []string {
	seen := map[string]bool{}
	var keys []string
	for _, r := range runs {
		for _, k := range r.Requests.Audit.Keys() {
			// Watches and lists are the controller's, not any binding's.
			perBinding := !strings.HasPrefix(k, "watch ") && !strings.HasPrefix(k, "list ")
			if perBinding && !strings.Contains(k, "works.work.karmada.io") && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

func scaleNotes(rep *scaleReport) []string {
	env := "GOGC and GOMEMLIMIT unset (Go's defaults: GOGC=100, no limit)"
	if e := rep.Runs[0].Env; len(e) > 0 {
		env = "controller environment: " + strings.Join(e, " ")
	}
	return []string{
		"every run on a fresh control plane (kube-apiserver + etcd from bin/k8s), one after the other in one invocation: the small size, the full size and (--scale-small-again) the small size again; the ratio is full ÷ small (the mean of both small runs), so a figure that does not grow with the fleet is near 1, and again ÷ first is how much the same small run moved on this machine in the minutes between",
		"speed probe: on the idle plane just before the initial propagation, the bench process hashes 64 MiB with SHA-256 (compute, in cache) and follows 2M links of a random chain over 128 MiB (memory, every read a cache miss), each five times, median; the same work every run, so it moves only with the machine",
		"initial propagation: the wide binding and every narrow binding created at once (--creators at a time), timed from the first create to the last Work seen by one metadata watch",
		"syncs = controller_runtime_reconcile_total over the initial propagation; CPU = the controller's user+system time over it",
		"memory: read with every Work cached, after two garbage collections completed; per Work = the whole process ÷ Works (bindings, templates, caches and runtime all in); " + env,
		"idle fleet: changes made one at a time (a binding's replicas doubled), each timed from the patch sent to the last of its Works at a newer generation",
		"restart: the controller stopped, the plane left to come back to idle (kube-apiserver + etcd under 0.15 cores over 2s), and a fresh process started on the same objects; requests counted from process start by the API server's audit log; steady = every binding reconciled, then nothing for a second; --scale-restarts restarts at each size, one after the other, and the figures are those of the median one (steady time)",
		"control plane CPU: kube-apiserver + etcd user+system time over the initial propagation; the plain client creates the narrow load's rendered Works on its own fresh plane",
		"urgent: a second restart of the full size; the changes start at its first sync (when re-verification begins), one every --urgent-interval",
	}
}

// printScale prints the scenario's table and notes and writes its JSON.
func printScale(rep *scaleReport, jsonPath string) error {
	rep.Notes = scaleNotes(rep)
	return benchkit.PrintResults("scale", rep.table(), rep.Notes, rep, jsonPath)
}
