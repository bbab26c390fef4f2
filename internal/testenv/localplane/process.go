// SPDX-License-Identifier: Apache-2.0

package localplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
)

// BuildManager builds cmd/binding-controller-manager from this tree into dir, as
// 'make build' does (CGO off, -trimpath), and returns the binary's path: the tests and
// tools that run the binary never run a stale one.
func BuildManager(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "binding-controller-manager")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/binding-controller-manager")
	cmd.Dir = envtestutil.RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/binding-controller-manager: %w\n%s", err, out)
	}
	return bin, nil
}

// Process is a child process (the controller-manager) started in its own process group,
// so that a Ctrl-C the terminal sends to the whole foreground group reaches only the
// parent, which then stops the child in order.
type Process struct {
	Cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProcess starts binary with args, its stdout and stderr going to stdout and stderr.
func StartProcess(binary string, args []string, stdout, stderr io.Writer) (*Process, error) {
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("controller-manager binary: %w (run 'make build' first)", err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid is the child's process id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited tells whether the process has exited (Err says how).
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is what Wait returned; valid once Done is closed.
func (p *Process) Err() error { return p.err }

// ExitCode is the exit code (128+signal when killed by a signal); valid once Done is closed.
func (p *Process) ExitCode() int {
	st := p.Cmd.ProcessState
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// Stop sends SIGTERM and waits up to grace for the process to exit, then kills it.
// It returns nil when the process exited with code 0 on SIGTERM, or had already exited.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(grace):
		_ = p.Cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within %s of SIGTERM and was killed", p.Cmd.Path, grace)
	}
}

// Kill kills the process at once and waits for it.
func (p *Process) Kill() {
	select {
	case <-p.done:
	default:
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
}

// PortFree reports whether a TCP listener can bind addr (":8080", "127.0.0.1:8081").
func PortFree(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// FreePort returns a TCP port nothing listens on right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("unexpected listener address " + l.Addr().String())
	}
	return addr.Port, nil
}

// FreeAddresses returns n distinct 127.0.0.1:port addresses nothing listens on right
// now. Each port is held until all are chosen: asked one after the other, the kernel may
// hand out the port it just took back.
func FreeAddresses(n int) ([]string, error) {
	addrs := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}

// BindAddress returns def (":8080") when it is free, else ":<a free port>"; moved tells
// which.
func BindAddress(def string) (addr string, moved bool, err error) {
	if PortFree(def) {
		return def, false, nil
	}
	port, err := FreePort()
	if err != nil {
		return "", false, err
	}
	return ":" + strconv.Itoa(port), true, nil
}

// WaitReady polls url (the manager's /readyz) until it answers 200 OK. It fails when
// timeout passes, ctx ends or the process exits first.
func WaitReady(ctx context.Context, url string, p *Process, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %w", url, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.Done():
			return fmt.Errorf("exited before it was ready: %v", p.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// LogTail returns the last n lines of the log file at path ("" when it cannot be read).
func LogTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
