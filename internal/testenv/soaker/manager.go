// SPDX-License-Identifier: Apache-2.0

package soaker

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// ManagerConfig says how to run a binding-controller-manager.
type ManagerConfig struct {
	Binary     string
	Kubeconfig string
	// Args are passed after --kubeconfig, --metrics-bind-address and
	// --health-probe-bind-address (which are chosen here); a later flag wins.
	Args []string
	// Log, when set, receives the process's output too (it is always kept in memory).
	Log io.Writer
}

// Manager is one running binding-controller-manager process, with its metrics and probes
// on free loopback ports.
type Manager struct {
	proc        *localplane.Process
	out         *localplane.SyncBuffer
	MetricsAddr string
	ProbeAddr   string
	Started     time.Time

	mu       sync.Mutex
	signaled bool
}

// StartManager starts the binary; it does not wait for it to be ready.
func StartManager(cfg ManagerConfig) (*Manager, error) {
	addrs, err := localplane.FreeAddresses(2)
	if err != nil {
		return nil, err
	}
	m := &Manager{out: &localplane.SyncBuffer{}, MetricsAddr: addrs[0], ProbeAddr: addrs[1]}
	args := append([]string{"--kubeconfig", cfg.Kubeconfig,
		"--metrics-bind-address=" + m.MetricsAddr, "--health-probe-bind-address=" + m.ProbeAddr}, cfg.Args...)
	var w io.Writer = m.out
	if cfg.Log != nil {
		w = io.MultiWriter(m.out, cfg.Log)
	}
	m.proc, err = localplane.StartProcess(cfg.Binary, args, w, w)
	if err != nil {
		return nil, err
	}
	m.Started = time.Now()
	return m, nil
}

// PID is the process id.
func (m *Manager) PID() int { return m.proc.Cmd.Process.Pid }

// Done is closed once the process has exited.
func (m *Manager) Done() <-chan struct{} { return m.proc.Done() }

// Exited tells whether the process has exited.
func (m *Manager) Exited() bool { return m.proc.Exited() }

// ExitCode is the exit code (128+signal when killed by one); valid once Done is closed.
func (m *Manager) ExitCode() int { return m.proc.ExitCode() }

// Signaled tells whether Kill or Terminate was called: an exit without it is a crash.
func (m *Manager) Signaled() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.signaled
}

func (m *Manager) markSignaled() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.signaled = true
}

// WaitReady waits until /readyz answers 200 (the informer caches have synced).
func (m *Manager) WaitReady(ctx context.Context, timeout time.Duration) error {
	return localplane.WaitReady(ctx, "http://"+m.ProbeAddr+"/readyz", m.proc, timeout)
}

// Kill sends SIGKILL and waits for the process to exit.
func (m *Manager) Kill() {
	m.markSignaled()
	m.proc.Kill()
}

// Terminate sends SIGTERM and waits up to grace for the process to exit, then kills it.
// It returns an error when the process did not exit with code 0 in time.
func (m *Manager) Terminate(grace time.Duration) error {
	m.markSignaled()
	return m.proc.Stop(grace)
}

// Signal sends sig without waiting.
func (m *Manager) Signal(sig syscall.Signal) error {
	m.markSignaled()
	return m.proc.Cmd.Process.Signal(sig)
}

// Log is everything the process wrote so far.
func (m *Manager) Log() string { return m.out.String() }

// LogTail is the last n bytes of the log, cut at a line start.
func (m *Manager) LogTail(n int) string {
	s := m.out.String()
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return "…\n" + s
}

// Metrics scrapes the process's /metrics.
func (m *Manager) Metrics(ctx context.Context) (localplane.Metrics, error) {
	return localplane.Scrape(ctx, "http://"+m.MetricsAddr+"/metrics")
}

// Reconciles is controller_runtime_reconcile_total summed over both binding controllers
// and every result.
func Reconciles(m localplane.Metrics) float64 {
	return m.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "resourcebinding"}) +
		m.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "clusterresourcebinding"})
}

// Sample is the process's size at one moment.
type Sample struct {
	PID        int
	Uptime     time.Duration
	Goroutines int
	RSSBytes   int64
}

func (s Sample) String() string {
	if s.PID == 0 {
		return "not sampled"
	}
	return fmt.Sprintf("goroutines %d, RSS %s (pid %d, up %s)", s.Goroutines, MiB(s.RSSBytes), s.PID,
		s.Uptime.Round(time.Second))
}

// MiB formats bytes as mebibytes.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// Sample reads go_goroutines from /metrics and VmRSS from /proc/<pid>/status.
func (m *Manager) Sample(ctx context.Context) (Sample, error) {
	s := Sample{PID: m.PID(), Uptime: time.Since(m.Started)}
	metrics, err := m.Metrics(ctx)
	if err != nil {
		return s, err
	}
	if !metrics.Has("go_goroutines") {
		return s, fmt.Errorf("no go_goroutines in /metrics")
	}
	s.Goroutines = int(metrics.Sum("go_goroutines", nil))
	mem, err := localplane.ReadMemory(s.PID)
	s.RSSBytes = mem.RSS
	return s, err
}
