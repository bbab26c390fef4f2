// SPDX-License-Identifier: Apache-2.0

// Package recovery is the recovery subcommand (make bench-recovery): how long after a
// disconnected cluster's old Work is finally gone does the cluster get its new Work,
// with the Work watch and with the retry backoff alone.
package recovery

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/internal/testenv/controlplane"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// mode is one controller configuration the matrix runs under.
type mode struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
}

// Sample is one measured recovery.
type Sample struct {
	Template string `json:"template"`
	// ReleaseMs: connect → the old Work gone from the API (the simulator's polling).
	ReleaseMs float64 `json:"releaseMs"`
	// LatencyMs: old Work gone → the blocked cluster's new Work exists (both as one
	// watch saw them).
	LatencyMs float64 `json:"latencyMs"`
	TimedOut  bool    `json:"timedOut,omitempty"`
	// Skipped: not run, the mode had reached --max-timeouts.
	Skipped bool   `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
}

type cell struct {
	Mode     string     `json:"mode"`
	Block    string     `json:"block"`
	Samples  []Sample   `json:"samples"`
	P50Ms    report.Num `json:"p50Ms"`
	P99Ms    report.Num `json:"p99Ms"`
	Timeouts int        `json:"timeouts"`
	Errors   int        `json:"errors"`
	Skipped  int        `json:"skipped"`
	// WaitCapMs is how long a sample waited for the new Work before timing out.
	WaitCapMs float64 `json:"waitCapMs"`
}

type recoveryReport struct {
	*session.Session
	Modes    []mode    `json:"modes"`
	Cells    []cell    `json:"cells"`
	Finished time.Time `json:"finished"`
	Notes    []string  `json:"notes"`
}

type options struct {
	common      session.Common
	blocks      []time.Duration
	samples     int
	modes       []mode
	timeout     time.Duration
	maxTimeouts int
	stepTimeout time.Duration
	simInterval time.Duration
}

func parseOptions(args []string) (*options, *flag.FlagSet, error) {
	fs := flag.NewFlagSet("recovery", flag.ContinueOnError)
	o := &options{}
	o.common.Register(fs, "recovery")
	durations := fs.String("durations", "2s,10s,30s", "comma-separated block durations: how long member1 stays disconnected after the binding is recreated (e.g. 60s,10m)")
	fs.IntVar(&o.samples, "samples", 3, "samples per block duration and mode")
	modes := fs.String("modes", "watch=--watch-works=true;backoff=--watch-works=false",
		"semicolon-separated name=manager-flags; each mode gets a fresh manager process and runs the whole matrix")
	fs.DurationVar(&o.timeout, "timeout", 0, "cap on waiting for member1's new Work after its old Work is gone (0: 4 × the block duration + 2m, at most 20m — a Karmada-style backoff retries within about the block duration)")
	fs.IntVar(&o.maxTimeouts, "max-timeouts", 1, "after this many timed-out samples a mode skips its remaining samples (0: never); a controller that does not recover at all costs one timeout, not one per sample")
	fs.DurationVar(&o.stepTimeout, "step-timeout", 2*time.Minute, "cap on every other wait")
	fs.DurationVar(&o.simInterval, "sim-interval", 50*time.Millisecond, "how often the execution simulator releases deleted Works of connected clusters")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go -C bench run . recovery [flags]\n\n"+
			"For each block duration and sample: Deployment + binding to member1 and member2, both Works; member1\n"+
			"disconnected; binding deleted (member1's Work stays terminating); binding recreated with a new\n"+
			"permanent-id; after the block duration member1 is connected, the simulator releases the old Work, and\n"+
			"the latency from the old Work gone to member1's new Work is measured. Every mode runs the whole\n"+
			"matrix with its own fresh manager process, in this one invocation.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := session.Parse(fs, args); err != nil {
		return nil, nil, err
	}
	for _, d := range session.SplitList(*durations) {
		v, err := time.ParseDuration(d)
		if err != nil || v < 0 {
			return nil, nil, fmt.Errorf("--durations: bad duration %q", d)
		}
		o.blocks = append(o.blocks, v)
	}
	var err error
	if o.modes, err = parseModes(*modes); err != nil {
		return nil, nil, err
	}
	if len(o.blocks) == 0 || o.samples < 1 || len(o.modes) == 0 {
		return nil, nil, fmt.Errorf("need at least one duration, one sample and one mode")
	}
	return o, fs, nil
}

func parseModes(s string) ([]mode, error) {
	var modes []mode
	for _, part := range strings.Split(s, ";") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, args, _ := strings.Cut(part, "=")
		if name = strings.TrimSpace(name); name == "" {
			return nil, fmt.Errorf("--modes: %q has no name", part)
		}
		modes = append(modes, mode{Name: name, Args: strings.Fields(args)})
	}
	return modes, nil
}

// Run runs the recovery subcommand with its flags, args.
func Run(ctx context.Context, args []string) error {
	o, fs, err := parseOptions(args)
	if err != nil {
		return err
	}
	s, err := o.common.Start(ctx, fs, "recovery")
	defer s.Finish()
	if err != nil {
		return err
	}
	rep := &recoveryReport{Session: s, Modes: o.modes, Notes: []string{
		"latency = member1's new Work first seen − its old Work's deletion seen, both through one metadata watch of the Works",
		fmt.Sprintf("p99 is the nearest-rank percentile: with fewer than 100 samples (here %d per cell) it is the maximum", o.samples),
		"timed-out and failed samples are left out of the percentiles and counted under timeouts and errors (the error text is in the sample); after --max-timeouts a mode's remaining samples are skipped",
	}}
	r, stop, err := startRig(ctx, s, o)
	if err != nil {
		return err
	}
	defer stop()
	for mi, m := range o.modes {
		if err := r.runMode(ctx, rep, mi, m); err != nil {
			return err
		}
	}
	rep.Finished = time.Now()
	rep.Machine.Finish()
	fmt.Println()
	recoveryTable(rep, o).Print(os.Stdout)
	fmt.Printf("\np99 with %d samples per cell is the maximum (nearest rank). load average at end: %s\n", o.samples, rep.Machine.LoadAvgEnd)
	path, err := report.WriteJSON(o.common.JSONPath, rep)
	if err != nil {
		return err
	}
	fmt.Printf("results: %s\n", path)
	return nil
}

// rig is the one control plane every mode's samples run on, with member1 and member2
// joined, a watch timing every Work and the execution simulator releasing the Works of
// connected members.
type rig struct {
	*Sampler
	o          *options
	s          *session.Session
	kubeconfig string
}

func startRig(ctx context.Context, s *session.Session, o *options) (*rig, func(), error) {
	session.Logf("starting the control plane")
	plane, err := controlplane.Start(controlplane.Options{Dir: filepath.Join(s.Dir, "plane")})
	if err != nil {
		return nil, nil, err
	}
	r := &rig{o: o, s: s, Sampler: &Sampler{Plane: plane, Blocked: "member1", Other: "member2", StepTimeout: o.stepTimeout}}
	simCtx, stopSim := context.WithCancel(ctx)
	stop := func() {
		stopSim()
		_ = plane.Stop()
	}
	if _, r.kubeconfig, err = plane.AddUser(audit.ControllerUser, -1, 0); err == nil {
		err = plane.JoinMembers(ctx, []string{r.Blocked, r.Other})
	}
	if err == nil {
		r.Tracker, err = localplane.StartWorkTracker(ctx, plane.Metadata)
	}
	if err != nil {
		stop()
		return nil, nil, err
	}
	r.Sim = executionsim.New(plane.Client, o.simInterval)
	go r.Sim.Run(simCtx)
	return r, stop, nil
}

// runMode runs the whole matrix with a fresh controller process of mode m.
func (r *rig) runMode(ctx context.Context, rep *recoveryReport, mi int, m mode) error {
	spec := controller.Spec{Label: m.Name, Binary: r.s.Binary, Args: append(r.o.common.ManagerArgs(), m.Args...)}
	session.Logf("mode %s: starting %s %s", m.Name, filepath.Base(spec.Binary), strings.Join(spec.Args, " "))
	ctl, err := controller.Start(ctx, spec, r.kubeconfig, filepath.Join(r.s.Dir, fmt.Sprintf("controller-%s.log", m.Name)))
	if err != nil {
		return err
	}
	defer func() {
		if err := ctl.Stop(); err != nil {
			session.Logf("mode %s: %v", m.Name, err)
		}
	}()
	ns := fmt.Sprintf("rec-%d-%s", mi, session.Sanitize(m.Name))
	if err := r.Plane.CreateNamespaces(ctx, []string{ns}); err != nil {
		return err
	}
	timeouts := 0
	for bi, block := range r.o.blocks {
		c, err := r.runCell(ctx, ctl, ns, bi, block, &timeouts)
		if err != nil {
			return err
		}
		rep.Cells = append(rep.Cells, c)
	}
	return nil
}

// runCell takes the samples of one block duration; timeouts counts the mode's timeouts
// across its cells.
func (r *rig) runCell(ctx context.Context, ctl *controller.Controller, ns string, bi int, block time.Duration, timeouts *int) (cell, error) {
	name := ctl.Spec.Label
	c := cell{Mode: name, Block: block.String()}
	r.Timeout = r.o.timeout
	if r.Timeout <= 0 {
		r.Timeout = DefaultTimeout(block)
	}
	skipping := func() bool { return r.o.maxTimeouts > 0 && *timeouts >= r.o.maxTimeouts }
	var latencies []float64
	for si := 0; si < r.o.samples; si++ {
		if skipping() {
			c.Skipped++
			c.Samples = append(c.Samples, Sample{Skipped: true})
			continue
		}
		smp := r.Sample(ctx, ctl.Alive, ns, fmt.Sprintf("app-b%d-s%d", bi, si), block)
		if ctx.Err() != nil {
			return c, ctx.Err()
		}
		switch {
		case smp.Error != "":
			c.Errors++
			session.Logf("  %s block=%s #%d: ERROR %s", name, block, si+1, smp.Error)
		case smp.TimedOut:
			c.Timeouts++
			*timeouts++
			session.Logf("  %s block=%s #%d: TIMEOUT: no new Work within %s of the old one going", name, block, si+1, r.Timeout)
			if skipping() {
				session.Logf("  %s: %d timeout(s): skipping the mode's remaining samples (--max-timeouts)", name, *timeouts)
			}
		default:
			latencies = append(latencies, smp.LatencyMs)
			session.Logf("  %s block=%s #%d: old Work gone %s after connect; new Work %s later",
				name, block, si+1, report.Dur(msDur(smp.ReleaseMs)), report.Dur(msDur(smp.LatencyMs)))
		}
		c.Samples = append(c.Samples, smp)
		if err := ctl.Alive(); err != nil {
			return c, err
		}
	}
	c.WaitCapMs = ms(r.Timeout)
	c.P50Ms = report.Num(report.Percentile(latencies, 50))
	c.P99Ms = report.Num(report.Percentile(latencies, 99))
	return c, nil
}

// recoveryTable has a row per block duration: each mode's p50 and p99, each later mode's
// ratio to the first, and the timeouts and errors.
func recoveryTable(rep *recoveryReport, o *options) *report.Table {
	modes := o.modes
	t := &report.Table{Header: []string{"block", "n"}}
	for _, m := range modes {
		t.Header = append(t.Header, m.Name+" p50", m.Name+" p99")
	}
	for _, m := range modes[1:] {
		t.Header = append(t.Header, m.Name+"÷"+modes[0].Name+" p50", "p99")
	}
	t.Header = append(t.Header, "timeouts", "errors")
	cellOf := func(mode string, block time.Duration) *cell {
		for i := range rep.Cells {
			if rep.Cells[i].Mode == mode && rep.Cells[i].Block == block.String() {
				return &rep.Cells[i]
			}
		}
		return nil
	}
	for _, b := range o.blocks {
		row := []string{b.String(), fmt.Sprint(o.samples)}
		timeouts, errs := []string{}, []string{}
		for _, m := range modes {
			c := cellOf(m.Name, b)
			row = append(row, fmtMs(float64(c.P50Ms)), fmtMs(float64(c.P99Ms)))
			if c.Timeouts > 0 || c.Skipped > 0 {
				t := fmt.Sprintf("%s:%d (cap %s)", m.Name, c.Timeouts, report.Dur(msDur(c.WaitCapMs)))
				if c.Skipped > 0 {
					t += fmt.Sprintf(" +%d skipped", c.Skipped)
				}
				timeouts = append(timeouts, t)
			}
			if c.Errors > 0 {
				errs = append(errs, fmt.Sprintf("%s:%d", m.Name, c.Errors))
			}
		}
		base := cellOf(modes[0].Name, b)
		for _, m := range modes[1:] {
			c := cellOf(m.Name, b)
			row = append(row, ratio(float64(c.P50Ms), float64(base.P50Ms)), ratio(float64(c.P99Ms), float64(base.P99Ms)))
		}
		t.Add(append(row, orZero(timeouts), orZero(errs))...)
	}
	return t
}

func orZero(parts []string) string {
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " ")
}

func fmtMs(v float64) string {
	if v != v { // NaN: no sample
		return "n/a"
	}
	return report.Dur(msDur(v))
}

func ratio(a, b float64) string {
	if a != a || b != b || b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f×", a/b)
}

// DefaultTimeout is how long a sample blocked for block waits for the new Work: a
// Karmada-style backoff retries within about the block duration.
func DefaultTimeout(block time.Duration) time.Duration {
	return min(4*block+2*time.Minute, 20*time.Minute)
}

func msDur(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
