// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	"encoding/json"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// workRefusedIn tries a dry-run create of a Work in namespace and returns the refusal.
func workRefusedIn(namespace string) func() string {
	return func() string {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: namespace}}
		if err := k8s.Create(ctx, w, client.DryRunAll); err != nil {
			return err.Error()
		}
		return "accepted"
	}
}

// Each per-cluster fault on the real API server: the other clusters are served and the
// failure names its cluster.
var _ = Describe("Per-cluster faults", func() {
	createExecutionNamespace := func(cluster string) string {
		Expect(testkit.JoinClusters(ctx, k8s, cluster)).To(Succeed())
		return names.ExecutionNamespace(cluster)
	}

	It("serves the others when one execution namespace is terminating", func() {
		// No namespace controller runs here, so a deleted namespace stays terminating.
		doomed := createExecutionNamespace("member4")
		nsObj := &corev1.Namespace{}
		nsObj.Name = doomed
		Expect(k8s.Delete(ctx, nsObj)).To(Succeed())

		ns := newNamespace()
		d := deployment(ns, "t")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "t-deployment", "id-t", d, "member1", "member4", "member2"))).To(Succeed())
		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-t"))
		Eventually(workState(workKey("member2", d))).Should(Equal("live:id-t"))
		Eventually(worksSyncedOn(ns, "t-deployment")).Should(And(
			HavePrefix("False PartiallySynced: 2/3 clusters synced; member4: work karmada-es-member4/"),
			ContainSubstring("because it is being terminated")))
	})

	It("serves the others when an admission policy denies Works in one namespace", func() {
		denied := createExecutionNamespace("member5")
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "deny-works-in-member5"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{"work.karmada.io"}, APIVersions: []string{"*"},
							Resources: []string{"works"}},
					},
				}}},
				Validations: []admissionregistrationv1.Validation{{
					Expression: "object.metadata.namespace != '" + denied + "'",
					Message:    "works are frozen in " + denied,
				}},
			},
		}
		Expect(k8s.Create(ctx, policy)).To(Succeed())
		Expect(k8s.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "deny-works-in-member5"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        policy.Name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			},
		})).To(Succeed())
		Eventually(workRefusedIn(denied)).Should(ContainSubstring("works are frozen"), "the API server loads the policy")
		ns := newNamespace()
		d := deployment(ns, "v")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "v-deployment", "id-v", d, "member1", "member5"))).To(Succeed())
		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-v"))
		Eventually(worksSyncedOn(ns, "v-deployment")).Should(And(
			HavePrefix("False PartiallySynced: 1/2 clusters synced; member5: work karmada-es-member5/"),
			ContainSubstring("works are frozen in "+denied)))
	})

	It("serves the others when a quota on Works is exhausted in one namespace", func() {
		full := createExecutionNamespace("member6")
		quota := &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "no-works", Namespace: full},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/works.work.karmada.io": resource.MustParse("0")}},
		}
		Expect(k8s.Create(ctx, quota)).To(Succeed())
		// No quota controller runs here: publish the usage it would.
		quota.Status = corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{"count/works.work.karmada.io": resource.MustParse("0")},
			Used: corev1.ResourceList{"count/works.work.karmada.io": resource.MustParse("0")},
		}
		Expect(k8s.Status().Update(ctx, quota)).To(Succeed())
		Eventually(workRefusedIn(full)).Should(ContainSubstring("exceeded quota"))
		ns := newNamespace()
		d := deployment(ns, "q")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "q-deployment", "id-q", d, "member1", "member6"))).To(Succeed())
		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-q"))
		Eventually(worksSyncedOn(ns, "q-deployment")).Should(And(
			HavePrefix("False PartiallySynced: 1/2 clusters synced; member6: work karmada-es-member6/"),
			ContainSubstring("exceeded quota")))
		Expect(workState(workKey("member6", d))()).To(Equal("absent"))
	})
})

var _ = Describe("A Work too large for etcd", func() {
	// etcd refuses a request over 1.5 MiB. The template, a Deployment carrying 1.3 MiB of
	// environment, fits, and so does its Work. An override for member2 only adds 200 KiB
	// to the manifest, and Karmada's applied-overrides annotation records it once more: that
	// Work alone is too large to store.
	It("serves the other clusters, names the oversized one, and parks it until the input changes", func() {
		ns := newNamespace()
		d := deployment(ns, "big")
		d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PAYLOAD", Value: strings.Repeat("a", 1300<<10)}}
		Expect(k8s.Create(ctx, d)).To(Succeed())
		extra, err := json.Marshal(strings.Repeat("b", 200<<10))
		Expect(err).NotTo(HaveOccurred())
		grow := &policyv1alpha1.OverridePolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "grow-on-member2", Namespace: ns},
			Spec: policyv1alpha1.OverrideSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "big"}},
				OverrideRules: []policyv1alpha1.RuleWithCluster{{
					TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}},
					Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
						Path: "/spec/template/spec/containers/0/env/-", Operator: "add",
						Value: apiextensionsv1.JSON{Raw: []byte(`{"name":"EXTRA","value":` + string(extra) + `}`)}}}},
				}},
			},
		}
		Expect(k8s.Create(ctx, grow)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "big-deployment", "id-big", d, "member1", "member2", "member3"))).To(Succeed())
		for _, c := range []string{"member1", "member3"} {
			Eventually(workState(workKey(c, d))).Should(Equal("live:id-big"))
		}
		tooLarge := "member2: work " + workKey("member2", d).String() + ": creating: etcdserver: request is too large (the Work is 1.6"
		Eventually(worksSyncedOn(ns, "big-deployment")).Should(HavePrefix("False PartiallySynced: 2/3 clusters synced; " + tooLarge))
		Eventually(eventsOn(ns, "ResourceBinding", "big-deployment")).Should(ContainElement(And(
			HavePrefix("Warning SyncWorkFailed: cluster member2: "), ContainSubstring("request is too large"))))
		Expect(workState(workKey("member2", d))()).To(Equal("absent"))
		expectParked(ns, "big-deployment", "no retry loop for a Work that cannot be stored")

		// The input changes: without the policy, member2's Work fits.
		Expect(k8s.Delete(ctx, grow)).To(Succeed())
		Eventually(workState(workKey("member2", d))).Should(Equal("live:id-big"))
		Eventually(worksSyncedOn(ns, "big-deployment")).Should(Equal("True Synced: 3/3 clusters synced"))
	})
})

var _ = Describe("Wide fan-out", func() {
	// One binding, 120 clusters written 8 at a time; three of them fail in three different
	// ways. The other 117 get their Works in the same sync, and each failed cluster
	// recovers on its own once its fault ends.
	It("serves 117 of 120 clusters while three fail differently, and lets each recover alone", func() {
		const width = 120
		var clusters []string
		for i := 0; i < width; i++ {
			clusters = append(clusters, fmt.Sprintf("wide-%03d", i))
		}
		missing, terminating, foreign := "wide-041", "wide-077", "wide-103"
		ns := newNamespace()
		d := deployment(ns, "wide")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		for _, c := range clusters {
			if c != missing {
				Expect(testkit.JoinClusters(ctx, k8s, c)).To(Succeed())
			}
		}
		// missing has its Cluster object; only its execution namespace is missing.
		Expect(k8s.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: missing}})).To(Succeed())
		// An old Work its execution side still holds, and a Work nobody's binding created.
		sim.Disconnect(terminating)
		DeferCleanup(sim.Connect, terminating)
		old := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: workKey(terminating, d).Name, Namespace: names.ExecutionNamespace(terminating),
			Finalizers: []string{workv1alpha1.ExecutionControllerFinalizer}}}
		Expect(k8s.Create(ctx, old)).To(Succeed())
		Expect(k8s.Delete(ctx, old)).To(Succeed())
		Expect(k8s.Create(ctx, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: workKey(foreign, d).Name, Namespace: names.ExecutionNamespace(foreign)}})).To(Succeed())

		Expect(k8s.Create(ctx, binding(ns, "wide-deployment", "id-wide", d, clusters...))).To(Succeed())
		Eventually(worksSyncedOn(ns, "wide-deployment")).Should(And(
			HavePrefix("False PartiallySynced: 117/120 clusters synced; "),
			ContainSubstring(missing+": work "+workKey(missing, d).String()+": creating: namespaces \""+names.ExecutionNamespace(missing)+"\" not found"),
			ContainSubstring(terminating+": work "+workKey(terminating, d).String()+" is being deleted"),
			ContainSubstring(foreign+": work "+workKey(foreign, d).String()+" exists and was not created by a binding")))
		for _, c := range clusters {
			if c != missing && c != terminating && c != foreign {
				Expect(workState(workKey(c, d))()).To(Equal("live:id-wide"), c)
			}
		}

		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionNamespace(missing)}})).To(Succeed())
		Eventually(workState(workKey(missing, d))).Should(Equal("live:id-wide"))
		sim.Connect(terminating)
		Eventually(workState(workKey(terminating, d))).Should(Equal("live:id-wide"))
		Eventually(worksSyncedOn(ns, "wide-deployment")).Should(HavePrefix("False PartiallySynced: 119/120 clusters synced; " + foreign + ": "))
		Expect(getWork(workKey(foreign, d)).Annotations).To(BeEmpty(), "the foreign Work is never touched")
	})
})
