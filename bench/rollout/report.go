// SPDX-License-Identifier: Apache-2.0

package rollout

import (
	"fmt"
	"os"
	"time"

	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
)

// run is one run's controller cost, from just before the change until it is quiet.
type run struct {
	Label      string  `json:"label"`
	Wall       float64 `json:"wallSeconds"`
	CPU        float64 `json:"cpuSeconds"`
	Syncs      float64 `json:"syncs"`
	StageSum   float64 `json:"stageDurationSumSeconds"`
	StageCount float64 `json:"stageDurations"`
}

type result struct {
	*session.Session
	Runs       []run           `json:"runs"`
	Ratio      report.Num      `json:"cpuPerSyncRatio"`
	StageTimes []stageTimes    `json:"stageTimes"`
	Figures    []report.Figure `json:"figures"`
	Notes      []string        `json:"notes"`
}

// report prints the stages' table and the runs' figures, and writes both as JSON.
func (b *bench) report(a, r run) error {
	rep := &result{Session: b.s, Runs: []run{a, r}, StageTimes: b.stageTimes(), Ratio: report.Num(r.CPU / r.Syncs / (a.CPU / a.Syncs))}
	rep.Machine.Finish()
	t := &report.Table{Header: []string{"stage", "clusters", "timed", "stage−soak p50", "p99", "controller p50", "p99", "advance p50", "p99", "execution p50", "p99"}}
	for _, s := range rep.StageTimes {
		row := []string{s.Stage, fmt.Sprint(s.Clusters), fmt.Sprint(s.Timed)}
		for _, v := range s.Seconds {
			row = append(row, report.Dur(seconds(float64(v[0]))), report.Dur(seconds(float64(v[1]))))
		}
		t.Add(row...)
	}
	t.Add("metric", "", fmt.Sprint(r.StageCount), report.Dur(seconds(r.StageSum/r.StageCount)-b.soak)+" mean")
	fmt.Println()
	t.Print(os.Stdout)
	n, f := float64(b.bindings), &report.Figures{Labels: []string{"no policy", "rollout"}}
	both := func(v func(run) string) report.Cells { return report.Cells{Values: []string{v(a), v(r)}} }
	f.Section("controller CPU (user+system, /proc), from the change until quiet")
	f.Add("CPU", both(func(x run) string { return fmt.Sprintf("%.2fs", x.CPU) }), "")
	f.Add("syncs (controller_runtime_reconcile_total)", both(func(x run) string { return fmt.Sprint(x.Syncs) }), "")
	perSync := both(func(x run) string { return ms(x.CPU / x.Syncs) })
	perSync.Values[1] += fmt.Sprintf(" (%.2f×)", rep.Ratio)
	perSync.Verdicts = []string{"", report.Verdict(rep.Ratio <= 1.1)}
	f.Add("CPU per sync", perSync, "≤ 1.1× no policy")
	f.Add("CPU per binding (its change / its rollout)", both(func(x run) string { return ms(x.CPU / n) }), "")
	f.Add("syncs per binding", both(func(x run) string { return fmt.Sprintf("%.1f", x.Syncs/n) }), "")
	f.Add("until every Work / rollout done", both(func(x run) string { return report.Dur(seconds(x.Wall)) }), "")
	rep.Figures = f.List
	rep.Notes = []string{
		fmt.Sprintf("one plane, one controller: run A, the policy adopts every binding, run B; --rollout-health-poll-interval=%s, minSuccessTime %s, the simulator writes status every %s",
			b.poll, b.soak, b.simInterval),
		"stage−soak: a stage's time less minSuccessTime, from the stage before it done (the first: the template's change) until the controller acts on it being done (the next stage's first Work written; after the last: the rollout seen Complete)",
		"controller: its own share of that, writing the stage's Works (start → last written) + advance (last cluster reported Healthy + minSuccessTime → acted on); execution: last Work written → last cluster reported Healthy",
		"advance includes up to a poll interval: Work status is not watched, so the soak starts when a poll finds every cluster healthy",
		"metric: binding_controller_rollout_stage_duration_seconds sum/count over run B less minSuccessTime (stage start → done, as the controller decides it)",
	}
	return report.Print("rollout", f.Table(), rep.Notes, rep, b.common.JSONPath)
}

func ms(seconds float64) string { return fmt.Sprintf("%.2fms", seconds*1000) }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
