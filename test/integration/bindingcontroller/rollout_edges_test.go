// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// webOnly selects the Deployment web of the policy's namespace.
var webOnly = []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}

func stageOf(name string, clusters ...string) rolloutsv1alpha1.RolloutStage {
	return rolloutsv1alpha1.RolloutStage{Name: name, Clusters: rolloutsv1alpha1.StageClusters{Names: clusters}}
}

func gatedStageOf(name string, clusters ...string) rolloutsv1alpha1.RolloutStage {
	s := stageOf(name, clusters...)
	s.RequireApproval = true
	return s
}

func createRolloutPolicy(ns, name string, spec rolloutsv1alpha1.RolloutPolicySpec) {
	Expect(k8s.Create(ctx, &rolloutsv1alpha1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec})).To(Succeed())
}

// createWeb creates the Deployment web (nginx:1.27) and its binding web-deployment,
// scheduled to clusters, and waits until its rollout has taken it as it is.
func createWeb(ns string, clusters ...string) (*appsv1.Deployment, *workv1alpha2.ResourceBinding) {
	d := testkit.Deployment(ns, "web")
	Expect(k8s.Create(ctx, d)).To(Succeed())
	rb := testkit.Binding(ns, "web-deployment", "id-web", d, clusters...)
	Expect(k8s.Create(ctx, rb)).To(Succeed())
	Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseComplete))
	return d, rb
}

// joinMember joins a cluster of the spec's own. It stays joined when the spec ends, as
// the bindings that target it stay: a Cluster gone would have their syncs retried for
// the rest of the suite.
func joinMember(name string) {
	Expect(testkit.JoinClusters(ctx, k8s, name)).To(Succeed())
}

// reportHealthyHolding reports every Work Healthy, except that the Works carrying image
// get no status at all until the returned release is called: their clusters stay
// pending on it, the way a member that is slow to roll the image out keeps them.
func reportHealthyHolding(image string) (release func()) {
	var released atomic.Bool
	sim.ReportHealth(func(_ string, m *unstructured.Unstructured) workv1alpha1.ResourceHealth {
		if imageOf(m) == image && !released.Load() {
			return ""
		}
		return workv1alpha1.ResourceHealthy
	})
	DeferCleanup(func() { sim.ReportHealth(nil) })
	return func() { released.Store(true) }
}

func reportAllHealthy() {
	sim.ReportHealth(func(string, *unstructured.Unstructured) workv1alpha1.ResourceHealth {
		return workv1alpha1.ResourceHealthy
	})
	DeferCleanup(func() { sim.ReportHealth(nil) })
}

// setAnnotation sets (or, with value "", removes) an annotation on the binding, as
// kubectl annotate does.
func setAnnotation(rb *workv1alpha2.ResourceBinding, key, value string) {
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)).To(Succeed())
	base := rb.DeepCopy()
	if value == "" {
		delete(rb.Annotations, key)
	} else {
		metav1.SetMetaDataAnnotation(&rb.ObjectMeta, key, value)
	}
	Expect(k8s.Patch(ctx, rb, client.MergeFrom(base))).To(Succeed())
}

// reschedule gives the binding new target clusters, as Karmada's scheduler does.
func reschedule(rb *workv1alpha2.ResourceBinding, targets ...workv1alpha2.TargetCluster) {
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)).To(Succeed())
	rb.Spec.Clusters = targets
	rb.Spec.Replicas = 0
	for _, t := range targets {
		rb.Spec.Replicas += t.Replicas
	}
	Expect(k8s.Update(ctx, rb)).To(Succeed())
}

func onReplicas(replicas int32, clusters ...string) []workv1alpha2.TargetCluster {
	out := make([]workv1alpha2.TargetCluster, len(clusters))
	for i, c := range clusters {
		out[i] = workv1alpha2.TargetCluster{Name: c, Replicas: replicas}
	}
	return out
}

// workloadsOf is what each member's Work runs, as "image xreplicas".
func workloadsOf(ns string) func() map[string]string {
	return func() map[string]string {
		out := map[string]string{}
		for namespace, m := range manifestsOf(ns) {
			u := &unstructured.Unstructured{Object: m}
			// As JSON decodes it: a float64.
			replicas, _, _ := unstructured.NestedFieldNoCopy(m, "spec", "replicas")
			out[strings.TrimPrefix(namespace, workv1alpha1.ExecutionNamespacePrefix)] = fmt.Sprintf("%s x%v", imageOf(u), replicas)
		}
		return out
	}
}

func fleetOf(ns string) func() map[string]string {
	return func() map[string]string { return fleetImages(ns) }
}

// clusterStatus is the rollout's record of one cluster (zero when it has none).
func clusterStatus(ns, binding, cluster string) func() rolloutsv1alpha1.ClusterRolloutStatus {
	return func() rolloutsv1alpha1.ClusterRolloutStatus {
		for _, c := range rolloutOf(ns, binding)().Clusters {
			if c.Name == cluster {
				return c
			}
		}
		return rolloutsv1alpha1.ClusterRolloutStatus{}
	}
}

var _ = Describe("Staged rollouts at the edges", func() {
	It("start a superseding revision again at the first stage, leaving the clusters not reached on what they run", func() {
		release := reportHealthyHolding("nginx:1.29")
		joinMember("member10")
		ns := newNamespace()
		createRolloutPolicy(ns, "web", rolloutsv1alpha1.RolloutPolicySpec{ResourceSelectors: webOnly,
			Stages: []rolloutsv1alpha1.RolloutStage{stageOf("canary", "member1"), stageOf("middle", "member2"),
				gatedStageOf("rest", "member3", "member10")}})
		d, rb := createWeb(ns, members...)
		original := rolloutOf(ns, "web-deployment")().Revision
		seen := recordImages(ns)

		By("1.28 reaches the canary and the middle stage, then waits at the gate of the rest")
		changeImage(d, rb, "nginx:1.28")
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseWaitingForApproval))
		Expect(fleetImages(ns)).To(Equal(map[string]string{"member1": "nginx:1.28", "member2": "nginx:1.28", "member3": "nginx:1.27"}))
		superseded := rolloutOf(ns, "web-deployment")().Revision

		By("1.29 supersedes it and starts at the canary again: member2 keeps 1.28, member3 keeps 1.27")
		changeImage(d, rb, "nginx:1.29")
		Eventually(rolloutOf(ns, "web-deployment")).Should(And(
			HaveField("Revision", Not(BeElementOf(original, superseded))),
			HaveField("Phase", rolloutsv1alpha1.PhaseProgressing), HaveField("Stage", "canary")))
		Expect(fleetImages(ns)).To(Equal(map[string]string{"member1": "nginx:1.29", "member2": "nginx:1.28", "member3": "nginx:1.27"}))
		Expect(clusterStatus(ns, "web-deployment", "member2")()).To(HaveField("PreviousRevision", superseded))
		Expect(clusterStatus(ns, "web-deployment", "member3")()).To(HaveField("PreviousRevision", original))
		Eventually(eventsOn(ns, "ResourceBinding", "web-deployment")).Should(ContainElement(
			HaveSuffix("Normal RolloutSuperseded: revision %s supersedes the rollout of %s", rolloutOf(ns, "web-deployment")().Revision, superseded)))

		By("a cluster joining the gated stage meanwhile gets what member3 runs there, never the superseded 1.28")
		reschedule(rb, onReplicas(1, "member1", "member2", "member3", "member10")...)
		want := map[string]string{"member1": "nginx:1.29", "member2": "nginx:1.28", "member3": "nginx:1.27", "member10": "nginx:1.27"}
		Eventually(fleetOf(ns)).Should(Equal(want))
		// The canary is not healthy on 1.29 yet: nothing else may move.
		Consistently(fleetOf(ns), time.Second).Should(Equal(want))

		By("healthy on the canary, 1.29 reaches member2 and waits at the gate; approved, member3 and member10")
		release()
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseWaitingForApproval))
		Expect(fleetImages(ns)).To(Equal(map[string]string{"member1": "nginx:1.29", "member2": "nginx:1.29",
			"member3": "nginx:1.27", "member10": "nginx:1.27"}))
		setAnnotation(rb, rolloutsv1alpha1.ApproveAnnotation, "rest")
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseComplete))
		Expect(fleetImages(ns)).To(Equal(map[string]string{"member1": "nginx:1.29", "member2": "nginx:1.29",
			"member3": "nginx:1.29", "member10": "nginx:1.29"}))

		member2Moved := false
		for _, s := range seen.halt() {
			Expect(s).To(HaveKey("member1"), "a cluster without a Work: %v", s)
			Expect(s).To(HaveKey("member2"), "a cluster without a Work: %v", s)
			Expect(s).To(HaveKey("member3"), "a cluster without a Work: %v", s)
			Expect(s["member3"]).NotTo(Equal("nginx:1.28"), "member3 got the superseded revision: %v", s)
			Expect(s["member10"]).NotTo(Equal("nginx:1.28"), "member10 got the superseded revision: %v", s)
			if s["member1"] == "nginx:1.27" {
				Expect(s["member2"]).To(Equal("nginx:1.27"), "member2 updated before the canary: %v", s)
			}
			if s["member2"] == "nginx:1.29" {
				Expect(s["member1"]).To(Equal("nginx:1.29"), "member2 got 1.29 before the canary: %v", s)
			}
			if s["member3"] == "nginx:1.29" || s["member10"] == "nginx:1.29" {
				Expect(s["member2"]).To(Equal("nginx:1.29"), "the gated stage got 1.29 before the middle one: %v", s)
			}
			member2Moved = member2Moved || s["member2"] == "nginx:1.28"
			if member2Moved {
				Expect(s["member2"]).NotTo(Equal("nginx:1.27"), "member2 went back to the original: %v", s)
			}
		}
	})

	It("re-render the clusters held back on a new schedule, place a joining cluster by its stage, and drop a leaving one", func() {
		reportAllHealthy()
		joinMember("member11")
		joinMember("member12")
		ns := newNamespace()
		createRolloutPolicy(ns, "web", rolloutsv1alpha1.RolloutPolicySpec{ResourceSelectors: webOnly,
			Stages: []rolloutsv1alpha1.RolloutStage{stageOf("canary", "member1", "member11"),
				gatedStageOf("rest", "member2", "member3", "member12")}})
		d := testkit.Deployment(ns, "web")
		d.Spec.Replicas = ptr.To[int32](6)
		Expect(k8s.Create(ctx, d)).To(Succeed())
		rb := testkit.Binding(ns, "web-deployment", "id-web", d)
		rb.Spec.Replicas, rb.Spec.Clusters = 6, onReplicas(2, members...)
		Expect(k8s.Create(ctx, rb)).To(Succeed())
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseComplete))

		changeImage(d, rb, "nginx:1.28")
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseWaitingForApproval))
		Expect(workloadsOf(ns)()).To(Equal(map[string]string{
			"member1": "nginx:1.28 x2", "member2": "nginx:1.27 x2", "member3": "nginx:1.27 x2"}))
		seen := recordImages(ns)

		By("rescheduled: member3 leaves, its replicas move to member2, member11 joins the canary and member12 the gated stage")
		reschedule(rb, workv1alpha2.TargetCluster{Name: "member1", Replicas: 1}, workv1alpha2.TargetCluster{Name: "member11", Replicas: 1},
			workv1alpha2.TargetCluster{Name: "member2", Replicas: 3}, workv1alpha2.TargetCluster{Name: "member12", Replicas: 1})
		Eventually(workloadsOf(ns)).Should(Equal(map[string]string{
			"member1": "nginx:1.28 x1", "member11": "nginx:1.28 x1", "member2": "nginx:1.27 x3", "member12": "nginx:1.27 x1"}))
		Eventually(rolloutOf(ns, "web-deployment"), time.Minute).Should(And(
			HaveField("Phase", rolloutsv1alpha1.PhaseWaitingForApproval),
			HaveField("TotalClusters", BeEquivalentTo(4)), HaveField("UpdatedClusters", BeEquivalentTo(2))))
		for _, s := range seen.halt() {
			Expect(s).To(HaveKey("member1"), "a cluster without a Work: %v", s)
			Expect(s).To(HaveKey("member2"), "a cluster without a Work: %v", s)
			Expect(s["member2"]).To(Equal("nginx:1.27"), "member2 updated before its stage: %v", s)
			Expect(s["member12"]).NotTo(Equal("nginx:1.28"), "member12 updated before its stage: %v", s)
			Expect(s["member11"]).NotTo(Equal("nginx:1.27"), "member11 joined a done stage on the old revision: %v", s)
		}

		By("approved, the gated stage gets 1.28 on its new replicas")
		setAnnotation(rb, rolloutsv1alpha1.ApproveAnnotation, "rest")
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseComplete))
		Expect(workloadsOf(ns)()).To(Equal(map[string]string{
			"member1": "nginx:1.28 x1", "member11": "nginx:1.28 x1", "member2": "nginx:1.28 x3", "member12": "nginx:1.28 x1"}))
	})

	It("stop while the template is gone, keeping every Work, and resume at the same stage once it is back", func() {
		reportAllHealthy()
		ns := newNamespace()
		createRolloutPolicy(ns, "web", rolloutsv1alpha1.RolloutPolicySpec{ResourceSelectors: webOnly,
			Stages: []rolloutsv1alpha1.RolloutStage{stageOf("canary", "member1"), gatedStageOf("rest", "member2", "member3")}})
		d, rb := createWeb(ns, members...)
		changeImage(d, rb, "nginx:1.28")
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseWaitingForApproval))
		waiting := map[string]string{"member1": "nginx:1.28", "member2": "nginx:1.27", "member3": "nginx:1.27"}
		Expect(fleetImages(ns)).To(Equal(waiting))
		revision := rolloutOf(ns, "web-deployment")().Revision
		seen := recordImages(ns)

		By("the template deleted, the sync the approval brings stops there: nothing moves")
		Expect(k8s.Delete(ctx, d)).To(Succeed())
		setAnnotation(rb, rolloutsv1alpha1.ApproveAnnotation, "rest")
		Eventually(worksSyncedOn(ns, "web-deployment")).Should(ContainSubstring("resource template not found"))
		Consistently(fleetOf(ns), 2*time.Second).Should(Equal(waiting))
		Expect(rolloutOf(ns, "web-deployment")()).To(And(
			HaveField("Phase", rolloutsv1alpha1.PhaseWaitingForApproval), HaveField("Revision", revision)))
		revisions := &appsv1.ControllerRevisionList{}
		Expect(k8s.List(ctx, revisions, client.InNamespace(ns))).To(Succeed())
		Expect(revisions.Items).To(HaveLen(2), "the revisions of the rollout outlive the template")

		By("recreated as it was, the template resumes the rollout at the gate, which is approved")
		d = testkit.Deployment(ns, "web")
		d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
		Expect(k8s.Create(ctx, d)).To(Succeed())
		// As Karmada's detector does: the binding names the new template.
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)).To(Succeed())
		rb.Spec.Resource.UID, rb.Spec.Resource.ResourceVersion = d.UID, d.ResourceVersion
		Expect(k8s.Update(ctx, rb)).To(Succeed())
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseComplete))
		Expect(fleetImages(ns)).To(Equal(map[string]string{"member1": "nginx:1.28", "member2": "nginx:1.28", "member3": "nginx:1.28"}))
		Expect(rolloutOf(ns, "web-deployment")().Revision).To(Equal(revision), "the same revision, not a new rollout")
		for _, s := range seen.halt() {
			Expect(s).To(HaveLen(3), "a cluster without a Work: %v", s)
			Expect(s["member1"]).To(Equal("nginx:1.28"), "the canary left the revision: %v", s)
		}
	})

	It("fail a cluster whose Work is blocked at the progress deadline and halt, naming it, while the others get theirs", func() {
		reportAllHealthy()
		joinMember("member13")
		ns := newNamespace()
		// The healthy clusters race the deadline too: 10 s leaves a busy machine room to
		// report them healthy before it.
		const deadline = 10 * time.Second
		createRolloutPolicy(ns, "web", rolloutsv1alpha1.RolloutPolicySpec{ResourceSelectors: webOnly,
			Stages:           []rolloutsv1alpha1.RolloutStage{stageOf("canary", "member1"), stageOf("rest", "member2", "member3", "member13")},
			ProgressDeadline: &metav1.Duration{Duration: deadline}})
		d, rb := createWeb(ns, members...)

		By("member2 is unreachable: its Work, deleted, stays terminating and blocks the new one")
		sim.Disconnect("member2")
		DeferCleanup(sim.Connect, "member2")
		Expect(k8s.Delete(ctx, getWork(workKey("member2", d)))).To(Succeed())
		Expect(workState(workKey("member2", d))()).To(Equal("terminating"))
		seen := recordImages(ns)

		changeImage(d, rb, "nginx:1.28")
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseHalted))
		Expect(fleetImages(ns)).To(Equal(map[string]string{"member1": "nginx:1.28", "member3": "nginx:1.28"}),
			"member3 got the revision beside the blocked member2")
		status := rolloutOf(ns, "web-deployment")()
		why := "not healthy within the progress deadline " + deadline.String() + ": work " + workKey("member2", d).String() + " is being deleted"
		Expect(clusterStatus(ns, "web-deployment", "member2")()).To(And(
			HaveField("State", rolloutsv1alpha1.ClusterFailed), HaveField("Message", why)))
		Expect(clusterStatus(ns, "web-deployment", "member3")()).To(HaveField("State", rolloutsv1alpha1.ClusterHealthy))
		halted := meta.FindStatusCondition(status.Conditions, "Halted")
		Expect(halted).NotTo(BeNil())
		Expect(halted.Message).To(HaveSuffix("member2: " + why))
		Eventually(eventsOn(ns, "ResourceBinding", "web-deployment")).Should(ContainElements(
			"Warning RolloutClusterFailed: cluster member2 failed on revision "+status.Revision+": "+why,
			"Warning RolloutHalted: rollout of "+status.Revision+" halted: 1 clusters failed, 0 tolerated: member2: "+why))

		By("a cluster joining the halted rollout gets the revision it started from, not the halted one")
		reschedule(rb, onReplicas(1, "member1", "member2", "member3", "member13")...)
		Eventually(fleetOf(ns)).Should(HaveKeyWithValue("member13", "nginx:1.27"))

		By("reachable again, member2 has a Work again")
		sim.Connect("member2")
		Eventually(workState(workKey("member2", d))).Should(Equal("live:id-web"))
		for _, s := range seen.halt() {
			Expect(s).To(HaveKey("member1"), "a cluster without a Work: %v", s)
			Expect(s).To(HaveKey("member3"), "a cluster without a Work: %v", s)
			Expect(s["member13"]).NotTo(Equal("nginx:1.28"), "member13 got the halted revision: %v", s)
		}
	})

	It("follow one policy of several: a RolloutPolicy before a ClusterRolloutPolicy, then the most specific selector", func() {
		reportAllHealthy()
		ns := newNamespace()
		canaryThenGate := func(canary string) []rolloutsv1alpha1.RolloutStage {
			return []rolloutsv1alpha1.RolloutStage{stageOf("canary", canary), gatedStageOf("rest", members...)}
		}
		clusterWide := &rolloutsv1alpha1.ClusterRolloutPolicy{ObjectMeta: metav1.ObjectMeta{Name: ns + "-web"},
			Spec: rolloutsv1alpha1.RolloutPolicySpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}},
				Stages:            canaryThenGate("member1")}}
		Expect(k8s.Create(ctx, clusterWide)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(ctx, clusterWide)).To(Succeed()) })
		createRolloutPolicy(ns, "every-deployment", rolloutsv1alpha1.RolloutPolicySpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Stages:            canaryThenGate("member2")})
		policy := func() rolloutsv1alpha1.PolicyReference {
			r := &rolloutsv1alpha1.BindingRollout{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-deployment"}, r); err != nil {
				return rolloutsv1alpha1.PolicyReference{}
			}
			return r.Spec.Policy
		}

		By("the RolloutPolicy of the whole kind governs before the ClusterRolloutPolicy naming the template")
		d, rb := createWeb(ns, members...)
		Expect(policy()).To(Equal(rolloutsv1alpha1.PolicyReference{Kind: "RolloutPolicy", Namespace: ns, Name: "every-deployment"}))

		By("a RolloutPolicy selecting by label is more specific: it governs from then on")
		createRolloutPolicy(ns, "labelled-web", rolloutsv1alpha1.RolloutPolicySpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
			Stages: canaryThenGate("member3")})
		Eventually(policy).Should(Equal(rolloutsv1alpha1.PolicyReference{Kind: "RolloutPolicy", Namespace: ns, Name: "labelled-web"}))
		changeImage(d, rb, "nginx:1.28")
		Eventually(phaseOf(ns, "web-deployment"), time.Minute).Should(Equal(rolloutsv1alpha1.PhaseWaitingForApproval))
		Expect(fleetImages(ns)).To(Equal(map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.27", "member3": "nginx:1.28"}),
			"only the governing policy's canary is updated")
	})
})
