// SPDX-License-Identifier: Apache-2.0

// Package controller runs the controller under test, the binding-controller-manager,
// as a child process against a control plane, and reads its /metrics.
package controller

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// Spec says how a run starts the controller: Binary with Args appended to the defaults,
// Env (NAME=value, e.g. GOMEMLIMIT or GOGC) in its environment. Label names it in tables
// and JSON. ReadyPath is the health probe path that says it is up ("": /readyz; Karmada's
// controller-manager serves /healthz alone).
type Spec struct {
	Label, Binary string
	Args, Env     []string
	ReadyPath     string
}

// Controller is a running controller.
type Controller struct {
	Spec       Spec
	Proc       *localplane.Process
	Argv       []string // what was run
	logPath    string
	MetricsURL string
}

// Start starts spec against kubeconfig, its output in logPath, and waits for /readyz.
func Start(ctx context.Context, spec Spec, kubeconfig, logPath string) (*Controller, error) {
	addrs, err := localplane.FreeAddresses(2)
	if err != nil {
		return nil, err
	}
	c := &Controller{Spec: spec, logPath: logPath, MetricsURL: "http://" + addrs[0] + "/metrics"}
	c.Argv = append([]string{spec.Binary, "--kubeconfig", kubeconfig, "--leader-elect=false",
		"--metrics-bind-address=" + addrs[0], "--health-probe-bind-address=" + addrs[1]}, spec.Args...)
	if len(spec.Env) > 0 {
		// env(1) execs the binary in its place: the process measured is the controller.
		c.Argv = append(append([]string{"/usr/bin/env"}, spec.Env...), c.Argv...)
	}
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	if c.Proc, err = localplane.StartProcess(c.Argv[0], c.Argv[1:], f, f); err != nil {
		f.Close()
		return nil, err
	}
	go func() {
		<-c.Proc.Done()
		f.Close()
	}()
	if err := localplane.WaitReady(ctx, "http://"+addrs[1]+cmp.Or(spec.ReadyPath, "/readyz"), c.Proc, 2*time.Minute); err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("%s not ready: %w; log tail:\n%s", spec.Label, err, c.LogTail(20))
	}
	return c, nil
}

// Stop sends SIGTERM, waits up to 40s, then kills. Only having to kill it is an error:
// how the controller exited on SIGTERM is not the benchmark's concern.
func (c *Controller) Stop() error {
	if err := c.Proc.Stop(40 * time.Second); err != nil && err != c.Proc.Err() {
		return err
	}
	return nil
}

// LogTail returns the last n lines of the controller's output.
func (c *Controller) LogTail(n int) string { return localplane.LogTail(c.logPath, n) }

// Scrape returns the controller's metrics.
func (c *Controller) Scrape(ctx context.Context) (localplane.Metrics, error) {
	return localplane.Scrape(ctx, c.MetricsURL)
}

// Alive fails when the process has exited.
func (c *Controller) Alive() error {
	if c.Proc.Exited() {
		return fmt.Errorf("%s exited (%v); log tail:\n%s", c.Spec.Label, c.Proc.Err(), c.LogTail(20))
	}
	return nil
}

// ReconcilesOf is how many reconciles the controller-runtime controller name has done:
// Karmada names its ResourceBinding controller "binding-controller".
func ReconcilesOf(s localplane.Metrics, name string) float64 {
	return s.Sum("controller_runtime_reconcile_total", map[string]string{"controller": name})
}

// WaitQuiet waits until the controller stops talking to the API server: its request
// counter unchanged for settle and every work queue empty. It gives up after max and
// says so.
func (c *Controller) WaitQuiet(ctx context.Context, settle, max time.Duration) error {
	last, stableSince := -1.0, time.Now()
	return wait.Poll(ctx, 250*time.Millisecond, max, "waiting for the controller to go quiet", func(ctx context.Context) (bool, error) {
		if err := c.Alive(); err != nil {
			return false, err
		}
		s, err := c.Scrape(ctx)
		if err != nil {
			return false, nil
		}
		if level := s.Sum("rest_client_requests_total", nil); level != last || s.Sum("workqueue_depth", nil) > 0 {
			last, stableSince = level, time.Now()
			return false, nil
		}
		return time.Since(stableSince) >= settle, nil
	})
}

func gcCount(s localplane.Metrics) float64 { return s.Sum("go_gc_duration_seconds_count", nil) }

// SettleGC scrapes the controller until n garbage collections have completed since the
// first scrape, and returns the last scrape. go_gc_heap_live_bytes is the live heap as
// the last collection marked it: a collection that began before now may have counted
// garbage as live (an informer's list response) or missed what was cached since. An idle
// controller does not collect, but every scrape allocates a few hundred KB, so scraping
// is itself the nudge — no request to the API server, no change to anything cached.
func (c *Controller) SettleGC(ctx context.Context, n int, max time.Duration) (localplane.Metrics, error) {
	first, err := c.Scrape(ctx)
	if err != nil || !first.Has("go_gc_duration_seconds_count") {
		return first, err
	}
	for deadline := time.Now().Add(max); ; {
		s, err := c.Scrape(ctx)
		if err != nil {
			return nil, err
		}
		if gcCount(s) >= gcCount(first)+float64(n) {
			return s, nil
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("only %.0f of %d garbage collections after %s: %w", gcCount(s)-gcCount(first), n, max, wait.ErrTimeout)
		}
	}
}

// Flag finds --name=V or --name V (or one dash) in args, a manager's flags: V, "true"
// for a flag given alone, or "" when args do not set it.
func Flag(args []string, name string) string {
	for i, a := range args {
		a = strings.TrimLeft(a, "-")
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				return args[i+1]
			}
			return "true"
		}
	}
	return ""
}

// flagInt is Flag's value as a number, def when args do not set one.
func flagInt(args []string, name string, def int) int {
	if n, err := strconv.Atoi(Flag(args, name)); err == nil {
		return n
	}
	return def
}

// Concurrency is how many Works the manager with args writes at once: its
// --concurrent-resourcebinding-syncs × --cluster-sync-concurrency, 5 × 8 by default.
// A plain client creating Works as many at once is the ceiling it is held against.
func Concurrency(args []string) int {
	return flagInt(args, "concurrent-resourcebinding-syncs", 5) * flagInt(args, "cluster-sync-concurrency", 8)
}
