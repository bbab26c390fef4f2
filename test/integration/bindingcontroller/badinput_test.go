// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// worksSyncedOn returns the WorksSynced condition of binding ns/name as "Status Reason: Message".
func worksSyncedOn(ns, name string) func() string {
	return func() string {
		rb := &workv1alpha2.ResourceBinding{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb); err != nil {
			return err.Error()
		}
		c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.ConditionWorksSynced)
		if c == nil {
			return "none"
		}
		return string(c.Status) + " " + c.Reason + ": " + c.Message
	}
}

// failures counts the controller's failure log lines for one binding so far.
func failures(ns, name string) func() int {
	return func() int {
		return strings.Count(logs.String(), "Failed to transform resourceBinding("+ns+"/"+name+") to works.")
	}
}

// expectParked waits until the binding's failed syncs stop moving, then checks that they
// stay put for 3 s: input that cannot succeed is not retried. Every sync of such a binding
// fails, so its failure lines count its syncs.
func expectParked(ns, name, why string) {
	Eventually(failures(ns, name)).ShouldNot(BeZero())
	seen, err := testkit.Settled(failures(ns, name), 2*time.Second, time.Minute)
	Expect(err).NotTo(HaveOccurred(), why)
	Consistently(failures(ns, name), 3*time.Second).Should(Equal(seen), why)
	// controller-runtime is told too: the sync ended with a terminal error, which it logs
	// and counts, and does not retry.
	Expect(terminalErrorLines(ns, name)).To(BeNumerically(">", 0), why+": no terminal Reconciler error logged")
	Expect(metricValue("controller_runtime_terminal_reconcile_errors_total", "controller", "resourcebinding")).To(BeNumerically(">", 0), why)
}

// terminalErrorLines counts the Reconciler error lines controller-runtime logged for syncs
// of binding ns/name that ended with a terminal error.
func terminalErrorLines(ns, name string) int {
	n := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "Reconciler error") && strings.Contains(line, "terminal error") &&
			strings.Contains(line, `"namespace": "`+ns+`"`) && strings.Contains(line, `"name": "`+name+`"`) {
			n++
		}
	}
	return n
}

var _ = Describe("Bad input", func() {
	It("parks bindings of served kinds that cannot be listed or watched, and every worker stays free for the others", func() {
		ns := newNamespace()
		d := deployment(ns, "healthy")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		// Create-only kinds: served, but no informer can ever list them. Five of them, as
		// many as there are ResourceBinding workers.
		unlistable := []struct{ apiVersion, kind, resource string }{
			{"authorization.k8s.io/v1", "SubjectAccessReview", "subjectaccessreviews.authorization.k8s.io"},
			{"authorization.k8s.io/v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews.authorization.k8s.io"},
			{"authorization.k8s.io/v1", "LocalSubjectAccessReview", "localsubjectaccessreviews.authorization.k8s.io"},
			{"authorization.k8s.io/v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews.authorization.k8s.io"},
			{"authentication.k8s.io/v1", "TokenReview", "tokenreviews.authentication.k8s.io"},
		}
		for i, u := range unlistable {
			rb := binding(ns, fmt.Sprintf("review-%d", i), fmt.Sprintf("id-r%d", i), d, "member1")
			rb.Spec.Resource.APIVersion, rb.Spec.Resource.Kind, rb.Spec.Resource.Name = u.apiVersion, u.kind, "review"
			Expect(k8s.Create(ctx, rb)).To(Succeed())
		}
		for i := range unlistable {
			Eventually(eventsOn(ns, "ResourceBinding", fmt.Sprintf("review-%d", i))).Should(ContainElement(
				ContainSubstring("Warning SyncWorkFailed: ")))
		}
		Expect(k8s.Create(ctx, binding(ns, "healthy-deployment", "id-h", d, "member1", "member2"))).To(Succeed())
		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-h"))
		Eventually(workState(workKey("member2", d))).Should(Equal("live:id-h"))

		for i, u := range unlistable {
			name := fmt.Sprintf("review-%d", i)
			gvk := u.apiVersion + ", Kind=" + u.kind
			Expect(eventsOn(ns, "ResourceBinding", name)()).To(ContainElement(
				"Warning SyncWorkFailed: ResourceBinding("+ns+"/"+name+"): resource template "+gvk+": "+gvk+
					" cannot be cached: the API server does not allow get on "+u.resource+" (verbs: [create])"), name)
			Eventually(worksSyncedOn(ns, name)).Should(HavePrefix("False SyncFailed: ResourceBinding("+ns+"/"+name+"): resource template "+gvk), name)
			expectParked(ns, name, "no retry loop for a kind that cannot be cached")
		}
		Eventually(activeWorkers).Should(BeZero(), "no worker stays busy")
	})

	It("reports a kind the API server does not serve, parks it, and leaves other bindings alone", func() {
		ns := newNamespace()
		d := deployment(ns, "good")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		bad := binding(ns, "widget-binding", "id-w", d, "member1")
		bad.Spec.Resource.APIVersion, bad.Spec.Resource.Kind, bad.Spec.Resource.Name = "example.com/v1", "Widget", "w"
		Expect(k8s.Create(ctx, bad)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "good-deployment", "id-g", d, "member1", "member2"))).To(Succeed())

		Eventually(eventsOn(ns, "ResourceBinding", "widget-binding")).Should(ContainElement(
			ContainSubstring("Warning SyncWorkFailed: ResourceBinding(" + ns + "/widget-binding): the API server does not serve example.com/v1, Kind=Widget")))
		Eventually(worksSyncedOn(ns, "widget-binding")).Should(HavePrefix("False SyncFailed: "))
		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-g"))
		Eventually(workState(workKey("member2", d))).Should(Equal("live:id-g"))

		expectParked(ns, "widget-binding", "no retry loop for input that cannot succeed")
	})

	It("serves the valid clusters of a binding with invalid (upper case, too long, empty), duplicate and negative entries, and names the bad ones", func() {
		ns := newNamespace()
		d := deployment(ns, "mixed")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		rb := binding(ns, "mixed-deployment", "id-m", d)
		rb.Spec.Clusters = []workv1alpha2.TargetCluster{
			{Name: "member1", Replicas: 1},
			{Name: "Member2", Replicas: 1},
			{Name: strings.Repeat("m", 60), Replicas: 1},
			{Name: "member1", Replicas: 5},
			{Name: "member3", Replicas: -2},
			{Name: "member2", Replicas: 1},
			{Name: "", Replicas: 1},
		}
		Expect(k8s.Create(ctx, rb)).To(Succeed())

		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-m"))
		Eventually(workState(workKey("member2", d))).Should(Equal("live:id-m"))
		Expect(getWork(workKey("member1", d)).Spec.Workload.Manifests[0].Raw).To(ContainSubstring(`"replicas":1`),
			"the first entry of a duplicated cluster wins")
		Eventually(worksSyncedOn(ns, "mixed-deployment")).Should(And(
			HavePrefix("False PartiallySynced: 2/6 clusters synced; \"\": rendering work: cluster name is empty; "+
				"Member2: rendering work: cluster name \"Member2\" does not form a valid execution namespace"),
			ContainSubstring("member3: rendering work: "),
			ContainSubstring("cluster member3 is assigned -2 replicas; replicas cannot be negative"),
			ContainSubstring("mmmmmmmm: rendering work: ")))
		Expect(workState(workKey("member3", d))()).To(Equal("absent"))

		expectParked(ns, "mixed-deployment", "parked until the binding changes")

		By("syncing again once the binding is fixed")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)).To(Succeed())
		rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}, {Name: "member3", Replicas: 2}}
		Expect(k8s.Update(ctx, rb)).To(Succeed())
		Eventually(workState(workKey("member3", d))).Should(Equal("live:id-m"))
		Eventually(workState(workKey("member2", d))).Should(Equal("absent"))
		Eventually(worksSyncedOn(ns, "mixed-deployment")).Should(Equal("True Synced: 2/2 clusters synced"))
	})

	It("serves the scheduled clusters when requiredBy names a cluster that does not exist", func() {
		ns := newNamespace()
		d := deployment(ns, "needed")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		rb := binding(ns, "needed-deployment", "id-n", d, "member1")
		rb.Spec.RequiredBy = []workv1alpha2.BindingSnapshot{{Namespace: ns, Name: "dependant",
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "ghost"}}}}
		Expect(k8s.Create(ctx, rb)).To(Succeed())
		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-n"))
		// No Cluster object, so no Work: as in Karmada, whose override manager reads the
		// Cluster first.
		Eventually(worksSyncedOn(ns, "needed-deployment")).Should(
			Equal(`False PartiallySynced: 1/2 clusters synced; ghost: Cluster.cluster.karmada.io "ghost" not found`))
	})

	It("is refused by the API server without spec.resource, and parks a binding whose resource names nothing", func() {
		ns := newNamespace()
		d := deployment(ns, "kept")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "kept-deployment", "id-k", d, "member1"))).To(Succeed())

		// Karmada's schema requires spec.resource: such a binding never reaches the controller.
		missing := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
			"metadata": map[string]any{"name": "no-resource", "namespace": ns},
			"spec":     map[string]any{"clusters": []any{map[string]any{"name": "member1"}}},
		}}
		err := k8s.Create(ctx, missing)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("spec.resource: Required value"))

		// Empty fields pass the schema; the controller says what is wrong and waits for a change.
		empty := binding(ns, "empty-resource", "id-e", d, "member1", "member2")
		empty.Spec.Resource = workv1alpha2.ObjectReference{}
		Expect(k8s.Create(ctx, empty)).To(Succeed())
		Eventually(eventsOn(ns, "ResourceBinding", "empty-resource")).Should(ContainElement(
			"Warning SyncWorkFailed: ResourceBinding(" + ns + "/empty-resource) names no resource template: spec.resource needs apiVersion, kind and name"))
		Eventually(worksSyncedOn(ns, "empty-resource")).Should(HavePrefix("False SyncFailed: ResourceBinding(" + ns + "/empty-resource) names no resource template"))
		expectParked(ns, "empty-resource", "no retry loop for input that cannot succeed")
		works := &workv1alpha1.WorkList{}
		Expect(k8s.List(ctx, works)).To(Succeed())
		for _, w := range works.Items {
			Expect(w.Annotations[workv1alpha2.ResourceBindingNameAnnotation]).NotTo(Equal("empty-resource"), "a Work was written for a binding naming no template")
		}
		Expect(workState(workKey("member1", d))()).To(Equal("live:id-k"), "the other binding is served")
	})
})

// activeWorkers is how many ResourceBinding workers are busy now, from controller-runtime's metric.
func activeWorkers() float64 {
	return metricValue("controller_runtime_active_workers", "controller", "resourcebinding")
}
