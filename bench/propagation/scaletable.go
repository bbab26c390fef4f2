// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/bench/report"
)

// scaleFigures lays out the scale scenario: a column per run and the ratio full ÷ small
// (the mean of the small runs when the small size ran again after the full one), held
// against targetScaleGrowth where the figure is a cost per Work or per sync; with two
// small runs, the last column is the second's figure ÷ the first's: the machine's drift.
type scaleFigures struct {
	report.Figures
	runs, smalls []*scaleRun // runs in column order: small, full, small again
	full         *scaleRun
}

func newScaleFigures(rep *scaleReport) *scaleFigures {
	f := &scaleFigures{full: rep.Runs[1], smalls: []*scaleRun{rep.Runs[0]}}
	div := "1/" + fmt.Sprint(rep.Divisor)
	f.Labels = []string{div, "full"}
	if len(rep.Runs) > 2 {
		f.smalls = append(f.smalls, rep.Runs[2])
		f.Labels = append(f.Labels, div+" again", "full ÷ "+div+" (mean)", "again ÷ first")
	} else {
		f.Labels = append(f.Labels, "full ÷ "+div)
	}
	f.runs = append([]*scaleRun{rep.Runs[0], f.full}, f.smalls[1:]...)
	return f
}

func (f *scaleFigures) perRun(v func(*scaleRun) string) []string {
	values := make([]string, len(f.Labels))
	for i, r := range f.runs {
		values[i] = v(r)
	}
	return values
}

// both adds a figure with a value per run and no ratio.
func (f *scaleFigures) both(name string, v func(*scaleRun) string) {
	f.Add(name, report.Cells{Values: f.perRun(v)}, "")
}

// cost adds a figure that must not grow with the fleet: each run's value and the ratio,
// which, when held, meets the target when at most targetScaleGrowth.
func (f *scaleFigures) cost(name string, v func(*scaleRun) float64, format func(float64) string, held bool) {
	base := 0.0
	for _, r := range f.smalls {
		base += v(r)
	}
	ratio, col := v(f.full)/(base/float64(len(f.smalls))), len(f.runs)
	c := report.Cells{Values: f.perRun(func(r *scaleRun) string { return format(v(r)) })}
	c.Values[col] = fmt.Sprintf("%.2f", ratio)
	if len(f.smalls) > 1 {
		c.Values[col+1] = fmt.Sprintf("%.2f", v(f.smalls[1])/v(f.smalls[0]))
	}
	target := ""
	if held {
		c.Verdicts = make([]string, len(f.Labels))
		c.Verdicts[col] = report.Verdict(!math.IsNaN(ratio) && ratio <= targetScaleGrowth)
		target = fmt.Sprintf("ratio ≤ %.1f", targetScaleGrowth)
	}
	f.Add(name, c, target)
}

// fullOnly adds a figure of the full size alone, held against target when there is one.
func (f *scaleFigures) fullOnly(name, value, target string, ok bool) {
	values := make([]string, len(f.Labels))
	values[1] = value
	f.Add(name, report.Cells{Values: values}, target)
	if target != "" {
		f.Last().Result = map[string]string{"full": report.Verdict(ok)}
	}
}

func ms(v float64) string    { return fmt.Sprintf("%.2f ms", v) }
func dur(v float64) string   { return report.Dur(time.Duration(v)) }
func ratio(v float64) string { return fmt.Sprintf("%.2f", v) }

// perWorkOf divides by the run's Works (NaN when there are none).
func perWorkOf(v float64, r *scaleRun) float64 {
	if r.Load.works() == 0 {
		return math.NaN()
	}
	return v / float64(r.Load.works())
}

func (f *scaleFigures) build(rep *scaleReport) {
	small, full := rep.Runs[0], f.full
	again := ""
	if len(f.smalls) > 1 {
		again = ", before and after it"
	}
	f.Section(fmt.Sprintf("scale: %s, against 1/%d of it (%s)%s, each on a fresh control plane", full.Load, rep.Divisor, small.Load, again))
	f.cost("machine speed, just before the propagation: SHA-256 of 64 MiB", func(r *scaleRun) float64 { return float64(r.Speed.CPU) }, dur, false)
	f.cost("  2M dependent reads over 128 MiB", func(r *scaleRun) float64 { return float64(r.Speed.Memory) }, dur, false)
	f.both("initial propagation: every Work exists after", func(r *scaleRun) string { return report.Dur(r.Initial.Elapsed) })
	f.both("  Works/s (10–90% of Works)", func(r *scaleRun) string {
		return report.Rate(r.Initial.WorksPerSec) + " (" + report.Rate(float64(r.Initial.SteadyWorksPerSec)) + ")"
	})
	f.cost("time per Work of the initial propagation", func(r *scaleRun) float64 { return 1000 * r.Initial.Elapsed.Seconds() / float64(r.Initial.Seen) }, ms, true)
	f.both("  the wide binding's last Work, after", func(r *scaleRun) string {
		return fmt.Sprintf("%s (%d clusters)", report.Dur(r.WideElapsed), r.Load.WideClusters)
	})
	f.cost("idle fleet: one binding's change → its last Work, p50", func(r *scaleRun) float64 { return float64(r.IdleP50) }, dur, true)
	f.cost("idle fleet: the same, p99", func(r *scaleRun) float64 { return float64(r.IdleP99) }, dur, true)
	f.cost("  the API server's own time per Work update in those changes, p50 (audit log)", func(r *scaleRun) float64 { return float64(r.IdleWorkUpdateP50) }, dur, false)
	f.both("  changes timed", func(r *scaleRun) string { return fmt.Sprint(len(r.Idle)) })
	f.cost("controller CPU per sync", func(r *scaleRun) float64 { return 1000 * r.CPUSeconds / r.Syncs }, ms, true)
	f.both("  syncs per binding", func(r *scaleRun) string { return fmt.Sprintf("%.2f", r.Syncs/float64(r.Load.Bindings+1)) })
	f.cost("controller CPU per Work", func(r *scaleRun) float64 { return 1000 * perWorkOf(r.CPUSeconds, r) }, ms, true)
	rss := func(r *scaleRun) float64 { return perWorkOf(float64(r.Memory.RSS), r) }
	f.cost("controller RSS per cached Work, all in", rss, report.Bytes[float64], true)
	f.fullOnly("  RSS per Work at full size", report.Bytes(rss(full)), fmt.Sprintf("< %s", report.Bytes(targetRSSPerWork)), rss(full) < targetRSSPerWork)
	f.cost("controller Go heap (live) per cached Work, all in", func(r *scaleRun) float64 { return perWorkOf(float64(r.Memory.HeapLive), r) }, report.Bytes[float64], true)
	f.both("  RSS / heap live / heap in use", func(r *scaleRun) string {
		return report.Bytes(r.Memory.RSS) + " / " + report.Bytes(r.Memory.HeapLive) + " / " + report.Bytes(r.Memory.HeapInuse)
	})
	f.restartSection(full)
	f.requestSection(full)
	f.coreSection()
	if u := rep.Urgent; u != nil {
		f.Section(fmt.Sprintf("fresh changes during the full size's restart: %d, one every %s, alternately a new and a changed binding", len(u.Changes), u.Interval))
		f.fullOnly("first sync after process start (no change can sync before)", report.Dur(u.FirstSync), "", false)
		f.fullOnly("latency p50 / p99 / max", report.Dur(u.P50)+" / "+report.Dur(u.P99)+" / "+report.Dur(u.Max), "p99 ≤ 1s", u.Error == "" && u.P99 <= time.Second)
		f.fullOnly("re-verification took", report.Dur(u.Backlog), "", false)
	}
}

func (f *scaleFigures) restartSection(full *scaleRun) {
	f.Section("restart: a fresh process on every Work current, from process start")
	each := func(r *scaleRun, v func(*restartResult) time.Duration) string {
		parts := make([]string, len(r.Restarts))
		for i, x := range r.Restarts {
			parts[i] = report.Dur(v(x))
		}
		return strings.Join(parts, ", ")
	}
	f.both("first sync (caches listed, workers started)", func(r *scaleRun) string { return report.Dur(r.Restart.FirstSync) })
	f.cost("steady (every binding reconciled, then quiet), per Work", func(r *scaleRun) float64 { return 1000 * perWorkOf(r.Restart.Steady.Seconds(), r) }, ms, true)
	f.both("  steady after (median of the restarts; each)", func(r *scaleRun) string {
		return report.Dur(r.Restart.Steady) + " (" + each(r, func(x *restartResult) time.Duration { return x.Steady }) + ")"
	})
	f.both("  the plane came back to idle before each restart after", func(r *scaleRun) string {
		return each(r, func(x *restartResult) time.Duration { return x.PlaneSettled })
	})
	workWrites := func(r *scaleRun) int { return r.Restart.Requests.Audit.Writes("works.work.karmada.io") }
	workGets := func(r *scaleRun) int { return r.Restart.Requests.Audit["get works.work.karmada.io"] }
	f.both("Work writes / Work GETs (audit log)", func(r *scaleRun) string { return fmt.Sprintf("%d / %d", workWrites(r), workGets(r)) })
	f.Last().Target = "0 / 0 at full size"
	f.Last().Result = map[string]string{"full": report.Verdict(workWrites(full) == 0 && workGets(full) == 0)}
	f.both("all requests (audit log)", func(r *scaleRun) string { return fmt.Sprint(r.Restart.Requests.Audit.Total()) })
	f.both("  by verb", func(r *scaleRun) string { return r.Restart.Requests.Audit.ByVerb() })
	f.both("  lists of Works (paged)", func(r *scaleRun) string { return fmt.Sprint(r.Restart.Requests.Audit["list works.work.karmada.io"]) })
}

func (f *scaleFigures) requestSection(full *scaleRun) {
	withFinalizer := "without their finalizer: the controller adds it"
	if full.Finalizer {
		withFinalizer = "with their finalizer, as Karmada's detector creates them"
	}
	f.Section("requests per binding of the initial propagation (audit log), Works excluded; bindings created " + withFinalizer)
	var keys []string
	for _, r := range f.runs {
		for _, k := range r.Requests.Audit.Keys() {
			// Watches and lists are the controller's, not any binding's.
			perBinding := !strings.HasPrefix(k, "watch ") && !strings.HasPrefix(k, "list ")
			if perBinding && !strings.Contains(k, "works.work.karmada.io") && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	for _, k := range keys {
		f.both(k, func(r *scaleRun) string {
			return fmt.Sprintf("%.3f", float64(r.Requests.Audit[k])/float64(r.Load.Bindings+1))
		})
	}
	f.both("Work requests per Work", func(r *scaleRun) string {
		return fmt.Sprintf("%.3f", perWorkOf(float64(r.Requests.Audit.Match("works.work.karmada.io")), r))
	})
}

// coreSection says where the cores went: a controller that used little of them cannot
// make the propagation much faster by using less. A plain client's pace at the same size
// is the plane's own: what the propagation's time per Work grows by beyond it is the
// controller's share.
func (f *scaleFigures) coreSection() {
	f.Section("where the cores went during the initial propagation: CPU-seconds ÷ its seconds, and per Work")
	for _, p := range []struct {
		name string
		cpu  func(*scaleRun) float64
	}{
		{"controller", func(r *scaleRun) float64 { return r.CPUSeconds }},
		{"kube-apiserver", func(r *scaleRun) float64 { return r.APIServerCPUSeconds }},
		{"etcd", func(r *scaleRun) float64 { return r.EtcdCPUSeconds }},
	} {
		f.both(p.name, func(r *scaleRun) string { return fmt.Sprintf("%.2f cores", p.cpu(r)/r.Initial.Elapsed.Seconds()) })
		f.cost("  "+p.name+" CPU per Work", func(r *scaleRun) float64 { return 1000 * perWorkOf(p.cpu(r), r) }, ms, false)
	}
	if slices.ContainsFunc(f.runs, func(r *scaleRun) bool { return r.Ceiling == nil }) {
		return
	}
	ceilingPerWork := func(r *scaleRun) float64 { return r.Ceiling.PlaneCPUSeconds / float64(r.Ceiling.Seen) }
	f.Section("control plane: kube-apiserver + etcd CPU per Work, the controller's load against a plain client's")
	f.cost("controller's load", func(r *scaleRun) float64 { return 1000 * perWorkOf(r.PlaneCPUSeconds, r) }, ms, true)
	f.cost("plain client creating the narrow Works", func(r *scaleRun) float64 { return 1000 * ceilingPerWork(r) }, ms, false)
	f.cost("controller's ÷ plain client's", func(r *scaleRun) float64 { return perWorkOf(r.PlaneCPUSeconds, r) / ceilingPerWork(r) }, ratio, false)
	f.both("plain client Works/s", func(r *scaleRun) string { return report.Rate(r.Ceiling.WorksPerSec) })
	f.cost("time per Work, the controller's ÷ the plain client's", func(r *scaleRun) float64 {
		return (r.Initial.Elapsed.Seconds() / float64(r.Initial.Seen)) / (r.Ceiling.Elapsed.Seconds() / float64(r.Ceiling.Seen))
	}, ratio, false)
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
	f := newScaleFigures(rep)
	f.build(rep)
	rep.Figures, rep.Notes = f.List, scaleNotes(rep)
	return report.Print("scale", f.Table(), rep.Notes, rep, jsonPath)
}
