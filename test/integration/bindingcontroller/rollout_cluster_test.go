// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
	"github.com/binding-controller/binding-controller/pkg/templaterevision"
)

// The template is a CustomResourceDefinition, as Karmada users propagate theirs: a
// cluster-scoped kind whose generation moves with its spec, so the health gate tells the
// revisions apart (docs/rollouts.md: a kind without generations is judged on health alone).
// Its schema's description stands for its version; badVersion runs Unhealthy everywhere.
const badVersion = "bad"

func versionOf(m *unstructured.Unstructured) string {
	versions, _, _ := unstructured.NestedSlice(m.Object, "spec", "versions")
	if len(versions) == 0 {
		return ""
	}
	v, _, _ := unstructured.NestedString(versions[0].(map[string]any), "schema", "openAPIV3Schema", "description")
	return v
}

// crdVersions is the version each member's Work of the CRD carries.
func crdVersions(crd string) map[string]string {
	out, err := tryCRDVersions(crd)
	Expect(err).NotTo(HaveOccurred())
	return out
}

func tryCRDVersions(crd string) (map[string]string, error) {
	out := map[string]string{}
	for _, m := range members {
		w := &workv1alpha1.Work{}
		key := types.NamespacedName{Namespace: names.ExecutionNamespace(m), Name: names.WorkName("CustomResourceDefinition", "", crd)}
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
		out[m] = versionOf(manifest)
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

// widgetCRD is a small CRD whose schema's description is version, unstructured: the
// suite's client knows the project's kinds and core Kubernetes, not apiextensions.
func widgetCRD(version string) *unstructured.Unstructured {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.rollout.it.example.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "rollout.it.example.io", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Description: version, XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	return u
}

// setVersion changes the CRD's spec and tells the binding, as Karmada's detector does by
// writing the template's resourceVersion into it.
func setVersion(crd *unstructured.Unstructured, crb *workv1alpha2.ClusterResourceBinding, version string) {
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed())
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	Expect(unstructured.SetNestedField(versions[0].(map[string]any), version, "schema", "openAPIV3Schema", "description")).To(Succeed())
	Expect(unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions")).To(Succeed())
	Expect(k8s.Update(ctx, crd)).To(Succeed())
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(crb), crb)).To(Succeed())
	crb.Spec.Resource.ResourceVersion = crd.GetResourceVersion()
	Expect(k8s.Update(ctx, crb)).To(Succeed())
}

var _ = Describe("Staged rollouts of ClusterResourceBindings", func() {
	It("roll a cluster-scoped template out stage by stage, keep its revisions in the controller's namespace, and roll a failure back", func() {
		sim.ReportHealth(func(_ string, m *unstructured.Unstructured) workv1alpha1.ResourceHealth {
			if versionOf(m) == badVersion {
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

		const crdName, crbName = "widgets.rollout.it.example.io", "widgets.rollout.it.example.io-customresourcedefinition"
		policy := &rolloutsv1alpha1.ClusterRolloutPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "it-crds"},
			Spec: rolloutsv1alpha1.RolloutPolicySpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crdName}},
				Stages: []rolloutsv1alpha1.RolloutStage{
					{Name: "canary", Clusters: rolloutsv1alpha1.StageClusters{Names: []string{"member1"}}},
				},
				RollbackOnFailure: true,
			},
		}
		Expect(k8s.Create(ctx, policy)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, policy))).To(Succeed()) })
		crd := widgetCRD("v1")
		Expect(k8s.Create(ctx, crd)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, crd))).To(Succeed()) })
		crb := &workv1alpha2.ClusterResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: crbName,
				Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "crb-rollout"}},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource: workv1alpha2.ObjectReference{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crdName},
				Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}},
			},
		}
		Expect(k8s.Create(ctx, crb)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, crb))).To(Succeed()) })

		By("new to the policy, every member gets the CRD at once; its ClusterBindingRollout is Complete")
		Eventually(func() map[string]string { return crdVersions(crdName) }).Should(Equal(map[string]string{
			"member1": "v1", "member2": "v1", "member3": "v1"}))
		Eventually(func() rolloutsv1alpha1.RolloutPhase { return clusterRolloutOf(crbName)().Phase }, time.Minute).
			Should(Equal(rolloutsv1alpha1.PhaseComplete))
		cbro := &rolloutsv1alpha1.ClusterBindingRollout{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: crbName}, cbro)).To(Succeed())
		Expect(cbro.Spec.Policy).To(Equal(rolloutsv1alpha1.PolicyReference{Kind: "ClusterRolloutPolicy", Name: "it-crds"}))
		Expect(cbro.OwnerReferences).To(ConsistOf(HaveField("Kind", "ClusterResourceBinding")))

		By("a good change reaches the canary first, then the unstaged rest")
		seen := recordCRDVersions(crdName)
		setVersion(crd, crb, "v2")
		Eventually(func() map[string]string { return crdVersions(crdName) }, time.Minute).Should(Equal(map[string]string{
			"member1": "v2", "member2": "v2", "member3": "v2"}))
		Eventually(func() rolloutsv1alpha1.RolloutPhase { return clusterRolloutOf(crbName)().Phase }, time.Minute).
			Should(Equal(rolloutsv1alpha1.PhaseComplete))
		for _, s := range seen.halt() {
			if s["member1"] == "v1" {
				Expect(s).To(HaveKeyWithValue("member2", "v1"), "member2 updated before the canary: %v", s)
				Expect(s).To(HaveKeyWithValue("member3", "v1"), "member3 updated before the canary: %v", s)
			}
		}
		revisions := &appsv1.ControllerRevisionList{}
		Expect(k8s.List(ctx, revisions, client.InNamespace("karmada-system"),
			client.MatchingLabels{templaterevision.BindingUIDLabel: string(crb.UID)})).To(Succeed())
		Expect(revisions.Items).To(HaveLen(2), "the first revision and the change's, beside the controller")
		for _, rev := range revisions.Items {
			Expect(rev.OwnerReferences).To(ConsistOf(And(HaveField("Kind", "ClusterResourceBinding"), HaveField("Name", crbName))))
		}

		By("a bad change fails at the canary, the rest never get it, and the canary gets its CRD back")
		seen = recordCRDVersions(crdName)
		setVersion(crd, crb, badVersion)
		Eventually(func() rolloutsv1alpha1.RolloutPhase { return clusterRolloutOf(crbName)().Phase }, time.Minute).
			Should(Equal(rolloutsv1alpha1.PhaseRolledBack))
		Eventually(func() map[string]string { return crdVersions(crdName) }).Should(Equal(map[string]string{
			"member1": "v2", "member2": "v2", "member3": "v2"}))
		for _, s := range seen.halt() {
			Expect(s).NotTo(HaveKeyWithValue("member2", badVersion), "member2 got the bad change: %v", s)
			Expect(s).NotTo(HaveKeyWithValue("member3", badVersion), "member3 got the bad change: %v", s)
		}
		// Events of cluster-scoped objects are kept in the default namespace.
		Eventually(eventsOn("default", "ClusterResourceBinding", crbName)).Should(ContainElements(
			ContainSubstring("Warning RolloutClusterFailed: cluster member1 failed on revision"),
			ContainSubstring("Warning RolloutRolledBack: rolled back to the previous revision: member1")))

		By("the policy deleted, the change reaches every member as in Karmada, and the rollout and its revisions go")
		Expect(k8s.Delete(ctx, policy)).To(Succeed())
		Eventually(func() map[string]string { return crdVersions(crdName) }, time.Minute).Should(Equal(map[string]string{
			"member1": badVersion, "member2": badVersion, "member3": badVersion}))
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

// recordCRDVersions records tryCRDVersions every few milliseconds until halted, so a spec
// can check that no moment broke the rollout's order.
func recordCRDVersions(crd string) *snapshots {
	return recordSnapshots(func() (map[string]string, error) { return tryCRDVersions(crd) })
}
