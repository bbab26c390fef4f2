// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

func manifestOf(key types.NamespacedName) func() string {
	return func() string {
		w := getWork(key)
		if w == nil || len(w.Spec.Workload.Manifests) == 0 {
			return ""
		}
		return string(w.Spec.Workload.Manifests[0].Raw)
	}
}

func annotationOf(key types.NamespacedName, name string) func() string {
	return func() string {
		if w := getWork(key); w != nil {
			return w.Annotations[name]
		}
		return ""
	}
}

var _ = Describe("Override policies and Clusters", func() {
	It("re-renders the selected bindings when a policy comes, changes and goes", func() {
		ns := newNamespace()
		d := deployment(ns, "shop")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "shop-deployment", "id-1", d, "member1", "member2"))).To(Succeed())
		Eventually(workState(workKey("member2", d))).Should(Equal("live:id-1"))
		Expect(manifestOf(workKey("member2", d))()).To(ContainSubstring(`"image":"nginx:1.27"`))

		op := &policyv1alpha1.OverridePolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "shop-images", Namespace: ns},
			Spec: policyv1alpha1.OverrideSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "shop"}},
				OverrideRules: []policyv1alpha1.RuleWithCluster{{
					TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}},
					Overriders: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{
						Component: "Registry", Operator: "replace", Value: "mirror.example.com"}}},
				}},
			},
		}
		Expect(k8s.Create(ctx, op)).To(Succeed())
		Eventually(manifestOf(workKey("member2", d))).Should(ContainSubstring(`"image":"mirror.example.com/nginx:1.27"`))
		Eventually(annotationOf(workKey("member2", d), policyv1alpha1.AppliedOverridesAnnotation)).Should(ContainSubstring(`"policyName":"shop-images"`))
		Expect(manifestOf(workKey("member1", d))()).To(ContainSubstring(`"image":"nginx:1.27"`))
		Expect(annotationOf(workKey("member1", d), policyv1alpha1.AppliedOverridesAnnotation)()).To(BeEmpty())
		// Karmada's override events, on the template, for the cluster the policy shaped only.
		Eventually(eventsOn(ns, "Deployment", "shop")).Should(ContainElement(
			"Normal ApplyOverridePolicySucceed: Apply override policy(" + ns + "/shop-images) for cluster(member2) succeed."))
		Expect(eventsOn(ns, "Deployment", "shop")()).NotTo(ContainElement(ContainSubstring("for cluster(member1)")))
		Expect(eventsOn(ns, "ResourceBinding", "shop-deployment")()).NotTo(ContainElement(ContainSubstring("ApplyOverridePolicy")))

		By("a policy that breaks for one cluster fails that cluster only, naming policy, overrider and cluster")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(op), op); err != nil {
				return err
			}
			op.Spec.OverrideRules[0].Overriders.Plaintext = []policyv1alpha1.PlaintextOverrider{{Path: "/spec/nothing/here", Operator: "remove"}}
			return k8s.Update(ctx, op)
		})).To(Succeed())
		Eventually(worksSyncedOn(ns, "shop-deployment")).Should(ContainSubstring(
			"member2: rendering work: OverridePolicy " + ns + "/shop-images, overrideRules[0].plaintext[0], cluster member2: "))
		Expect(workState(workKey("member1", d))()).To(Equal("live:id-1"))
		Eventually(eventsOn(ns, "Deployment", "shop")).Should(ContainElement(
			"Warning ApplyOverridePolicyFailed: Apply override policy(" + ns + "/shop-images) for cluster(member2) failed."))

		By("the policy going away restores the template's own image")
		Expect(k8s.Delete(ctx, op)).To(Succeed())
		Eventually(manifestOf(workKey("member2", d))).Should(ContainSubstring(`"image":"nginx:1.27"`))
		Eventually(worksSyncedOn(ns, "shop-deployment")).Should(Equal("True Synced: 2/2 clusters synced"))
		Expect(annotationOf(workKey("member2", d), policyv1alpha1.AppliedOverridesAnnotation)()).To(BeEmpty())
	})

	It("writes no Work for a target cluster without a Cluster object, as Karmada, until the Cluster joins", func() {
		// The execution namespace is there, the Cluster object is not: a cluster that left
		// the federation, or a scheduler ahead of a join.
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionNamespace("member7")}})).To(Succeed())
		ns := newNamespace()
		d := deployment(ns, "orders")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "orders-deployment", "id-1", d, "member1", "member7"))).To(Succeed())
		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-1"))
		Eventually(worksSyncedOn(ns, "orders-deployment")).Should(
			Equal(`False PartiallySynced: 1/2 clusters synced; member7: Cluster.cluster.karmada.io "member7" not found`))
		Eventually(eventsOn(ns, "ResourceBinding", "orders-deployment")).Should(ContainElement(
			`Warning SyncWorkFailed: cluster member7: Cluster.cluster.karmada.io "member7" not found`))
		Expect(workState(workKey("member7", d))()).To(Equal("absent"))
		Expect(failureReasons("member7")).To(HaveKey("ClusterNotFound"))

		By("the Cluster joining syncs the binding at once: it was parked, not backing off")
		member7 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member7"}}
		Expect(k8s.Create(ctx, member7)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(ctx, member7)).To(Succeed()) })
		Eventually(workState(workKey("member7", d))).Should(Equal("live:id-1"))
		Eventually(worksSyncedOn(ns, "orders-deployment")).Should(Equal("True Synced: 2/2 clusters synced"))
	})

	It("names a Work after the workload as overridden, and deletes the Work of the old name", func() {
		ns := newNamespace()
		d := deployment(ns, "api")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "api-deployment", "id-1", d, "member1", "member2"))).To(Succeed())
		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-1"))

		op := &policyv1alpha1.OverridePolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "rename", Namespace: ns},
			Spec: policyv1alpha1.OverrideSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"}},
				OverrideRules: []policyv1alpha1.RuleWithCluster{{
					TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
					Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
						Path: "/metadata/name", Operator: "replace", Value: apiextensionsv1.JSON{Raw: []byte(`"api-canary"`)}}}},
				}},
			},
		}
		Expect(k8s.Create(ctx, op)).To(Succeed())
		renamed := types.NamespacedName{Namespace: "karmada-es-member1", Name: names.WorkName("Deployment", ns, "api-canary")}
		Eventually(workState(renamed)).Should(Equal("live:id-1"))
		Expect(manifestOf(renamed)()).To(ContainSubstring(`"name":"api-canary"`))
		// Karmada leaves the Work of the old name next to the new one; here it goes.
		Eventually(workState(workKey("member1", d))).Should(Equal("absent"))
		Expect(workState(workKey("member2", d))()).To(Equal("live:id-1"))
		Eventually(worksSyncedOn(ns, "api-deployment")).Should(Equal("True Synced: 2/2 clusters synced"))

		By("the policy going away names member1's Work after the template again")
		Expect(k8s.Delete(ctx, op)).To(Succeed())
		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-1"))
		Eventually(workState(renamed)).Should(Equal("absent"))
		Expect(workState(workKey("member2", d))()).To(Equal("live:id-1"))
	})

	It("re-renders the bindings targeting a Cluster whose labels change", func() {
		// member3 joined with the suite; its labels are put back afterwards.
		cluster := &clusterv1alpha1.Cluster{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: "member3"}, cluster)).To(Succeed())
		DeferCleanup(func() {
			Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
					return err
				}
				cluster.Labels = nil
				return k8s.Update(ctx, cluster)
			})).To(Succeed())
		})
		ns := newNamespace()
		cop := &policyv1alpha1.ClusterOverridePolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "canary-" + ns},
			Spec: policyv1alpha1.OverrideSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns}},
				OverrideRules: []policyv1alpha1.RuleWithCluster{{
					TargetCluster: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
						MatchLabels: map[string]string{"stage": "canary"}}},
					Overriders: policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{
						Operator: "add", Value: map[string]string{"canary": "true"}}}},
				}},
			},
		}
		Expect(k8s.Create(ctx, cop)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(ctx, cop)).To(Succeed()) })
		d := deployment(ns, "web")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "web-deployment", "id-1", d, "member3"))).To(Succeed())
		Eventually(workState(workKey("member3", d))).Should(Equal("live:id-1"))
		Expect(manifestOf(workKey("member3", d))()).NotTo(ContainSubstring(`"canary":"true"`))

		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
				return err
			}
			cluster.Labels = map[string]string{"stage": "canary"}
			return k8s.Update(ctx, cluster)
		})).To(Succeed())
		Eventually(manifestOf(workKey("member3", d))).Should(ContainSubstring(`"canary":"true"`))
		Expect(annotationOf(workKey("member3", d), policyv1alpha1.AppliedClusterOverridesAnnotation)()).To(ContainSubstring(cop.Name))
		Eventually(eventsOn(ns, "Deployment", "web")).Should(ContainElement(
			"Normal ApplyOverridePolicySucceed: Apply cluster override policy(" + cop.Name + ") for cluster(member3) succeed."))
	})
})

var _ = Describe("Graceful eviction with purgeMode Directly", func() {
	It("writes no new Work until the evicted cluster's Work is gone", func() {
		ns := newNamespace()
		d := deployment(ns, "moving")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		rb := binding(ns, "moving-deployment", "id-1", d, "member1")
		Expect(k8s.Create(ctx, rb)).To(Succeed())
		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-1"))

		sim.Disconnect("member1")
		DeferCleanup(sim.Connect, "member1")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
				return err
			}
			rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member2", Replicas: 1}}
			rb.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{
				FromCluster: "member1", PurgeMode: "Directly", Reason: "TaintUntolerated", Producer: "taint-manager"}}
			return k8s.Update(ctx, rb)
		})).To(Succeed())
		Eventually(workState(workKey("member1", d))).Should(Equal("terminating"))
		Eventually(worksSyncedOn(ns, "moving-deployment")).Should(Equal(
			"False WaitingForEviction: waiting for the Works of clusters evicted with purgeMode Directly to be deleted: member1"))
		Consistently(workState(workKey("member2", d)), 2*time.Second).Should(Equal("absent"))

		sim.Connect("member1")
		Eventually(workState(workKey("member1", d))).Should(Equal("absent"))
		Eventually(workState(workKey("member2", d))).Should(Equal("live:id-1"))
		Eventually(func() bool { return strings.HasPrefix(worksSyncedOn(ns, "moving-deployment")(), "True") }).Should(BeTrue())
	})
})
