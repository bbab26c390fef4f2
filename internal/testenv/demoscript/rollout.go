// SPDX-License-Identifier: Apache-2.0

package demoscript

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/rolloutplan"
)

// The rollout story ('make demo-rollout'): Deployment default/nginx and its binding over
// member1..member3 under a RolloutPolicy whose canary stage is member1 and whose second
// stage is member2 and member3, one at a time. A good image rolls through stage by stage;
// a bad one, which the members report Unhealthy, halts at the canary and is rolled back.
const (
	rolloutPolicyName = "nginx"
	goodImage         = "nginx:1.28"
	badImage          = "nginx:1.29"
	canaryStage       = "canary"
	restStage         = "rest"
	// soak is each stage's minSuccessTime: long enough to see, short enough to wait for.
	soak = 3 * time.Second
)

// RunRollout plays the rollout story as Run plays the seed case.
func RunRollout(ctx context.Context, out io.Writer, opts Options) error {
	r := &rolloutDemo{revisions: map[string]string{}}
	return run(ctx, out, opts, story{
		title: "Staged rollouts: a change reaches the canary first, then the other clusters one at a time,\n" +
			"each step gated on health; a bad change halts at the canary and is rolled back.",
		// The manager looks at the health of a rollout in progress this often (5s by
		// default): the demo should not wait on it.
		managerArgs: []string{"--rollout-health-poll-interval=1s"},
		simulated: fmt.Sprintf("each member applies its Work and reports it Healthy, except %s: Unhealthy, as if it crashed",
			badImage),
		simulate: func(sim *executionsim.Simulator) { sim.ReportHealth(memberHealth) },
		play:     func(d *demo) error { r.demo = d; return r.play() },
		summary:  func(*demo) { r.summary() },
	})
}

func memberHealth(_ string, manifest *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	if imageOf(manifest.Object) == badImage {
		return workv1alpha1.ResourceUnhealthy
	}
	return workv1alpha1.ResourceHealthy
}

type rolloutDemo struct {
	*demo
	view *fleetView
	// firstImage is the Deployment's image when it is created.
	firstImage string
	// revisions are the binding's revisions by the image they hold, as the rollout named them.
	revisions map[string]string
	// canarySoak is how long after the canary reported the good image Healthy the next
	// cluster got it; rolledBack how long after the bad change the canary had its Work back.
	canarySoak, rolledBack time.Duration
}

func (r *rolloutDemo) play() error {
	r.t0 = time.Now()
	view, err := startFleetView(r.demo, map[string]time.Duration{canaryStage: soak, restStage: soak})
	if err != nil {
		return err
	}
	r.view = view
	for i, act := range []func() error{r.adopt, r.rollOutGood, r.haltBad} {
		if i > 0 {
			fmt.Fprintln(r.out)
			if err := r.pause(); err != nil {
				return err
			}
		}
		if err := act(); err != nil {
			return err
		}
	}
	return nil
}

// adopt creates the policy, the Deployment and its binding: a binding new to the policy
// runs its template at once, with nothing to roll out.
func (r *rolloutDemo) adopt() error {
	if err := r.c.Create(r.ctx, rolloutPolicy(r.members)); err != nil {
		return fmt.Errorf("creating the RolloutPolicy: %w", err)
	}
	r.say("Created RolloutPolicy %s/%s for Deployment %s/%s: stage %s (%s) soaks %s; then stage %s (%s) "+
		"one cluster at a time, soaks %s; rollbackOnFailure", namespace, rolloutPolicyName, namespace, templateName,
		canaryStage, r.members[0], soak, restStage, strings.Join(r.members[1:], ", "), soak)
	deployment := nginxDeployment()
	r.firstImage = deployment.Spec.Template.Spec.Containers[0].Image
	if err := r.c.Create(r.ctx, deployment); err != nil {
		return fmt.Errorf("creating the Deployment: %w", err)
	}
	binding := nginxBinding(string(uuid.NewUUID()), r.members)
	if err := r.c.Create(r.ctx, binding); err != nil {
		return fmt.Errorf("creating the binding: %w", err)
	}
	r.view.watchBinding(binding.UID)
	r.say("Created Deployment %s/%s (%s) and its ResourceBinding %s/%s → %s", namespace, templateName, r.firstImage,
		namespace, bindingName, strings.Join(r.members, ", "))
	revision, _, err := r.awaitComplete("", r.firstImage)
	if err != nil {
		return err
	}
	r.revisions[r.firstImage] = revision
	r.ok("a binding new to the policy runs its template at once: revision %s (%s) in %s, nothing to roll out",
		revision, r.firstImage, strings.Join(r.members, ", "))
	return nil
}

// rollOutGood changes the image to a good one and follows it through the stages.
func (r *rolloutDemo) rollOutGood() error {
	mark := r.view.mark()
	changedAt, err := r.changeImage(goodImage)
	if err != nil {
		return err
	}
	revision, completedAt, err := r.awaitComplete(r.revisions[r.firstImage], goodImage)
	if err != nil {
		return err
	}
	r.revisions[goodImage] = revision
	got := map[string]reach{}
	for _, m := range r.members {
		history := r.view.since(m, mark)
		reached, ok := reachOf(history, goodImage)
		if !ok {
			return r.fail(m+" got "+goodImage+" and reported it Healthy", "what its Work carried: %s", describeHistory(history))
		}
		got[m] = reached
	}
	canary, rest := r.members[0], r.members[1:]
	c := got[canary]
	r.ok("%s (stage %s) got %s %s after the change, Healthy %s later", canary, canaryStage, goodImage,
		secs(c.at.Sub(changedAt)), secs(c.healthyAt.Sub(c.at)))
	before := canary
	for i, m := range rest {
		prev := got[before]
		if got[m].seq < prev.healthySeq {
			return r.fail(m+" updated only once "+before+" was healthy", "%s got %s before %s reported Healthy", m, goodImage, before)
		}
		why := "the canary's soak"
		if i == 0 {
			r.canarySoak = got[m].at.Sub(prev.healthyAt)
		} else {
			why = "one at a time"
		}
		why = fmt.Sprintf("%s after %s reported Healthy (%s)", secs(got[m].at.Sub(prev.healthyAt)), before, why)
		r.ok("%s (stage %s) got %s %s after the change, %s; Healthy %s later", m, restStage, goodImage,
			secs(got[m].at.Sub(changedAt)), why, secs(got[m].healthyAt.Sub(got[m].at)))
		before = m
	}
	last := got[rest[len(rest)-1]]
	r.ok("rollout Complete %s after the change, %s after %s reported Healthy (the %s stage's soak): revision %s (%s) runs in every member",
		secs(completedAt.Sub(changedAt)), secs(completedAt.Sub(last.healthyAt)), rest[len(rest)-1], restStage, revision, goodImage)
	return nil
}

// reach is when a cluster's Work first carried an image, and when the member first
// reported it Healthy, in time and in the order of the Work watch.
type reach struct {
	seq, healthySeq int
	at, healthyAt   time.Time
}

// reachOf finds when history first carried image and when that was first Healthy.
func reachOf(history []carriedManifest, image string) (reach, bool) {
	i := slices.IndexFunc(history, func(c carriedManifest) bool { return c.image == image })
	if i < 0 {
		return reach{}, false
	}
	j := slices.IndexFunc(history[i:], func(c carriedManifest) bool {
		return c.image == image && c.health == workv1alpha1.ResourceHealthy
	})
	if j < 0 {
		return reach{}, false
	}
	healthy := history[i+j]
	return reach{seq: history[i].seq, at: history[i].at, healthySeq: healthy.reportedSeq, healthyAt: healthy.reportedAt}, true
}

// haltBad changes the image to a bad one: the canary reports it Unhealthy, the rollout
// halts there and gives the canary its previous Work back.
func (r *rolloutDemo) haltBad() error {
	canary, rest := r.members[0], r.members[1:]
	before := map[string]carriedManifest{}
	for _, m := range r.members {
		before[m], _ = r.view.current(m)
	}
	mark := r.view.mark()
	changedAt, err := r.changeImage(badImage)
	if err != nil {
		return err
	}
	var bad carriedManifest
	if err := r.await(fmt.Sprintf("%s gets %s and reports it Unhealthy", canary, badImage), func() (bool, string) {
		st := r.view.refresh()
		history := r.view.since(canary, mark)
		i := slices.IndexFunc(history, func(c carriedManifest) bool { return c.image == badImage })
		if i >= 0 {
			bad = history[i]
		}
		return i >= 0 && bad.health == workv1alpha1.ResourceUnhealthy, st.describe(r.members)
	}); err != nil {
		return err
	}
	r.ok("%s (stage %s) got %s %s after the change and reported it Unhealthy %s later", canary, canaryStage, badImage,
		secs(bad.at.Sub(changedAt)), secs(bad.reportedAt.Sub(bad.at)))
	if err := r.awaitRolledBack(canary, before[canary]); err != nil {
		return err
	}
	back, _ := r.view.current(canary)
	r.rolledBack = back.at.Sub(changedAt)
	r.ok("%s's Work is back to %s %s after the change, the very manifest it carried before (generation %d → %d → %d)",
		canary, before[canary].image, secs(r.rolledBack), before[canary].generation, bad.generation, back.generation)
	for _, m := range rest {
		if history := r.view.since(m, mark); len(history) > 0 {
			return r.fail(m+" never gets "+badImage, "its Work was written: %s", describeHistory(history))
		}
	}
	r.ok("%s never got %s: their Works were not written at all (%s)", strings.Join(rest, " and "), badImage,
		describeGenerations(rest, before))
	return r.awaitWarnings()
}

// awaitRolledBack waits for the rollout to be RolledBack with cluster on the manifest it
// carried before.
func (r *rolloutDemo) awaitRolledBack(cluster string, before carriedManifest) error {
	good := r.revisions[goodImage]
	return r.await(fmt.Sprintf("the rollout halted and rolled back, %s on %s again", cluster, before.image), func() (bool, string) {
		st := r.view.refresh()
		cur, _ := r.view.current(cluster)
		done := st.rollout != nil && st.rollout.Status.Phase == rolloutsv1alpha1.PhaseRolledBack &&
			st.rollout.Status.Revision != good && cur.generation > before.generation &&
			reflect.DeepEqual(cur.manifest, before.manifest)
		return done, st.describe(r.members)
	})
}

// awaitWarnings waits for the Warning events a halted rollout leaves on the binding.
func (r *rolloutDemo) awaitWarnings() error {
	want := []string{rolloutplan.ReasonClusterFailed, rolloutplan.ReasonRolloutHalted, rolloutplan.ReasonRolloutRolledBack}
	var seen []string
	if err := r.await("Warning events "+strings.Join(want, ", ")+" on the binding", func() (bool, string) {
		r.view.refresh()
		seen = seen[:0]
		for _, e := range r.view.rolloutEvents() {
			if e.Type == corev1.EventTypeWarning && slices.Contains(want, e.Reason) && !slices.Contains(seen, e.Reason) {
				seen = append(seen, e.Reason)
			}
		}
		return len(seen) == len(want), "Warning events: " + strings.Join(seen, ", ")
	}); err != nil {
		return err
	}
	r.ok("the binding carries Warning events %s, as kubectl describe shows them", strings.Join(want, ", "))
	return nil
}

// awaitComplete waits for the rollout to be Complete on a revision other than from, with
// image in every member, and returns that revision and when the demo first saw it
// Complete. A rollout (from set) has also told so in an event; a binding new to the
// policy has nothing to tell.
func (r *rolloutDemo) awaitComplete(from, image string) (revision string, completedAt time.Time, err error) {
	err = r.await(fmt.Sprintf("%s in every member and the rollout Complete", image), func() (bool, string) {
		st := r.view.refresh()
		if st.rollout == nil {
			return false, st.describe(r.members)
		}
		revision = st.rollout.Status.Revision
		done := st.rollout.Status.Phase == rolloutsv1alpha1.PhaseComplete && revision != "" && revision != from
		for _, m := range r.members {
			done = done && st.images[m] == image
		}
		if done && completedAt.IsZero() {
			completedAt = time.Now()
		}
		if from != "" && !slices.ContainsFunc(r.view.rolloutEvents(), func(e corev1.Event) bool {
			return e.Reason == rolloutplan.ReasonRolloutComplete && strings.Contains(e.Message, revision)
		}) {
			return false, st.describe(r.members) + ", no event " + rolloutplan.ReasonRolloutComplete + " yet"
		}
		return done, st.describe(r.members)
	})
	return revision, completedAt, err
}

// changeImage changes the Deployment's image and tells the binding, as Karmada's detector
// does by writing the template's resourceVersion into it.
func (r *rolloutDemo) changeImage(image string) (time.Time, error) {
	deployment := &appsv1.Deployment{}
	if err := r.c.Get(r.ctx, client.ObjectKey{Namespace: namespace, Name: templateName}, deployment); err != nil {
		return time.Time{}, err
	}
	base := deployment.DeepCopy()
	deployment.Spec.Template.Spec.Containers[0].Image = image
	if err := r.c.Patch(r.ctx, deployment, client.MergeFrom(base)); err != nil {
		return time.Time{}, fmt.Errorf("changing the Deployment's image: %w", err)
	}
	binding := &workv1alpha2.ResourceBinding{}
	if err := r.c.Get(r.ctx, client.ObjectKey{Namespace: namespace, Name: bindingName}, binding); err != nil {
		return time.Time{}, err
	}
	baseBinding := binding.DeepCopy()
	binding.Spec.Resource.ResourceVersion = deployment.ResourceVersion
	if err := r.c.Patch(r.ctx, binding, client.MergeFrom(baseBinding)); err != nil {
		return time.Time{}, fmt.Errorf("updating the binding: %w", err)
	}
	changedAt := time.Now()
	r.say("Changed Deployment %s/%s's image to %s (the binding's spec.resource.resourceVersion follows, as the detector writes it)",
		namespace, templateName, image)
	return changedAt, nil
}

func (r *rolloutDemo) summary() {
	canary, rest := r.members[0], r.members[1:]
	fmt.Fprintf(r.out, "\nAll steps behaved (%s):\n", secs(time.Since(r.t0)))
	fmt.Fprintf(r.out, "  • %s went stage by stage: %s (canary), soaked %s, then %s one at a time, each once the one before was Healthy.\n",
		goodImage, canary, secs(r.canarySoak), strings.Join(rest, " and "))
	fmt.Fprintf(r.out, "  • %s was Unhealthy on %s: the rollout halted there, %s never got it, and %s had its previous Work back %s after the change.\n",
		badImage, canary, strings.Join(rest, " and "), canary, secs(r.rolledBack))
	fmt.Fprintf(r.out, "  • The Deployment still asks for %s: fix or revert it, and a new rollout starts at the canary.\n", badImage)
	fmt.Fprintf(r.out, "  The manager's full log: %s\n", r.logPath)
}

func rolloutPolicy(members []string) *rolloutsv1alpha1.RolloutPolicy {
	return &rolloutsv1alpha1.RolloutPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: rolloutPolicyName},
		Spec: rolloutsv1alpha1.RolloutPolicySpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: templateName}},
			Stages: []rolloutsv1alpha1.RolloutStage{
				{Name: canaryStage, Clusters: rolloutsv1alpha1.StageClusters{Names: members[:1]},
					MinSuccessTime: &metav1.Duration{Duration: soak}},
				{Name: restStage, Clusters: rolloutsv1alpha1.StageClusters{Names: members[1:]},
					MaxConcurrency: ptr.To(intstr.FromInt32(1)), MinSuccessTime: &metav1.Duration{Duration: soak}},
			},
			RollbackOnFailure: true,
		},
	}
}

// describe says what the view holds, for failure messages.
func (st fleetState) describe(members []string) string {
	parts := []string{"no BindingRollout yet"}
	if st.rollout != nil {
		s := st.rollout.Status
		parts = []string{fmt.Sprintf("rollout %s at revision %s, stage %q", s.Phase, s.Revision, s.Stage)}
		for _, c := range s.Clusters {
			parts = append(parts, fmt.Sprintf("%s %s on %s", c.Name, c.State, c.Revision))
		}
	}
	for _, m := range members {
		parts = append(parts, fmt.Sprintf("%s's Work: %q", m, st.images[m]))
	}
	return strings.Join(parts, ", ")
}

func describeHistory(history []carriedManifest) string {
	if len(history) == 0 {
		return "nothing new"
	}
	var parts []string
	for _, c := range history {
		parts = append(parts, fmt.Sprintf("%s (generation %d, reported %q)", c.image, c.generation, c.health))
	}
	return strings.Join(parts, " → ")
}

func describeGenerations(clusters []string, carried map[string]carriedManifest) string {
	var parts []string
	for _, m := range clusters {
		parts = append(parts, fmt.Sprintf("%s still %s at generation %d", m, carried[m].image, carried[m].generation))
	}
	return strings.Join(parts, ", ")
}
