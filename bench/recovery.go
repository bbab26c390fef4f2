// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/benchkit"
	"github.com/binding-controller/binding-controller/internal/testenv/controlplane"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// recoveryMode is one controller configuration the matrix runs under.
type recoveryMode struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
	// Command is set for the --vs mode.
	Command string `json:"command,omitempty"`
}

// recoverySample is one measured recovery.
type recoverySample struct {
	Template string `json:"template"`
	// ReleaseMs: connect → the old Work gone from the API (the simulator's polling).
	ReleaseMs float64 `json:"releaseMs"`
	// LatencyMs: old Work gone → member1's new Work exists (both as one watch saw them).
	LatencyMs float64 `json:"latencyMs"`
	TimedOut  bool    `json:"timedOut,omitempty"`
	// Skipped: not run, the mode had reached --max-timeouts.
	Skipped bool   `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
}

type recoveryCell struct {
	Mode     string           `json:"mode"`
	Block    string           `json:"block"`
	Samples  []recoverySample `json:"samples"`
	P50Ms    benchkit.Num     `json:"p50Ms"`
	P99Ms    benchkit.Num     `json:"p99Ms"`
	Timeouts int              `json:"timeouts"`
	Errors   int              `json:"errors"`
	Skipped  int              `json:"skipped"`
	// WaitCapMs is how long a sample waited for the new Work before timing out.
	WaitCapMs float64 `json:"waitCapMs"`
}

type recoveryReport struct {
	*session
	Modes    []recoveryMode `json:"modes"`
	Cells    []recoveryCell `json:"cells"`
	Finished time.Time      `json:"finished"`
	Notes    []string       `json:"notes"`
}

func runRecovery(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("recovery", flag.ContinueOnError)
	var c common
	c.register(fs, "recovery")
	durations := fs.String("durations", "2s,10s,30s", "comma-separated block durations: how long member1 stays disconnected after the binding is recreated (e.g. 60s,10m)")
	samples := fs.Int("samples", 3, "samples per block duration and mode")
	modesFlag := fs.String("modes", "watch=--watch-works=true;backoff=--watch-works=false",
		"semicolon-separated name=manager-flags; each mode gets a fresh manager process and runs the whole matrix")
	timeout := fs.Duration("timeout", 0, "cap on waiting for member1's new Work after its old Work is gone (0: 4 × the block duration + 2m, at most 20m — a Karmada-style backoff retries within about the block duration)")
	maxTimeouts := fs.Int("max-timeouts", 1, "after this many timed-out samples a mode skips its remaining samples (0: never); a controller that does not recover at all costs one timeout, not one per sample")
	stepTimeout := fs.Duration("step-timeout", 2*time.Minute, "cap on every other wait")
	simInterval := fs.Duration("sim-interval", 50*time.Millisecond, "how often the execution simulator releases deleted Works of connected clusters")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go -C bench run . recovery [flags]\n\n"+
			"For each block duration and sample: Deployment + binding to member1 and member2, both Works; member1\n"+
			"disconnected; binding deleted (member1's Work stays terminating); binding recreated with a new\n"+
			"permanent-id; after the block duration member1 is connected, the simulator releases the old Work, and\n"+
			"the latency from the old Work gone to member1's new Work is measured. Every mode runs the whole\n"+
			"matrix with its own fresh manager process, in this one invocation.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var blocks []time.Duration
	for _, d := range splitList(*durations) {
		v, err := time.ParseDuration(d)
		if err != nil || v < 0 {
			return fmt.Errorf("--durations: bad duration %q", d)
		}
		blocks = append(blocks, v)
	}
	modes, err := parseModes(*modesFlag, c.vs)
	if err != nil {
		return err
	}
	if len(blocks) == 0 || *samples < 1 || len(modes) == 0 {
		return fmt.Errorf("need at least one duration, one sample and one mode")
	}

	s, err := c.start(ctx, fs, "recovery")
	defer c.finish(s)
	if err != nil {
		return err
	}
	rep := &recoveryReport{session: s, Modes: modes}
	rep.Notes = append(rep.Notes,
		"latency = member1's new Work first seen − its old Work's deletion seen, both through one metadata watch of the Works",
		fmt.Sprintf("p99 is the nearest-rank percentile: with fewer than 100 samples (here %d per cell) it is the maximum", *samples),
		"timed-out and failed samples are left out of the percentiles and counted under timeouts and errors (the error text is in the sample); after --max-timeouts a mode's remaining samples are skipped")

	logf("starting the control plane")
	plane, err := controlplane.Start(controlplane.Options{Dir: filepath.Join(s.Dir, "plane")})
	if err != nil {
		return err
	}
	defer func() { _ = plane.Stop() }()
	_, kubeconfig, err := plane.AddUser(benchkit.ControllerUser, -1, 0)
	if err != nil {
		return err
	}
	members := []string{"member1", "member2"}
	if err := plane.JoinMembers(ctx, members); err != nil {
		return err
	}
	tracker, err := localplane.StartWorkTracker(ctx, plane.Metadata)
	if err != nil {
		return err
	}
	sim := executionsim.New(plane.Client, *simInterval)
	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	go sim.Run(simCtx)

	r := &recoveryRun{plane: plane, tracker: tracker, sim: sim, stepTimeout: *stepTimeout}
	for mi, mode := range modes {
		spec := benchkit.ControllerSpec{Label: mode.Name, Binary: s.Binary,
			Args: append(c.extraArgs(), mode.Args...), Command: mode.Command}
		logPath := filepath.Join(s.Dir, fmt.Sprintf("controller-%s.log", mode.Name))
		logf("mode %s: starting %s", mode.Name, describeSpec(spec))
		ctl, err := benchkit.StartController(ctx, spec, kubeconfig, logPath)
		if err != nil {
			return err
		}
		ns := fmt.Sprintf("rec-%d-%s", mi, sanitize(mode.Name))
		if err := plane.CreateNamespaces(ctx, []string{ns}); err != nil {
			_ = ctl.Stop()
			return err
		}
		modeTimeouts := 0
		for bi, block := range blocks {
			cell := recoveryCell{Mode: mode.Name, Block: block.String()}
			r.timeout = waitCap(*timeout, block)
			var latencies []float64
			for si := 0; si < *samples; si++ {
				if *maxTimeouts > 0 && modeTimeouts >= *maxTimeouts {
					cell.Skipped++
					cell.Samples = append(cell.Samples, recoverySample{Skipped: true})
					continue
				}
				name := fmt.Sprintf("app-b%d-s%d", bi, si)
				sample := r.sample(ctx, ctl, ns, name, block)
				if ctx.Err() != nil {
					_ = ctl.Stop()
					return ctx.Err()
				}
				switch {
				case sample.Error != "":
					cell.Errors++
					logf("  %s block=%s #%d: ERROR %s", mode.Name, block, si+1, sample.Error)
				case sample.TimedOut:
					cell.Timeouts++
					modeTimeouts++
					logf("  %s block=%s #%d: TIMEOUT: no new Work within %s of the old one going", mode.Name, block, si+1, r.timeout)
					if *maxTimeouts > 0 && modeTimeouts >= *maxTimeouts {
						logf("  %s: %d timeout(s): skipping the mode's remaining samples (--max-timeouts)", mode.Name, modeTimeouts)
					}
				default:
					latencies = append(latencies, sample.LatencyMs)
					logf("  %s block=%s #%d: old Work gone %s after connect; new Work %s later",
						mode.Name, block, si+1, benchkit.Dur(msDur(sample.ReleaseMs)), benchkit.Dur(msDur(sample.LatencyMs)))
				}
				cell.Samples = append(cell.Samples, sample)
				if err := ctl.Alive(); err != nil {
					return err
				}
			}
			cell.WaitCapMs = ms(r.timeout)
			cell.P50Ms = benchkit.Num(benchkit.Percentile(latencies, 50))
			cell.P99Ms = benchkit.Num(benchkit.Percentile(latencies, 99))
			rep.Cells = append(rep.Cells, cell)
		}
		if err := ctl.Stop(); err != nil {
			logf("mode %s: %v", mode.Name, err)
		}
	}
	rep.Finished = time.Now()
	rep.Machine.Finish()

	fmt.Println()
	table := recoveryTable(rep, modes, blocks, *samples)
	table.Print(os.Stdout)
	fmt.Printf("\np99 with %d samples per cell is the maximum (nearest rank). load average at end: %s\n", *samples, rep.Machine.LoadAvgEnd)
	path, err := benchkit.WriteJSON(c.jsonPath, rep)
	if err != nil {
		return err
	}
	fmt.Printf("results: %s\n", path)
	return nil
}

func recoveryTable(rep *recoveryReport, modes []recoveryMode, blocks []time.Duration, samples int) *benchkit.Table {
	t := &benchkit.Table{Header: []string{"block", "n"}}
	for _, m := range modes {
		t.Header = append(t.Header, m.Name+" p50", m.Name+" p99")
	}
	for _, m := range modes[1:] {
		t.Header = append(t.Header, m.Name+"÷"+modes[0].Name+" p50", "p99")
	}
	t.Header = append(t.Header, "timeouts", "errors")
	cellOf := func(mode string, block time.Duration) *recoveryCell {
		for i := range rep.Cells {
			if rep.Cells[i].Mode == mode && rep.Cells[i].Block == block.String() {
				return &rep.Cells[i]
			}
		}
		return nil
	}
	for _, b := range blocks {
		row := []string{b.String(), fmt.Sprint(samples)}
		var timeouts, errs []string
		for _, m := range modes {
			c := cellOf(m.Name, b)
			row = append(row, fmtMs(float64(c.P50Ms)), fmtMs(float64(c.P99Ms)))
			if c.Timeouts > 0 || c.Skipped > 0 {
				t := fmt.Sprintf("%s:%d (cap %s)", m.Name, c.Timeouts, benchkit.Dur(msDur(c.WaitCapMs)))
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
		if len(timeouts) == 0 {
			timeouts = []string{"0"}
		}
		if len(errs) == 0 {
			errs = []string{"0"}
		}
		row = append(row, strings.Join(timeouts, " "), strings.Join(errs, " "))
		t.Add(row...)
	}
	return t
}

// waitCap is the cap on one recovery wait: the --timeout given, or 4 × block + 2m, at
// most 20m.
func waitCap(flagValue, block time.Duration) time.Duration {
	if flagValue > 0 {
		return flagValue
	}
	return min(4*block+2*time.Minute, 20*time.Minute)
}

func fmtMs(v float64) string {
	if v != v { // NaN: no sample
		return "n/a"
	}
	return benchkit.Dur(msDur(v))
}

func ratio(a, b float64) string {
	if a != a || b != b || b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f×", a/b)
}

func msDur(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func parseModes(s, vs string) ([]recoveryMode, error) {
	var modes []recoveryMode
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, args, _ := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("--modes: %q has no name", part)
		}
		modes = append(modes, recoveryMode{Name: name, Args: strings.Fields(args)})
	}
	if vs != "" {
		modes = append(modes, recoveryMode{Name: "vs", Command: vs})
	}
	return modes, nil
}

func describeSpec(spec benchkit.ControllerSpec) string {
	if spec.Command != "" {
		return spec.Command
	}
	return strings.TrimSpace(filepath.Base(spec.Binary) + " " + strings.Join(spec.Args, " "))
}

func sanitize(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

type recoveryRun struct {
	plane       *controlplane.Plane
	tracker     *localplane.WorkTracker
	sim         *executionsim.Simulator
	stepTimeout time.Duration
	timeout     time.Duration
}

// sample runs one recovery of template ns/name after member1 was blocked for block.
func (r *recoveryRun) sample(ctx context.Context, ctl *benchkit.Controller, ns, name string, block time.Duration) recoverySample {
	out := recoverySample{Template: ns + "/" + name}
	fail := func(err error) recoverySample {
		out.Error = err.Error()
		r.sim.Connect("member1")
		return out
	}
	c := r.plane.Client
	d := benchkit.Deployment(ns, name, 2, 0)
	if err := c.Create(ctx, d); err != nil {
		return fail(fmt.Errorf("creating the template: %w", err))
	}
	defer func() { _ = c.Delete(context.WithoutCancel(ctx), d) }()
	workName := names.WorkName("Deployment", ns, name)
	k1 := localplane.WorkKey(names.ExecutionNamespace("member1"), workName)
	k2 := localplane.WorkKey(names.ExecutionNamespace("member2"), workName)
	members := []string{"member1", "member2"}
	firstID, secondID := "pid-"+name+"-a", "pid-"+name+"-b"

	rb := benchkit.Binding(d, name, firstID, members)
	if err := c.Create(ctx, rb); err != nil {
		return fail(fmt.Errorf("creating the binding: %w", err))
	}
	liveWith := func(st *localplane.WorkState, id string) bool {
		return st.UID != "" && !st.Terminating && st.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] == id
	}
	if err := r.tracker.Wait(ctx, r.stepTimeout, func(get func(string) *localplane.WorkState) bool {
		return liveWith(get(k1), firstID) && liveWith(get(k2), firstID)
	}); err != nil {
		return fail(fmt.Errorf("waiting for both first Works: %w", err))
	}
	oldUID := r.tracker.Get(k1).UID

	r.sim.Disconnect("member1")
	if err := r.deleteBinding(ctx, rb); err != nil {
		return fail(err)
	}
	if err := r.tracker.Wait(ctx, r.stepTimeout, func(get func(string) *localplane.WorkState) bool {
		st1 := get(k1)
		return get(k2).UID == "" && st1.UID == oldUID && st1.Terminating
	}); err != nil {
		return fail(fmt.Errorf("waiting for member2's Work to go and member1's to stay terminating: %w", err))
	}

	rb = benchkit.Binding(d, name, secondID, members)
	if err := c.Create(ctx, rb); err != nil {
		return fail(fmt.Errorf("recreating the binding: %w", err))
	}
	if err := r.tracker.Wait(ctx, r.stepTimeout, func(get func(string) *localplane.WorkState) bool {
		return liveWith(get(k2), secondID)
	}); err != nil {
		return fail(fmt.Errorf("waiting for member2's new Work: %w", err))
	}
	select {
	case <-ctx.Done():
		return fail(ctx.Err())
	case <-time.After(block):
	}
	if st := r.tracker.Get(k1); st.UID != oldUID || !st.Terminating {
		return fail(fmt.Errorf("member1's old Work changed before member1 was connected: uid %s terminating=%v", st.UID, st.Terminating))
	}

	connected := time.Now()
	r.sim.Connect("member1")
	var gone, created time.Time
	err := r.tracker.Wait(ctx, r.timeout, func(get func(string) *localplane.WorkState) bool {
		gone, created = time.Time{}, time.Time{}
		for _, ev := range get(k1).Events {
			switch {
			case ev.Type == watch.Deleted && ev.UID == oldUID:
				gone = ev.At
			case ev.Type == watch.Added && ev.UID != oldUID && !gone.IsZero():
				if ev.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] == secondID {
					created = ev.At
				}
			}
		}
		return !created.IsZero()
	})
	switch {
	case errors.Is(err, benchkit.ErrTimeout):
		out.TimedOut = true
	case err != nil:
		return fail(err)
	default:
		out.ReleaseMs = ms(gone.Sub(connected))
		out.LatencyMs = ms(created.Sub(gone))
	}

	// Clean up: member1 is connected, so every Work goes.
	if err := r.deleteBinding(ctx, rb); err != nil {
		out.Error = err.Error()
		return out
	}
	if err := r.tracker.Wait(ctx, r.stepTimeout, func(get func(string) *localplane.WorkState) bool {
		return get(k1).UID == "" && get(k2).UID == ""
	}); err != nil {
		out.Error = fmt.Sprintf("cleaning up: waiting for the Works to go: %v", err)
	}
	if err := ctl.Alive(); err != nil {
		out.Error = err.Error()
	}
	return out
}

// deleteBinding deletes rb and waits until it is gone from the API.
func (r *recoveryRun) deleteBinding(ctx context.Context, rb *workv1alpha2.ResourceBinding) error {
	c := r.plane.Client
	if err := c.Delete(ctx, rb); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the binding: %w", err)
	}
	key := client.ObjectKeyFromObject(rb)
	return benchkit.Poll(ctx, 20*time.Millisecond, r.stepTimeout, "waiting for binding "+key.String()+" to go",
		func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, key, &workv1alpha2.ResourceBinding{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, client.IgnoreNotFound(err)
		})
}
