// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	"encoding/json"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// badImage runs Unhealthy on every member; every other image runs Healthy.
const badImage = "nginx:bad"

func imageOf(manifest *unstructured.Unstructured) string { return testkit.ImageOf(manifest) }

// fleetImages is one consistent read of the image each member's Work carries.
func fleetImages(ns string) map[string]string {
	images, err := tryFleetImages(ns)
	Expect(err).NotTo(HaveOccurred())
	return images
}

func tryFleetImages(ns string) (map[string]string, error) { return testkit.WorkImages(ctx, k8s, ns) }

// manifestsOf is each member's Work manifest, as stored.
func manifestsOf(ns string) map[string]map[string]any {
	works := &workv1alpha1.WorkList{}
	Expect(k8s.List(ctx, works)).To(Succeed())
	out := map[string]map[string]any{}
	for _, w := range works.Items {
		if w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotation] != ns {
			continue
		}
		m := map[string]any{}
		Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &m)).To(Succeed())
		out[w.Namespace] = m
	}
	return out
}

// snapshots records fleetImages every few milliseconds until stopped, so a spec can check
// that no moment ever broke the rollout's order.
type snapshots struct {
	mu   sync.Mutex
	seen []map[string]string
	stop chan struct{}
	done chan struct{}
}

func recordImages(ns string) *snapshots {
	return recordSnapshots(func() (map[string]string, error) { return tryFleetImages(ns) })
}

// recordSnapshots records read's answers every few milliseconds until halted.
func recordSnapshots(read func() (map[string]string, error)) *snapshots {
	s := &snapshots{stop: make(chan struct{}), done: make(chan struct{})}
	// A failed spec ends before it halts the recording.
	DeferCleanup(func() {
		select {
		case <-s.done:
		default:
			s.halt()
		}
	})
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			images, err := read()
			if err != nil {
				// The suite is ending, or the API server is busy: the next read counts.
				continue
			}
			s.mu.Lock()
			s.seen = append(s.seen, images)
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *snapshots) halt() []map[string]string {
	close(s.stop)
	<-s.done
	return s.seen
}

func rolloutOf(ns, name string) func() rolloutsv1alpha1.BindingRolloutStatus {
	return func() rolloutsv1alpha1.BindingRolloutStatus {
		r := &rolloutsv1alpha1.BindingRollout{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, r); err != nil {
			return rolloutsv1alpha1.BindingRolloutStatus{}
		}
		return r.Status
	}
}

func phaseOf(ns, name string) func() rolloutsv1alpha1.RolloutPhase {
	return func() rolloutsv1alpha1.RolloutPhase { return rolloutOf(ns, name)().Phase }
}

// changeImage changes the Deployment's image and tells the binding, as Karmada's detector
// does by writing the template's resourceVersion into it.
func changeImage(d *appsv1.Deployment, rb *workv1alpha2.ResourceBinding, image string) {
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
	d.Spec.Template.Spec.Containers[0].Image = image
	Expect(k8s.Update(ctx, d)).To(Succeed())
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)).To(Succeed())
	rb.Spec.Resource.ResourceVersion = d.ResourceVersion
	Expect(k8s.Update(ctx, rb)).To(Succeed())
}

var _ = Describe("Staged rollouts", func() {
	It("roll a healthy change out stage by stage, then halt an unhealthy one at the canary and give it back its exact Work", func() {
		sim.ReportHealth(func(_ string, m *unstructured.Unstructured) workv1alpha1.ResourceHealth {
			if imageOf(m) == badImage {
				return workv1alpha1.ResourceUnhealthy
			}
			return workv1alpha1.ResourceHealthy
		})
		DeferCleanup(func() { sim.ReportHealth(nil) })

		ns := newNamespace()
		Expect(k8s.Create(ctx, &rolloutsv1alpha1.RolloutPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: rolloutsv1alpha1.RolloutPolicySpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
				Stages: []rolloutsv1alpha1.RolloutStage{
					{Name: "canary", Clusters: rolloutsv1alpha1.StageClusters{Names: []string{"member1"}}},
					{Name: "rest", Clusters: rolloutsv1alpha1.StageClusters{Names: []string{"member2", "member3"}},
						MaxConcurrency: ptr.To(intstr.FromInt32(1))},
				},
				RollbackOnFailure: true,
			},
		})).To(Succeed())
		d := testkit.Deployment(ns, "web")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		rb := testkit.Binding(ns, "web-deployment", "id-web", d, members...)
		Expect(k8s.Create(ctx, rb)).To(Succeed())

		By("a binding new to the policy gets the template at once, and its rollout is Complete")
		Eventually(func() map[string]string { return fleetImages(ns) }).Should(Equal(map[string]string{
			"member1": "nginx:1.27", "member2": "nginx:1.27", "member3": "nginx:1.27"}))
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseComplete))

		By("a good image reaches member1, then member2, then member3")
		seen := recordImages(ns)
		changeImage(d, rb, "nginx:1.28")
		Eventually(func() map[string]string { return fleetImages(ns) }, time.Minute).Should(Equal(map[string]string{
			"member1": "nginx:1.28", "member2": "nginx:1.28", "member3": "nginx:1.28"}))
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseComplete))
		for _, s := range seen.halt() {
			if s["member1"] == "nginx:1.27" {
				Expect(s["member2"]).To(Equal("nginx:1.27"), "member2 updated before the canary: %v", s)
				Expect(s["member3"]).To(Equal("nginx:1.27"), "member3 updated before the canary: %v", s)
			}
			if s["member2"] == "nginx:1.27" {
				Expect(s["member3"]).To(Equal("nginx:1.27"), "member3 updated beside member2 (maxConcurrency 1): %v", s)
			}
		}
		Eventually(eventsOn(ns, "ResourceBinding", "web-deployment")).Should(ContainElements(
			ContainSubstring("Normal RolloutStageStarted: stage canary started: member1"),
			ContainSubstring("Normal RolloutStageStarted: stage rest started: member2, member3"),
			ContainSubstring("Normal RolloutComplete: revision web-deployment-")))
		Expect(metricValue("binding_controller_rollouts", "phase", "Complete")).To(BeNumerically(">=", 1))
		Expect(metricValue("binding_controller_rollout_stage_duration_seconds", "", "")).To(BeNumerically(">=", 2),
			"the canary and rest stages each observed")
		before := manifestsOf(ns)

		By("a bad image fails at member1, halts, and member1 gets its Work back as it was")
		seen = recordImages(ns)
		changeImage(d, rb, badImage)
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseRolledBack))
		for _, member := range []string{"karmada-es-member1", "karmada-es-member2", "karmada-es-member3"} {
			Eventually(func() map[string]any { return manifestsOf(ns)[member] }).Should(Equal(before[member]), member)
		}
		for _, s := range seen.halt() {
			Expect(s["member2"]).To(Equal("nginx:1.28"), "member2 got the bad image: %v", s)
			Expect(s["member3"]).To(Equal("nginx:1.28"), "member3 got the bad image: %v", s)
		}
		Expect(metricValue("binding_controller_rollouts", "phase", "RolledBack")).To(BeNumerically(">=", 1))
		status := rolloutOf(ns, "web-deployment")()
		Expect(status.Clusters[0]).To(And(
			HaveField("Name", "member1"), HaveField("State", rolloutsv1alpha1.ClusterRolledBack)))
		Eventually(eventsOn(ns, "ResourceBinding", "web-deployment")).Should(ContainElements(
			ContainSubstring("Warning RolloutClusterFailed: cluster member1 failed on revision"),
			ContainSubstring("Warning RolloutHalted"),
			ContainSubstring("Warning RolloutRolledBack: rolled back to the previous revision: member1")))
	})

	It("leave a binding under no policy as Karmada would: no rollout object, no revision", func() {
		ns := newNamespace()
		d := testkit.Deployment(ns, "plain")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		rb := testkit.Binding(ns, "plain-deployment", "id-plain", d, members...)
		Expect(k8s.Create(ctx, rb)).To(Succeed())
		Eventually(func() map[string]string { return fleetImages(ns) }).Should(HaveLen(3))
		rollouts := &rolloutsv1alpha1.BindingRolloutList{}
		Expect(k8s.List(ctx, rollouts, client.InNamespace(ns))).To(Succeed())
		Expect(rollouts.Items).To(BeEmpty())
		revisions := &appsv1.ControllerRevisionList{}
		Expect(k8s.List(ctx, revisions, client.InNamespace(ns))).To(Succeed())
		Expect(revisions.Items).To(BeEmpty())
	})
})

var _ = Describe("Staged rollouts steered by hand", func() {
	It("wait for kubectl annotate to approve a gated stage, freeze while paused, and end when the policy goes", func() {
		sim.ReportHealth(func(string, *unstructured.Unstructured) workv1alpha1.ResourceHealth {
			return workv1alpha1.ResourceHealthy
		})
		DeferCleanup(func() { sim.ReportHealth(nil) })

		ns := newNamespace()
		policy := &rolloutsv1alpha1.RolloutPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gated"},
			Spec: rolloutsv1alpha1.RolloutPolicySpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
				Stages: []rolloutsv1alpha1.RolloutStage{
					{Name: "canary", Clusters: rolloutsv1alpha1.StageClusters{Names: []string{"member1"}}},
					{Name: "rest", Clusters: rolloutsv1alpha1.StageClusters{Names: []string{"member2", "member3"}}, RequireApproval: true},
				},
			},
		}
		Expect(k8s.Create(ctx, policy)).To(Succeed())
		d := testkit.Deployment(ns, "web")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		rb := testkit.Binding(ns, "web-deployment", "id-web", d, members...)
		Expect(k8s.Create(ctx, rb)).To(Succeed())
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseComplete))

		annotate := func(key, value string) {
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)).To(Succeed())
			base := rb.DeepCopy()
			if value == "" {
				delete(rb.Annotations, key)
			} else {
				metav1.SetMetaDataAnnotation(&rb.ObjectMeta, key, value)
			}
			Expect(k8s.Patch(ctx, rb, client.MergeFrom(base))).To(Succeed())
		}

		By("the canary gets the change; the gated stage waits for its approval")
		changeImage(d, rb, "nginx:1.28")
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseWaitingForApproval))
		Expect(fleetImages(ns)).To(Equal(map[string]string{"member1": "nginx:1.28", "member2": "nginx:1.27", "member3": "nginx:1.27"}))

		By("paused, an approval opens nothing")
		annotate(rolloutsv1alpha1.PausedAnnotation, "true")
		Eventually(phaseOf(ns, "web-deployment")).Should(Equal(rolloutsv1alpha1.PhasePaused))
		annotate(rolloutsv1alpha1.ApproveAnnotation, "rest")
		Consistently(func() map[string]string { return fleetImages(ns) }, 2*time.Second).Should(Equal(
			map[string]string{"member1": "nginx:1.28", "member2": "nginx:1.27", "member3": "nginx:1.27"}))

		By("resumed, the approved stage goes")
		annotate(rolloutsv1alpha1.PausedAnnotation, "")
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseComplete))
		Expect(fleetImages(ns)).To(Equal(map[string]string{"member1": "nginx:1.28", "member2": "nginx:1.28", "member3": "nginx:1.28"}))

		By("the next change waits at the gate again; deleting the policy ends the rollout, as in Karmada")
		annotate(rolloutsv1alpha1.ApproveAnnotation, "")
		changeImage(d, rb, "nginx:1.29")
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseWaitingForApproval))
		Expect(k8s.Delete(ctx, policy)).To(Succeed())
		Eventually(func() map[string]string { return fleetImages(ns) }, time.Minute).Should(Equal(
			map[string]string{"member1": "nginx:1.29", "member2": "nginx:1.29", "member3": "nginx:1.29"}))
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-deployment"}, &rolloutsv1alpha1.BindingRollout{})
		}).Should(Satisfy(apierrors.IsNotFound))
		Eventually(func() []appsv1.ControllerRevision {
			revisions := &appsv1.ControllerRevisionList{}
			Expect(k8s.List(ctx, revisions, client.InNamespace(ns))).To(Succeed())
			return revisions.Items
		}).Should(BeEmpty())
	})
})
