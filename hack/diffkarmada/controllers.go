// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A controller is one binding controller run as its own process against the plane.
type controller struct {
	name string
	bin  string
	args []string
	log  string // where its output goes
}

// start runs the controller until stop is called.
func (c controller) start(kubeconfig string) (stop func() error, err error) {
	out, err := os.OpenFile(c.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.bin, append([]string{"--kubeconfig=" + kubeconfig}, c.args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", c.name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // a controller killed at the end exits non-zero
		close(exited)
	}()
	return func() error {
		defer out.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		return nil
	}, nil
}

// karmadaController is Karmada's controller-manager with its binding controllers alone.
func karmadaController(bin, workDir string) controller {
	return controller{name: "karmada", bin: bin, log: filepath.Join(workDir, "karmada-controller-manager.log"), args: []string{
		"--controllers=binding", "--leader-elect=false", "--metrics-bind-address=0",
		"--health-probe-bind-address=0", "--v=2",
	}}
}

// ourController is binding-controller-manager.
func ourController(bin, workDir string) controller {
	return controller{name: "ours", bin: bin, log: filepath.Join(workDir, "binding-controller-manager.log"), args: []string{
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
	}}
}

// buildKarmada builds Karmada's controller-manager from checkout, a work tree or a git
// directory (a fetched snapshot), with its vendored modules: nothing is downloaded. It also
// returns the directory of Karmada's CRDs (charts/karmada/_crds/bases).
func buildKarmada(ctx context.Context, checkout, workDir string, log io.Writer) (bin, crds string, err error) {
	src := filepath.Join(workDir, "karmada-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", "", err
	}
	paths := []string{"go.mod", "go.sum", "cmd", "pkg", "vendor", "operator", "charts/karmada/_crds"}
	if _, err := os.Stat(filepath.Join(checkout, "cmd", "controller-manager")); err == nil {
		for _, p := range paths {
			cp := exec.CommandContext(ctx, "cp", "-a", filepath.Join(checkout, p), filepath.Join(src, filepath.Dir(p))+"/")
			if err := os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755); err != nil {
				return "", "", err
			}
			if out, err := cp.CombinedOutput(); err != nil {
				return "", "", fmt.Errorf("copying %s: %v: %s", p, err, out)
			}
		}
	} else {
		// A git directory without a work tree: its HEAD, as the fetch tool leaves it.
		archive := exec.CommandContext(ctx, "sh", "-c", fmt.Sprintf("git --git-dir=%q archive HEAD %s | tar -x -C %q",
			checkout, strings.Join(paths, " "), src))
		if out, err := archive.CombinedOutput(); err != nil {
			if _, statErr := os.Stat(filepath.Join(src, "vendor", "modules.txt")); statErr != nil {
				return "", "", fmt.Errorf("extracting %s: %v: %s", checkout, err, out)
			}
		}
	}
	bin = filepath.Join(workDir, "karmada-controller-manager")
	if _, err := os.Stat(bin); err != nil {
		fmt.Fprintf(log, "building Karmada's controller-manager from %s (several minutes the first time)\n", checkout)
		build := exec.CommandContext(ctx, "go", "build", "-mod=vendor", "-o", bin, "./cmd/controller-manager")
		build.Dir = src
		build.Env = append(os.Environ(), "GOFLAGS=-mod=vendor", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("building Karmada's controller-manager: %v: %s", err, out)
		}
	}
	return bin, filepath.Join(src, "charts", "karmada", "_crds", "bases"), nil
}
