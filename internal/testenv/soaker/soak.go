// SPDX-License-Identifier: Apache-2.0

// Package soaker is the soak test of the binding-controller-manager binary ('make soak',
// go run ./hack/soak; test/faults runs it in-process for a short duration). It starts a
// local control plane (internal/testenv/localplane) with member clusters member1..member5, runs the
// built manager and Karmada's simulated execution side (internal/testenv/executionsim), and for the
// duration drives random load: bindings created, rescheduled and deleted; clusters
// blocked (their execution side stops releasing deleted Works) and unblocked; and the
// manager restarted every 20–40 s, by SIGTERM or SIGKILL. Then every cluster is
// connected again and it measures how long everything takes to converge (see Check).
//
// It fails when:
//   - the bindings have not converged ConvergenceTimeout (60 s) after the load stopped:
//     a binding out of sync, a missing, duplicated or orphaned Work, a deleted binding
//     still held by its finalizer;
//   - the manager leaks. "start" is the first manager, sampled right after the initial
//     bindings converged and before any random load (goroutines: go_goroutines from its
//     /metrics; RSS: VmRSS from /proc/<pid>/status). The rule fails when a later sample
//     has goroutines > start × 2 + 50, or RSS > start × 3. Samples: the manager running
//     at the end, after the final convergence ("end"), and every manager just before
//     it is restarted (under load). Each restart starts a fresh process, so the rule
//     catches growth within one process's life (up to RestartMax of load);
//   - a manager exits without being told to, or does not stop cleanly on the final SIGTERM.
package soaker

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// DefaultMembers are the soak's member clusters.
var DefaultMembers = []string{"member1", "member2", "member3", "member4", "member5"}

// Options shape a soak run. Zero values take the defaults in brackets.
type Options struct {
	// Duration of the random load [10m].
	Duration time.Duration
	// Members are the member clusters [member1..member5].
	Members []string
	// Binary is the controller-manager to run; empty builds one from this tree into WorkDir.
	Binary string
	// ManagerArgs are extra manager flags, after the soak's own (--leader-elect=false).
	ManagerArgs []string
	// Seed of the random choices [derived from the clock]; the summary prints it.
	Seed uint64
	// InitialBindings are created and converged before the load starts [30].
	InitialBindings int
	// MaxBindings bounds the live bindings during the load [60].
	MaxBindings int
	// ConvergenceTimeout is how long the bindings may take to converge, initially and
	// after the load [60s].
	ConvergenceTimeout time.Duration
	// RestartMin and RestartMax bound the time between manager restarts [20s, 40s].
	RestartMin, RestartMax time.Duration
	// WorkDir holds the kubeconfig, the manager log and (when built) the binary; empty
	// makes a new temporary directory, which is kept (the log is in it).
	WorkDir string
	// Out receives the progress and the summary [os.Stdout].
	Out io.Writer
}

func (o *Options) defaults() error {
	if o.Duration <= 0 {
		o.Duration = 10 * time.Minute
	}
	if len(o.Members) == 0 {
		o.Members = DefaultMembers
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	if o.InitialBindings <= 0 {
		o.InitialBindings = 30
	}
	if o.MaxBindings <= 0 {
		o.MaxBindings = 60
	}
	if o.MaxBindings < o.InitialBindings {
		o.MaxBindings = o.InitialBindings
	}
	if o.ConvergenceTimeout <= 0 {
		o.ConvergenceTimeout = 60 * time.Second
	}
	if o.RestartMin <= 0 {
		o.RestartMin = 20 * time.Second
	}
	if o.RestartMax < o.RestartMin {
		o.RestartMax = 2 * o.RestartMin
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.WorkDir == "" {
		dir, err := os.MkdirTemp("", "binding-controller-soak-")
		if err != nil {
			return err
		}
		o.WorkDir = dir
	}
	return os.MkdirAll(o.WorkDir, 0o755)
}

// Counts are what the load did.
type Counts struct {
	Creates, Updates, Deletes int
	// CreateDeferred counts creates of a name whose previous binding was still being
	// deleted (AlreadyExists); the name is tried again later.
	CreateDeferred   int
	Blocks, Unblocks int
	SIGTERMs         int
	SIGKILLs         int
	// APIErrors are load actions the API server failed (not the controller's doing).
	APIErrors int
}

// Result is the outcome of a soak run.
type Result struct {
	Seed    uint64
	LogPath string
	Counts  Counts
	// Start is the first manager after the initial convergence, End the last one after
	// the final convergence; BeforeRestart are the managers just before their restart.
	Start, End    Sample
	BeforeRestart []Sample
	// InitialConvergence and Convergence are how long the initial bindings, and
	// everything after the load stopped, took to converge.
	InitialConvergence, Convergence time.Duration
	// Converged tells whether everything converged after the load; Bindings and Works
	// are what there was then.
	Converged       bool
	Bindings, Works int
	// Failures is empty when the soak passed.
	Failures []string
}

// Passed tells whether the soak found nothing wrong.
func (r *Result) Passed() bool { return len(r.Failures) == 0 }

// soak is one run in progress.
type soak struct {
	opts    Options
	out     io.Writer
	start   time.Time
	plane   *localplane.Plane
	sim     *executionsim.Simulator
	load    *Workload
	log     *os.File
	res     *Result
	binary  string
	kubecfg string

	mu        sync.Mutex
	manager   *Manager
	blocked   []string
	processes int
}

const namespace = "soak"

// Run runs the soak. It returns an error when the soak could not run at all (the control
// plane or the build failed, ctx ended); what it found is in the Result.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	s := &soak{opts: opts, out: opts.Out, start: time.Now(), res: &Result{Seed: opts.Seed}}
	s.logf("soak: %s of random load on %s (seed %d)", opts.Duration, strings.Join(opts.Members, ", "), opts.Seed)

	s.binary = opts.Binary
	if s.binary == "" {
		s.logf("building the controller-manager…")
		var err error
		if s.binary, err = localplane.BuildManager(ctx, opts.WorkDir); err != nil {
			return nil, err
		}
	}
	s.kubecfg = filepath.Join(opts.WorkDir, "kubeconfig")
	plane, err := localplane.Start(ctx, localplane.Options{Members: opts.Members, KubeconfigPath: s.kubecfg})
	if err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	s.plane = plane
	defer func() {
		if err := plane.Stop(); err != nil {
			s.logf("stopping the control plane: %v", err)
		}
	}()
	s.logf("control plane up at %s", plane.APIServerURL())

	if err := plane.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	s.res.LogPath = filepath.Join(opts.WorkDir, "manager.log")
	if s.log, err = os.Create(s.res.LogPath); err != nil {
		return nil, err
	}
	defer s.log.Close()

	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	s.sim = executionsim.New(plane.Client, 100*time.Millisecond)
	go s.sim.Run(simCtx)
	s.load = NewWorkload(plane.Client, namespace, opts.Members, opts.Seed)

	if err := s.startManager(ctx); err != nil {
		return nil, err
	}
	defer func() {
		if m := s.current(); m != nil {
			m.Kill()
		}
	}()

	if err := s.run(ctx); err != nil {
		return nil, err
	}
	s.summarize()
	return s.res, nil
}

func (s *soak) run(ctx context.Context) error {
	// Warm-up: the initial bindings, converged, then the baseline.
	for i := 0; i < s.opts.InitialBindings; i++ {
		if err := s.load.Create(ctx, poolName(i), nil); err != nil {
			return fmt.Errorf("creating the initial bindings: %w", err)
		}
	}
	t := time.Now()
	state, err := s.waitConverged(ctx, s.opts.ConvergenceTimeout)
	if err != nil {
		return err
	}
	s.res.InitialConvergence = time.Since(t)
	if !state.Converged() {
		s.fail("the %d initial bindings did not converge within %s: %s", s.opts.InitialBindings,
			s.opts.ConvergenceTimeout, state.Summary(20))
		return nil
	}
	s.logf("%d initial bindings converged in %s (%d Works)", state.Bindings, round(s.res.InitialConvergence), state.Works)
	if s.res.Start, err = s.current().Sample(ctx); err != nil {
		return fmt.Errorf("sampling the manager: %w", err)
	}
	s.logf("start: %s", s.res.Start)

	// The load.
	loadCtx, stopLoad := context.WithTimeout(ctx, s.opts.Duration)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); s.drive(loadCtx) }()
	go func() { defer wg.Done(); s.blockAndUnblock(loadCtx) }()
	go func() { defer wg.Done(); s.restartLoop(loadCtx, ctx) }()
	s.progress(loadCtx)
	wg.Wait()
	stopLoad()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c := s.res.Counts
	s.logf("load stopped: %d creates (%d deferred: name still being deleted), %d updates, %d deletes, %d blocks, %d unblocks, "+
		"%d restarts (%d SIGTERM, %d SIGKILL), %d API errors",
		c.Creates, c.CreateDeferred, c.Updates, c.Deletes, c.Blocks, c.Unblocks, c.SIGTERMs+c.SIGKILLs, c.SIGTERMs, c.SIGKILLs, c.APIErrors)

	// Convergence: every cluster connected, a manager running.
	for _, m := range s.opts.Members {
		s.sim.Connect(m)
	}
	stopped := time.Now()
	if m := s.current(); m.Exited() {
		s.noteExit(m)
		if err := s.startManager(ctx); err != nil {
			return err
		}
	}
	state, err = s.waitConverged(ctx, s.opts.ConvergenceTimeout)
	if err != nil {
		return err
	}
	s.res.Convergence = time.Since(stopped)
	s.res.Converged, s.res.Bindings, s.res.Works = state.Converged(), state.Bindings, state.Works
	if !state.Converged() {
		s.fail("not converged %s after the load stopped; bindings never converged: %s\n%s", s.opts.ConvergenceTimeout,
			strings.Join(state.UnconvergedBindings(), ", "), state.Summary(30))
	} else {
		s.logf("all clusters connected; converged %s after the load stopped: %d bindings, %d Works",
			round(s.res.Convergence), state.Bindings, state.Works)
	}

	m := s.current()
	if s.res.End, err = m.Sample(ctx); err != nil {
		s.fail("sampling the manager at the end: %v", err)
	} else {
		s.logf("end:   %s", s.res.End)
	}
	if err := m.Terminate(40 * time.Second); err != nil {
		s.fail("the manager did not stop cleanly on SIGTERM: %v\n%s", err, m.LogTail(2000))
	}
	return nil
}

// poolName is the i-th Deployment name the load uses.
func poolName(i int) string { return fmt.Sprintf("app-%03d", i) }

// drive creates, reschedules and deletes bindings at random until ctx ends.
func (s *soak) drive(ctx context.Context) {
	pool := 2 * s.opts.MaxBindings
	for ctx.Err() == nil {
		sleep(ctx, time.Duration(s.load.Between(20, 120))*time.Millisecond)
		if ctx.Err() != nil {
			return
		}
		live := len(s.load.Live())
		roll := s.load.Intn(100)
		var err error
		switch {
		case live < s.opts.MaxBindings && (roll < 40 || live == 0):
			name := poolName(s.load.Intn(pool))
			if s.load.IsLive(name) {
				continue
			}
			err = s.load.Create(ctx, name, nil)
			if apierrors.IsAlreadyExists(err) {
				s.count(func(c *Counts) { c.CreateDeferred++ })
				continue
			}
			if err == nil {
				s.count(func(c *Counts) { c.Creates++ })
			}
		case roll < 80:
			err = s.load.Update(ctx, s.load.RandomLive(), nil)
			if err == nil {
				s.count(func(c *Counts) { c.Updates++ })
			}
		default:
			err = s.load.Delete(ctx, s.load.RandomLive())
			if err == nil {
				s.count(func(c *Counts) { c.Deletes++ })
			}
		}
		if err != nil && ctx.Err() == nil {
			s.count(func(c *Counts) { c.APIErrors++ })
			fmt.Fprintf(s.log, "soak: load action failed: %v\n", err)
		}
	}
}

// blockAndUnblock disconnects and reconnects random clusters (at most two at once)
// every 3–8 s until ctx ends.
func (s *soak) blockAndUnblock(ctx context.Context) {
	for {
		sleep(ctx, time.Duration(s.load.Between(3000, 8000))*time.Millisecond)
		if ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		if len(s.blocked) == 0 || (len(s.blocked) < 2 && s.load.Intn(2) == 0) {
			var connected []string
			for _, m := range s.opts.Members {
				if !slices.Contains(s.blocked, m) {
					connected = append(connected, m)
				}
			}
			m := connected[s.load.Intn(len(connected))]
			s.blocked = append(s.blocked, m)
			s.sim.Disconnect(m)
			s.res.Counts.Blocks++
		} else {
			i := s.load.Intn(len(s.blocked))
			s.sim.Connect(s.blocked[i])
			s.blocked = slices.Delete(s.blocked, i, i+1)
			s.res.Counts.Unblocks++
		}
		s.mu.Unlock()
	}
}

// restartLoop restarts the manager every RestartMin–RestartMax until ctx ends, by SIGTERM
// or SIGKILL at random; a manager that exits by itself is a failure, and is restarted.
// A restart begun still completes after ctx ends, unless outer ends too.
func (s *soak) restartLoop(ctx, outer context.Context) {
	for {
		span := int((s.opts.RestartMax - s.opts.RestartMin) / time.Millisecond)
		wait := s.opts.RestartMin + time.Duration(s.load.Intn(span+1))*time.Millisecond
		m := s.current()
		select {
		case <-ctx.Done():
			return
		case <-m.Done():
			s.noteExit(m)
		case <-time.After(wait):
			if sample, err := m.Sample(ctx); err == nil {
				s.mu.Lock()
				s.res.BeforeRestart = append(s.res.BeforeRestart, sample)
				s.mu.Unlock()
			}
			how := "SIGKILL"
			if s.load.Intn(2) == 0 {
				how = "SIGTERM"
				s.count(func(c *Counts) { c.SIGTERMs++ })
				if err := m.Terminate(40 * time.Second); err != nil {
					s.fail("manager pid %d did not stop cleanly on SIGTERM: %v\n%s", m.PID(), err, m.LogTail(2000))
				}
			} else {
				s.count(func(c *Counts) { c.SIGKILLs++ })
				m.Kill()
			}
			s.logf("restart: %s pid %d (up %s)", how, m.PID(), round(time.Since(m.Started)))
		}
		if ctx.Err() != nil && !m.Exited() {
			return
		}
		if err := s.startManager(outer); err != nil {
			s.fail("restarting the manager: %v", err)
			return
		}
	}
}

// noteExit records a manager that exited without being told to.
func (s *soak) noteExit(m *Manager) {
	if !m.Signaled() {
		s.fail("manager pid %d exited by itself with code %d after %s\n%s", m.PID(), m.ExitCode(),
			round(time.Since(m.Started)), m.LogTail(3000))
	}
}

// startManager starts a new manager and waits until it is ready.
func (s *soak) startManager(ctx context.Context) error {
	s.mu.Lock()
	s.processes++
	n := s.processes
	s.mu.Unlock()
	fmt.Fprintf(s.log, "\n===== soak: manager #%d starting at +%s =====\n", n, round(time.Since(s.start)))
	args := append([]string{"--leader-elect=false"}, s.opts.ManagerArgs...)
	m, err := StartManager(ManagerConfig{Binary: s.binary, Kubeconfig: s.kubecfg, Args: args, Log: s.log})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.manager = m
	s.mu.Unlock()
	if err := m.WaitReady(ctx, 60*time.Second); err != nil {
		return fmt.Errorf("manager #%d (pid %d) not ready: %w\n%s", n, m.PID(), err, m.LogTail(3000))
	}
	if n > 1 {
		s.logf("manager #%d pid %d ready in %s", n, m.PID(), round(time.Since(m.Started)))
	} else {
		s.logf("manager pid %d ready in %s (log: %s)", m.PID(), round(time.Since(m.Started)), s.res.LogPath)
	}
	return nil
}

func (s *soak) current() *Manager {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.manager
}

// waitConverged polls Check until everything has converged or timeout passes, and
// returns the last state.
func (s *soak) waitConverged(ctx context.Context, timeout time.Duration) (*State, error) {
	deadline := time.Now().Add(timeout)
	for {
		state, err := Check(ctx, s.plane.Client, Scope{Namespaces: []string{namespace}})
		if err == nil && state.Converged() {
			return state, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if time.Now().After(deadline) {
			if err != nil {
				return nil, err
			}
			return state, nil
		}
		sleep(ctx, 250*time.Millisecond)
	}
}

// progress prints a line every 15 s until ctx ends.
func (s *soak) progress(ctx context.Context) {
	ticker := time.NewTicker(15 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		s.mu.Lock()
		c, blocked, pid := s.res.Counts, slices.Clone(s.blocked), s.manager.PID()
		s.mu.Unlock()
		sort.Strings(blocked)
		if len(blocked) == 0 {
			blocked = []string{"none"}
		}
		s.logf("load: %d creates, %d updates, %d deletes; %d live bindings; blocked: %s; manager pid %d",
			c.Creates, c.Updates, c.Deletes, len(s.load.Live()), strings.Join(blocked, ", "), pid)
	}
}

// summarize applies the leak rule and prints the summary.
func (s *soak) summarize() {
	r := s.res
	if r.Start.Goroutines > 0 && r.End.Goroutines > 0 {
		gLimit := r.Start.Goroutines*2 + 50
		rssLimit := r.Start.RSSBytes * 3
		verdict := func(ok bool) string {
			if ok {
				return "ok"
			}
			return "LEAK"
		}
		s.logf("leak rule at the end: goroutines %d ≤ %d×2+50 = %d: %s; RSS %s ≤ %s×3 = %s: %s",
			r.End.Goroutines, r.Start.Goroutines, gLimit, verdict(r.End.Goroutines <= gLimit),
			MiB(r.End.RSSBytes), MiB(r.Start.RSSBytes), MiB(rssLimit), verdict(r.End.RSSBytes <= rssLimit))
		for _, smp := range append([]Sample{r.End}, r.BeforeRestart...) {
			what := "at the end"
			if smp.PID != r.End.PID {
				what = "before its restart"
			}
			if smp.Goroutines > gLimit {
				s.fail("goroutine leak: manager pid %d had %d goroutines %s (up %s) > %d (start %d × 2 + 50)",
					smp.PID, smp.Goroutines, what, round(smp.Uptime), gLimit, r.Start.Goroutines)
			}
			if smp.RSSBytes > rssLimit {
				s.fail("memory leak: manager pid %d had RSS %s %s (up %s) > %s (start %s × 3)",
					smp.PID, MiB(smp.RSSBytes), what, round(smp.Uptime), MiB(rssLimit), MiB(r.Start.RSSBytes))
			}
		}
	}
	if len(r.BeforeRestart) > 0 {
		peakG, peakRSS := r.BeforeRestart[0], r.BeforeRestart[0]
		for _, smp := range r.BeforeRestart {
			if smp.Goroutines > peakG.Goroutines {
				peakG = smp
			}
			if smp.RSSBytes > peakRSS.RSSBytes {
				peakRSS = smp
			}
		}
		s.logf("under load, just before each of %d restarts: at most %d goroutines (pid %d, up %s), RSS at most %s (pid %d, up %s)",
			len(r.BeforeRestart), peakG.Goroutines, peakG.PID, round(peakG.Uptime), MiB(peakRSS.RSSBytes), peakRSS.PID, round(peakRSS.Uptime))
	}
	fmt.Fprintln(s.out)
	fmt.Fprintln(s.out, "── soak summary ──")
	fmt.Fprintf(s.out, "  seed                %d\n", r.Seed)
	fmt.Fprintf(s.out, "  load                %s on %d clusters: %d creates, %d updates, %d deletes, %d blocks, %d restarts (%d SIGTERM, %d SIGKILL)\n",
		s.opts.Duration, len(s.opts.Members), r.Counts.Creates, r.Counts.Updates, r.Counts.Deletes, r.Counts.Blocks,
		r.Counts.SIGTERMs+r.Counts.SIGKILLs, r.Counts.SIGTERMs, r.Counts.SIGKILLs)
	fmt.Fprintf(s.out, "  manager at start    %s\n", r.Start)
	fmt.Fprintf(s.out, "  manager at end      %s\n", r.End)
	switch {
	case r.Converged:
		fmt.Fprintf(s.out, "  convergence         %s after the load stopped (%d bindings, %d Works)\n", round(r.Convergence), r.Bindings, r.Works)
	case r.Convergence > 0:
		fmt.Fprintf(s.out, "  convergence         NONE within %s after the load stopped\n", round(r.Convergence))
	}
	fmt.Fprintf(s.out, "  manager log         %s\n", r.LogPath)
	if r.Passed() {
		fmt.Fprintln(s.out, "  result              PASS")
		return
	}
	fmt.Fprintf(s.out, "  result              FAIL (%d)\n", len(r.Failures))
	for _, f := range r.Failures {
		fmt.Fprintf(s.out, "  ✗ %s\n", strings.ReplaceAll(f, "\n", "\n    "))
	}
}

func (s *soak) count(f func(*Counts)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.res.Counts)
}

func (s *soak) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.res.Failures = append(s.res.Failures, msg)
	s.mu.Unlock()
	s.logf("✗ %s", msg)
}

var outMu sync.Mutex

func (s *soak) logf(format string, args ...any) {
	outMu.Lock()
	defer outMu.Unlock()
	fmt.Fprintf(s.out, "[%6.1fs] %s\n", time.Since(s.start).Seconds(), fmt.Sprintf(format, args...))
}

func round(d time.Duration) time.Duration {
	if d > 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
