// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/binding-controller/binding-controller/internal/testenv/demoscript"
)

func TestDemoRollout(t *testing.T) {
	// envtest logs through controller-runtime; its chatter is not wanted here.
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	dir := t.TempDir()
	binary := buildManager(t, dir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logPath := filepath.Join(dir, "manager.log")
	var out bytes.Buffer
	err := demoscript.RunRollout(ctx, &out, demoscript.Options{Manager: binary, LogPath: logPath})
	t.Logf("demo output:\n%s", out.String())
	if err != nil {
		if log, readErr := os.ReadFile(logPath); readErr == nil {
			t.Logf("manager log:\n%s", log)
		}
		t.Fatalf("demo rollout: %v", err)
	}

	for _, want := range []string{
		"✓ a binding new to the policy runs its template at once: revision nginx-deployment-",
		"✓ member1 (stage canary) got nginx:1.28 ",
		"✓ member2 (stage rest) got nginx:1.28 ",
		"✓ member3 (stage rest) got nginx:1.28 ",
		"event Normal RolloutStageStarted: stage rest started: member2, member3",
		"event Normal RolloutComplete: revision nginx-deployment-",
		"✓ rollout Complete ",
		"✓ member1 (stage canary) got nginx:1.29 ",
		"event Warning RolloutClusterFailed: cluster member1 failed on revision nginx-deployment-",
		"event Warning RolloutHalted: rollout of nginx-deployment-",
		"event Warning RolloutRolledBack: rolled back to the previous revision: member1",
		"✓ member1's Work is back to nginx:1.28 ",
		"✓ member2 and member3 never got nginx:1.29: their Works were not written at all",
		"All steps behaved",
		"stopped binding-controller-manager and the control plane",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
	// The revision table at the steps that matter: the canary alone on the new image, then
	// member1 rolled back while member2 and member3 stay pending on the good revision.
	for _, row := range []string{
		`(?m)^ +member1 +canary +nginx-deployment-\w+ +Healthy +nginx:1\.28$\n +member2 +rest +nginx-deployment-\w+ +Pending +nginx:1\.27$`,
		`(?m)^ +member3 +rest +nginx-deployment-\w+ +Healthy +nginx:1\.28$`,
		`(?m)^ +member1 +canary +nginx-deployment-\w+ +RolledBack +nginx:1\.28 +Deployment default/nginx is Unhealthy$`,
		`(?m)^ +member2 +rest +nginx-deployment-\w+ +Pending +nginx:1\.28$\n +member3 +rest +nginx-deployment-\w+ +Pending +nginx:1\.28$`,
	} {
		if !regexp.MustCompile(row).MatchString(out.String()) {
			t.Errorf("the demo's revision tables lack a match for %s", row)
		}
	}
	assertBehaved(t, out.String())
}
