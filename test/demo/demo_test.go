// SPDX-License-Identifier: Apache-2.0

// Package demo runs 'make demo' and 'make demo-rollout' — internal/testenv/demoscript — as
// tests: the binary built from this tree, a real kube-apiserver and etcd, and the narrated
// story, which must report every step as behaving.
package demo

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/binding-controller/binding-controller/internal/testenv/demoscript"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// playDemo plays one of the demo's stories with a binary built from this tree and returns
// what it printed; a story that fails fails the test, with the manager's log.
func playDemo(t *testing.T, story func(context.Context, io.Writer, demoscript.Options) error) *bytes.Buffer {
	t.Helper()
	// envtest logs through controller-runtime; its chatter is not wanted here.
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	dir := t.TempDir()
	binary := buildManager(t, dir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logPath := filepath.Join(dir, "manager.log")
	var out bytes.Buffer
	err := story(ctx, &out, demoscript.Options{Manager: binary, LogPath: logPath})
	t.Logf("demo output:\n%s", out.String())
	if err != nil {
		if log, readErr := os.ReadFile(logPath); readErr == nil {
			t.Logf("manager log:\n%s", log)
		}
		t.Fatalf("demo: %v", err)
	}
	return &out
}

func TestDemo(t *testing.T) {
	out := playDemo(t, demoscript.Run)
	for _, want := range []string{
		"✓ Work nginx-687f7fb96f in karmada-es-member1 / member2 / member3",
		"✓ member1's Work stays terminating",
		"✓ member2 and member3 got their new Works ",
		`✓ member1 reported: Warning SyncWorkFailed "work karmada-es-member1/nginx-687f7fb96f is being deleted" on the binding and on the Deployment`,
		"✓ log: Failed to transform resourceBinding(default/nginx-deployment) to works. Error: work karmada-es-member1/nginx-687f7fb96f is being deleted.",
		"✓ member1's old Work released ",
		"✓ member1 got its new Work ",
		"All steps behaved",
		"stopped binding-controller-manager and the control plane",
	} {
		assertOutputHas(t, out.String(), want)
	}
	assertBehaved(t, out.String())
}

// buildManager builds the binary from this tree into dir, so the test never runs a stale one.
func buildManager(t *testing.T, dir string) string {
	t.Helper()
	binary, err := localplane.BuildManager(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return binary
}

// assertOutputHas fails when the demo's output lacks want.
func assertOutputHas(t *testing.T, out, want string) {
	t.Helper()
	if !strings.Contains(out, want) {
		t.Errorf("the demo's output lacks %q", want)
	}
}

// assertBehaved fails when the demo's output reports a step that did not behave, or the
// manager it started still runs.
func assertBehaved(t *testing.T, out string) {
	t.Helper()
	if strings.Contains(out, "✗") {
		t.Errorf("the demo reported a step that did not behave")
	}
	if m := regexp.MustCompile(`\(pid (\d+)\)`).FindStringSubmatch(out); m == nil {
		t.Errorf("the demo's output names no manager pid")
	} else if pid, _ := strconv.Atoi(m[1]); syscall.Kill(pid, 0) == nil {
		t.Errorf("the manager (pid %d) still runs after the demo", pid)
	}
}
