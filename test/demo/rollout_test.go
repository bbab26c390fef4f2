// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"regexp"
	"testing"

	"github.com/binding-controller/binding-controller/internal/testenv/demoscript"
)

func TestDemoRollout(t *testing.T) {
	out := playDemo(t, demoscript.RunRollout)
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
		assertOutputHas(t, out.String(), want)
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
