// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
