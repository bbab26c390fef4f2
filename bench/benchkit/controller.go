// SPDX-License-Identifier: Apache-2.0

package benchkit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// ControllerSpec says which controller a run measures: the binding-controller-manager
// built from this tree (Binary, with Args appended to the defaults), or any other
// command (Command, the --vs flag) given the same kubeconfig.
type ControllerSpec struct {
	// Label names the controller in tables and JSON.
	Label  string
	Binary string
	Args   []string
	// Env is set in the environment of Binary (NAME=value), e.g. GOMEMLIMIT or GOGC.
	Env []string
	// Command is run through /bin/sh (exec); {kubeconfig}, {metrics} and {probe} are
	// replaced by the kubeconfig path and two free 127.0.0.1 addresses. Without
	// {metrics} the controller's own metrics are not scraped; without {probe} readiness is
	// only known from the canary binding.
	Command string
}

// Controller is a running controller.
type Controller struct {
	Spec ControllerSpec
	Proc *Process
	// Argv is what was run.
	Argv []string
	// MetricsURL and ReadyURL are "" when unknown.
	MetricsURL string
	ReadyURL   string
}

// StartController starts spec against kubeconfig, its log in logPath, and waits for
// /readyz when it has one.
func StartController(ctx context.Context, spec ControllerSpec, kubeconfig, logPath string) (*Controller, error) {
	addrs, err := localplane.FreeAddresses(2)
	if err != nil {
		return nil, err
	}
	metrics, probe := addrs[0], addrs[1]
	c := &Controller{Spec: spec}
	if spec.Command == "" {
		c.Argv = append([]string{spec.Binary, "--kubeconfig", kubeconfig, "--leader-elect=false",
			"--metrics-bind-address=" + metrics, "--health-probe-bind-address=" + probe}, spec.Args...)
		if len(spec.Env) > 0 {
			// env(1) execs the binary in its place: the process measured is the controller.
			c.Argv = append(append([]string{"/usr/bin/env"}, spec.Env...), c.Argv...)
		}
		c.MetricsURL = "http://" + metrics + "/metrics"
		c.ReadyURL = "http://" + probe + "/readyz"
		c.Proc, err = StartProcess(c.Argv, logPath)
	} else {
		command := Substitute(spec.Command, map[string]string{"kubeconfig": kubeconfig, "metrics": metrics, "probe": probe})
		c.Argv = []string{"/bin/sh", "-c", "exec " + command}
		if strings.Contains(spec.Command, "{metrics}") {
			c.MetricsURL = "http://" + metrics + "/metrics"
		}
		if strings.Contains(spec.Command, "{probe}") {
			c.ReadyURL = "http://" + probe + "/readyz"
		}
		c.Proc, err = StartShell(command, logPath)
	}
	if err != nil {
		return nil, err
	}
	if c.ReadyURL != "" {
		if err := localplane.WaitReady(ctx, c.ReadyURL, c.Proc.Process, 2*time.Minute); err != nil {
			_ = c.Stop()
			return nil, fmt.Errorf("%s not ready: %w; log tail:\n%s", spec.Label, err, c.Proc.LogTail(20))
		}
	}
	return c, nil
}

// Stop stops the controller (SIGTERM, 40s grace).
func (c *Controller) Stop() error { return c.Proc.Stop(40 * time.Second) }

// Scrape returns the controller's metrics; nil without error when it has none.
func (c *Controller) Scrape(ctx context.Context) (localplane.Metrics, error) {
	if c.MetricsURL == "" {
		return nil, nil
	}
	return localplane.Scrape(ctx, c.MetricsURL)
}

// Alive fails when the process has exited.
func (c *Controller) Alive() error {
	if c.Proc.Exited() {
		return fmt.Errorf("%s exited (%v); log tail:\n%s", c.Spec.Label, c.Proc.Err(), c.Proc.LogTail(20))
	}
	return nil
}

// RequestsMetric is client-go's request counter, labelled code, method, host.
const RequestsMetric = "rest_client_requests_total"

// WaitQuiet waits until the controller stops talking to the API server: its request
// counter (or, without metrics, the audit log) unchanged for settle and, with metrics,
// every work queue empty. It gives up after max and says so.
func (c *Controller) WaitQuiet(ctx context.Context, auditLog string, settle, max time.Duration) (time.Duration, error) {
	start := time.Now()
	last, stableSince := -1.0, time.Now()
	err := Poll(ctx, 250*time.Millisecond, max, "waiting for the controller to go quiet", func(ctx context.Context) (bool, error) {
		if err := c.Alive(); err != nil {
			return false, err
		}
		var level float64
		busy := false
		if c.MetricsURL != "" {
			s, err := c.Scrape(ctx)
			if err != nil {
				return false, nil
			}
			level = s.Sum(RequestsMetric, nil)
			busy = s.Sum("workqueue_depth", nil) > 0
		} else {
			level = float64(AuditOffset(auditLog))
		}
		if level != last || busy {
			last, stableSince = level, time.Now()
			return false, nil
		}
		return time.Since(stableSince) >= settle, nil
	})
	return time.Since(start), err
}

// GCCount is how many garbage collections a Go controller has completed.
func GCCount(s localplane.Metrics) float64 { return s.Sum("go_gc_duration_seconds_count", nil) }

// SettleGC scrapes the controller until n garbage collections have completed since the
// first scrape, and returns the last scrape. go_gc_heap_live_bytes is the live heap as
// the last collection marked it: a collection that began before now may have counted
// garbage as live (an informer's list response) or missed what was cached since. An idle
// controller does not collect, but every scrape allocates a few hundred KB, so scraping
// is itself the nudge — no request to the API server, no change to anything cached.
func (c *Controller) SettleGC(ctx context.Context, n int, max time.Duration) (localplane.Metrics, int, error) {
	first, err := c.Scrape(ctx)
	if err != nil || first == nil || !first.Has("go_gc_duration_seconds_count") {
		return first, 0, err
	}
	deadline := time.Now().Add(max)
	for scrapes := 1; ; scrapes++ {
		s, err := c.Scrape(ctx)
		if err != nil {
			return nil, scrapes, err
		}
		if GCCount(s) >= GCCount(first)+float64(n) {
			return s, scrapes, nil
		}
		if time.Now().After(deadline) {
			return s, scrapes, fmt.Errorf("only %.0f of %d garbage collections after %s: %w", GCCount(s)-GCCount(first), n, max, ErrTimeout)
		}
	}
}
