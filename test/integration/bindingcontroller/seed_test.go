// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// The case that started the project: a disconnected member1 keeps its old Work
// terminating, and that must not stop member2 and member3 from getting their new Works.
var _ = Describe("A cluster whose old Work is still being deleted", Ordered, func() {
	var nginx *appsv1.Deployment

	BeforeAll(func() {
		nginx = deployment("default", "nginx")
		Expect(k8s.Create(ctx, nginx)).To(Succeed())
		Expect(k8s.Create(ctx, binding("default", "nginx-deployment", "id-first", nginx, members...))).To(Succeed())
	})

	worksSynced := func() string {
		rb := &workv1alpha2.ResourceBinding{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx-deployment"}, rb); err != nil {
			return err.Error()
		}
		c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.ConditionWorksSynced)
		if c == nil {
			return "none"
		}
		return fmt.Sprintf("%s %s: %s (generation %d/%d)", c.Status, c.Reason, c.Message, c.ObservedGeneration, rb.Generation)
	}

	It("first writes one Work named nginx-687f7fb96f into every member's execution namespace", func() {
		for _, m := range members {
			key := workKey(m, nginx)
			Expect(key.Name).To(Equal("nginx-687f7fb96f"))
			Eventually(workState(key)).Should(Equal("live:id-first"), m)
			w := getWork(key)
			Expect(w.Finalizers).To(ContainElement(workv1alpha1.ExecutionControllerFinalizer))
			Expect(w.Annotations).To(HaveKeyWithValue(workv1alpha2.ResourceBindingNamespaceAnnotation, "default"))
			Expect(w.Annotations).To(HaveKeyWithValue(workv1alpha2.ResourceBindingNameAnnotation, "nginx-deployment"))
		}
		// Current Karmada's words, on the binding and on the template.
		const synced = "Normal SyncWorkSucceed: Sync work of ResourceBinding(default/nginx-deployment) successful."
		Eventually(eventsOn("default", "ResourceBinding", "nginx-deployment")).Should(ContainElement(synced))
		Eventually(eventsOn("default", "Deployment", "nginx")).Should(ContainElement(synced))
		Expect(karmadaSyncs("success")).To(BeNumerically(">", 0), "binding_sync_work_duration_seconds{result=\"success\"}")
		Eventually(worksSynced).Should(Equal("True Synced: 3/3 clusters synced (generation 1/1)"))
	})

	It("keeps member1's Work terminating while member1 is disconnected and the binding is deleted", func() {
		sim.Disconnect("member1")
		rb := &workv1alpha2.ResourceBinding{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx-deployment"}, rb)).To(Succeed())
		Expect(k8s.Delete(ctx, rb)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb))
		}).Should(BeTrue(), "the binding's finalizer must be released though member1 holds its Work")
		Eventually(workState(workKey("member2", nginx))).Should(Equal("absent"))
		Eventually(workState(workKey("member3", nginx))).Should(Equal("absent"))
		Consistently(workState(workKey("member1", nginx)), time.Second).Should(Equal("terminating"))
		Expect(k8s.Delete(ctx, nginx)).To(Succeed())
	})

	It("gives member2 and member3 their new Works at once after the recreate, and reports member1", func() {
		// member1 is back, but its old Work has not been released yet.
		nginx = deployment("default", "nginx")
		Expect(k8s.Create(ctx, nginx)).To(Succeed())
		rb := binding("default", "nginx-deployment", "id-second", nginx, members...)
		Expect(k8s.Create(ctx, rb)).To(Succeed())
		// Karmada's scheduler owns this condition; the controller must leave it alone.
		scheduled := metav1.Condition{Type: "Scheduled", Status: metav1.ConditionTrue, Reason: "Success",
			Message: "Binding has been scheduled successfully.", LastTransitionTime: metav1.NewTime(time.Unix(1780000000, 0))}
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
				return err
			}
			meta.SetStatusCondition(&rb.Status.Conditions, scheduled)
			return k8s.Status().Update(ctx, rb)
		})).To(Succeed())

		Eventually(workState(workKey("member2", nginx)), 5*time.Second).Should(Equal("live:id-second"))
		Eventually(workState(workKey("member3", nginx)), 5*time.Second).Should(Equal("live:id-second"))
		Expect(workState(workKey("member1", nginx))()).To(Equal("terminating"))

		const failure = "work karmada-es-member1/nginx-687f7fb96f is being deleted"
		errorsBefore := karmadaSyncs("error")
		Eventually(logs.String).Should(ContainSubstring(
			"Failed to transform resourceBinding(default/nginx-deployment) to works. Error: " + failure + "."))
		Eventually(eventsOn("default", "ResourceBinding", "nginx-deployment")).Should(
			ContainElement("Warning SyncWorkFailed: " + failure))
		Eventually(eventsOn("default", "Deployment", "nginx")).Should(ContainElement("Warning SyncWorkFailed: " + failure))
		Eventually(func() float64 { return karmadaSyncs("error") }).Should(BeNumerically(">", errorsBefore),
			"binding_sync_work_duration_seconds{result=\"error\"}")
		Eventually(worksSynced).Should(Equal("False PartiallySynced: 2/3 clusters synced; member1: " + failure + " (generation 1/1)"))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)).To(Succeed())
		got := meta.FindStatusCondition(rb.Status.Conditions, "Scheduled")
		Expect(got).NotTo(BeNil())
		Expect(got.Message).To(Equal(scheduled.Message))
		Expect(got.LastTransitionTime.Time.Equal(scheduled.LastTransitionTime.Time)).To(BeTrue())
	})

	It("writes member1's new Work by itself once the old one is gone", func() {
		// Let the retries run a while: the binding must not give up on member1.
		Consistently(workState(workKey("member1", nginx)), 2*time.Second).Should(Equal("terminating"))
		// Blocked past --stuck-work-warning-after (3s here): one event says which Work and what holds it.
		Eventually(eventsOn("default", "ResourceBinding", "nginx-deployment"), 10*time.Second).Should(ContainElement(And(
			HavePrefix("Warning WorkStuckDeleting: work karmada-es-member1/nginx-687f7fb96f has been terminating for "),
			HaveSuffix("finalizers still holding it: [karmada.io/execution-controller]"))))
		sim.Connect("member1")
		Eventually(workState(workKey("member1", nginx)), 10*time.Second).Should(Equal("live:id-second"))
		Eventually(worksSynced).Should(Equal("True Synced: 3/3 clusters synced (generation 1/1)"))
	})
})

var _ = Describe("Two clusters blocked at once", func() {
	It("lists both in one aggregated error while the third is served", func() {
		ns := newNamespace()
		d := deployment(ns, "web")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "web-deployment", "id-a", d, members...))).To(Succeed())
		for _, m := range members {
			Eventually(workState(workKey(m, d))).Should(Equal("live:id-a"))
		}

		sim.Disconnect("member1")
		sim.Disconnect("member2")
		DeferCleanup(sim.Connect, "member1")
		DeferCleanup(sim.Connect, "member2")
		rb := &workv1alpha2.ResourceBinding{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-deployment"}, rb)).To(Succeed())
		Expect(k8s.Delete(ctx, rb)).To(Succeed())
		Eventually(workState(workKey("member3", d))).Should(Equal("absent"))

		Expect(k8s.Create(ctx, binding(ns, "web-deployment", "id-b", d, members...))).To(Succeed())
		Eventually(workState(workKey("member3", d))).Should(Equal("live:id-b"))
		want := "Warning SyncWorkFailed: [work karmada-es-member1/" + workKey("member1", d).Name + " is being deleted, " +
			"work karmada-es-member2/" + workKey("member2", d).Name + " is being deleted]"
		Eventually(eventsOn(ns, "ResourceBinding", "web-deployment")).Should(ContainElement(want))
		Eventually(eventsOn(ns, "Deployment", "web")).Should(ContainElement(want))

		sim.Connect("member1")
		sim.Connect("member2")
		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-b"))
		Eventually(workState(workKey("member2", d))).Should(Equal("live:id-b"))
	})
})
