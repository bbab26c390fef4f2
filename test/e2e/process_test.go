package e2e

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/binding-controller/binding-controller/test/testkit"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// managerProcess is one running binding-controller-manager.
type managerProcess struct {
	cmd  *exec.Cmd
	out  *testkit.SyncBuffer
	done chan struct{}
	err  error
}

// startManager runs the binary with the test kubeconfig and args; it is stopped at the end
// of the spec unless the spec stops it first.
func startManager(args ...string) *managerProcess {
	return startManagerWithKubeconfig(kubeconfig, args...)
}

func startManagerWithKubeconfig(path string, args ...string) *managerProcess {
	args = append([]string{"--kubeconfig", path}, args...)
	p := &managerProcess{cmd: exec.Command(binary, args...), out: &testkit.SyncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout = io.MultiWriter(p.out, GinkgoWriter)
	p.cmd.Stderr = io.MultiWriter(p.out, GinkgoWriter)
	Expect(p.cmd.Start()).To(Succeed())
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	DeferCleanup(p.kill)
	return p
}

// runManager runs the binary to completion and returns its exit code and output.
func runManager(args ...string) (int, string) {
	p := startManager(args...)
	Eventually(p.done, 30*time.Second).Should(BeClosed())
	return p.cmd.ProcessState.ExitCode(), p.out.String()
}

// stop sends SIGTERM and waits for the process to exit.
func (p *managerProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	Eventually(p.done, 40*time.Second).Should(BeClosed())
}

func (p *managerProcess) kill() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *managerProcess) log() string { return p.out.String() }

// unreachableKubeconfig writes a kubeconfig naming an address nothing listens on.
func unreachableKubeconfig() string {
	path := filepath.Join(GinkgoT().TempDir(), "unreachable")
	Expect(os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster:
    server: https://127.0.0.1:1
    insecure-skip-tls-verify: true
contexts:
- name: nowhere
  context: {cluster: nowhere, user: nobody}
current-context: nowhere
users:
- name: nobody
  user: {token: none}
`), 0o600)).To(Succeed())
	return path
}
