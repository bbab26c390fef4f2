// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	"encoding/json"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
	"github.com/binding-controller/binding-controller/pkg/templaterevision"
)

// badVerb in a ClusterRole's rules runs Unhealthy on every member.
const badVerb = "bad"

// verbsOf is the verbs of the first rule of a ClusterRole manifest.
func verbsOf(m *unstructured.Unstructured) []string {
	rules, _, _ := unstructured.NestedSlice(m.Object, "rules")
	if len(rules) == 0 {
		return nil
	}
	verbs, _, _ := unstructured.NestedStringSlice(rules[0].(map[string]any), "verbs")
	return verbs
}

// roleVerbs is the last verb of the rule each member's Work of the ClusterRole carries.
func roleVerbs(role string) map[string]string {
	out, err := tryRoleVerbs(role)
	Expect(err).NotTo(HaveOccurred())
	return out
}

func tryRoleVerbs(role string) (map[string]string, error) {
	out := map[string]string{}
	for _, m := range members {
		w := &workv1alpha1.Work{}
		key := types.NamespacedName{Namespace: names.ExecutionNamespace(m), Name: names.WorkName("ClusterRole", "", role)}
		if err := k8s.Get(ctx, key, w); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, err
		}
		if w.DeletionTimestamp != nil {
			continue
		}
		manifest := &unstructured.Unstructured{}
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &manifest.Object); err != nil {
			return nil, err
		}
		verbs := verbsOf(manifest)
		out[m] = ""
		if len(verbs) > 0 {
			out[m] = verbs[len(verbs)-1]
		}
	}
	return out, nil
}

func clusterRolloutOf(name string) func() rolloutsv1alpha1.BindingRolloutStatus {
	return func() rolloutsv1alpha1.BindingRolloutStatus {
		r := &rolloutsv1alpha1.ClusterBindingRollout{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, r); err != nil {
			return rolloutsv1alpha1.BindingRolloutStatus{}
		}
		return r.Status
	}
}

// setLastVerb changes the ClusterRole's rule and tells the binding, as Karmada's detector
// does by writing the template's resourceVersion into it.
func setLastVerb(role *rbacv1.ClusterRole, crb *workv1alpha2.ClusterResourceBinding, verb string) {
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(role), role)).To(Succeed())
	role.Rules[0].Verbs = []string{"get", verb}
	Expect(k8s.Update(ctx, role)).To(Succeed())
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(crb), crb)).To(Succeed())
	crb.Spec.Resource.ResourceVersion = role.ResourceVersion
	Expect(k8s.Update(ctx, crb)).To(Succeed())
}

var _ = Describe("Staged rollouts of ClusterResourceBindings", func() {
	It("roll a cluster-scoped template out stage by stage, keep its revisions in the controller's namespace, and roll a failure back", func() {
		sim.ReportHealth(func(_ string, m *unstructured.Unstructured) workv1alpha1.ResourceHealth {
			if slices.Contains(verbsOf(m), badVerb) {
				return workv1alpha1.ResourceUnhealthy
			}
			return workv1alpha1.ResourceHealthy
		})
		DeferCleanup(func() { sim.ReportHealth(nil) })
		// The controller's own namespace (--leader-elect-resource-namespace), where a
		// Karmada control plane always has it.
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-system"}}); err != nil {
			Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "creating karmada-system: %v", err)
		}

		const roleName, crbName = "it:rollout", "it-rollout-clusterrole"
		policy := &rolloutsv1alpha1.ClusterRolloutPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "it-roles"},
			Spec: rolloutsv1alpha1.RolloutPolicySpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: roleName}},
				Stages: []rolloutsv1alpha1.RolloutStage{
					{Name: "canary", Clusters: rolloutsv1alpha1.StageClusters{Names: []string{"member1"}}},
				},
				RollbackOnFailure: true,
			},
		}
		Expect(k8s.Create(ctx, policy)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, policy))).To(Succeed()) })
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: roleName},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}}
		Expect(k8s.Create(ctx, role)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, role))).To(Succeed()) })
		crb := &workv1alpha2.ClusterResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: crbName,
				Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "crb-rollout"}},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource: workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: roleName},
				Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}},
			},
		}
		Expect(k8s.Create(ctx, crb)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, crb))).To(Succeed()) })

		By("new to the policy, every member gets the ClusterRole at once; its ClusterBindingRollout is Complete")
		Eventually(func() map[string]string { return roleVerbs(roleName) }).Should(Equal(map[string]string{
			"member1": "list", "member2": "list", "member3": "list"}))
		Eventually(func() rolloutsv1alpha1.RolloutPhase { return clusterRolloutOf(crbName)().Phase }, time.Minute).
			Should(Equal(rolloutsv1alpha1.PhaseComplete))
		cbro := &rolloutsv1alpha1.ClusterBindingRollout{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: crbName}, cbro)).To(Succeed())
		Expect(cbro.Spec.Policy).To(Equal(rolloutsv1alpha1.PolicyReference{Kind: "ClusterRolloutPolicy", Name: "it-roles"}))
		Expect(cbro.OwnerReferences).To(ConsistOf(HaveField("Kind", "ClusterResourceBinding")))

		By("a good change reaches the canary first, then the unstaged rest")
		seen := recordRoleVerbs(roleName)
		setLastVerb(role, crb, "watch")
		Eventually(func() map[string]string { return roleVerbs(roleName) }, time.Minute).Should(Equal(map[string]string{
			"member1": "watch", "member2": "watch", "member3": "watch"}))
		Eventually(func() rolloutsv1alpha1.RolloutPhase { return clusterRolloutOf(crbName)().Phase }, time.Minute).
			Should(Equal(rolloutsv1alpha1.PhaseComplete))
		for _, s := range seen.halt() {
			if s["member1"] == "list" {
				Expect(s).To(HaveKeyWithValue("member2", "list"), "member2 updated before the canary: %v", s)
				Expect(s).To(HaveKeyWithValue("member3", "list"), "member3 updated before the canary: %v", s)
			}
		}
		revisions := &appsv1.ControllerRevisionList{}
		Expect(k8s.List(ctx, revisions, client.InNamespace("karmada-system"),
			client.MatchingLabels{templaterevision.BindingUIDLabel: string(crb.UID)})).To(Succeed())
		Expect(revisions.Items).To(HaveLen(2), "the first revision and the change's, beside the controller")
		for _, rev := range revisions.Items {
			Expect(rev.OwnerReferences).To(ConsistOf(And(HaveField("Kind", "ClusterResourceBinding"), HaveField("Name", crbName))))
		}

		By("a bad change fails at the canary, the rest never get it, and the canary gets its ClusterRole back")
		seen = recordRoleVerbs(roleName)
		setLastVerb(role, crb, badVerb)
		Eventually(func() rolloutsv1alpha1.RolloutPhase { return clusterRolloutOf(crbName)().Phase }, time.Minute).
			Should(Equal(rolloutsv1alpha1.PhaseRolledBack))
		Eventually(func() map[string]string { return roleVerbs(roleName) }).Should(Equal(map[string]string{
			"member1": "watch", "member2": "watch", "member3": "watch"}))
		for _, s := range seen.halt() {
			Expect(s).NotTo(HaveKeyWithValue("member2", badVerb), "member2 got the bad change: %v", s)
			Expect(s).NotTo(HaveKeyWithValue("member3", badVerb), "member3 got the bad change: %v", s)
		}
		// Events of cluster-scoped objects are kept in the default namespace.
		Expect(eventsOn("default", "ClusterResourceBinding", crbName)()).To(ContainElements(
			ContainSubstring("Warning RolloutClusterFailed: cluster member1 failed on revision"),
			ContainSubstring("Warning RolloutRolledBack: rolled back to the previous revision: member1")))

		By("the policy deleted, the change reaches every member as in Karmada, and the rollout and its revisions go")
		Expect(k8s.Delete(ctx, policy)).To(Succeed())
		Eventually(func() map[string]string { return roleVerbs(roleName) }, time.Minute).Should(Equal(map[string]string{
			"member1": badVerb, "member2": badVerb, "member3": badVerb}))
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Name: crbName}, &rolloutsv1alpha1.ClusterBindingRollout{})
		}).
			Should(Satisfy(apierrors.IsNotFound))
		Eventually(func() []appsv1.ControllerRevision {
			Expect(k8s.List(ctx, revisions, client.InNamespace("karmada-system"),
				client.MatchingLabels{templaterevision.BindingUIDLabel: string(crb.UID)})).To(Succeed())
			return revisions.Items
		}).Should(BeEmpty())
	})
})

// recordRoleVerbs records tryRoleVerbs every few milliseconds until halted, so a spec can
// check that no moment broke the rollout's order.
func recordRoleVerbs(role string) *snapshots {
	return recordSnapshots(func() (map[string]string, error) { return tryRoleVerbs(role) })
}
