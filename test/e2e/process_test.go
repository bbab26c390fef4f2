// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// managerProcess is one running binding-controller-manager, its output kept for
// assertions and copied to the spec's output.
type managerProcess struct {
	*localplane.Process
	out *testkit.SyncBuffer
}

// startManager runs the binary with the test kubeconfig and args; it is stopped at the end
// of the spec unless the spec stops it first.
func startManager(args ...string) *managerProcess {
	return startManagerWithKubeconfig(kubeconfig, args...)
}

func startManagerWithKubeconfig(path string, args ...string) *managerProcess {
	args = append([]string{"--kubeconfig", path}, args...)
	out := &testkit.SyncBuffer{}
	w := io.MultiWriter(out, GinkgoWriter)
	proc, err := localplane.StartProcess(binary, args, w, w)
	Expect(err).NotTo(HaveOccurred())
	p := &managerProcess{Process: proc, out: out}
	DeferCleanup(p.Kill)
	return p
}

// runManager runs the binary to completion and returns its exit code and output.
func runManager(args ...string) (int, string) {
	p := startManager(args...)
	Eventually(p.Done(), 30*time.Second).Should(BeClosed())
	return p.Cmd.ProcessState.ExitCode(), p.out.String()
}

// stop sends SIGTERM and waits for the process to exit.
func (p *managerProcess) stop() {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	Eventually(p.Done(), 40*time.Second).Should(BeClosed())
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
