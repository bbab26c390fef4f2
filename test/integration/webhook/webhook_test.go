// SPDX-License-Identifier: Apache-2.0

package webhook_test

import (
	"encoding/json"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/ledgercheckpoint"
)

var workKey = testkit.WorkKey

// observer reads through the suite's uncached client.
func observer() testkit.Observer { return testkit.Observer{Ctx: ctx, Client: k8s} }

func getWork(key types.NamespacedName) *workv1alpha1.Work { return observer().Work(key) }
func workState(key types.NamespacedName) func() string    { return observer().WorkState(key) }
func eventsOn(namespace, kind, name string) func() []string {
	return observer().EventsOn(namespace, kind, name)
}

// syncSucceededEvents counts the SyncWorkSucceed event objects in the cluster.
func syncSucceededEvents() int {
	list := &corev1.EventList{}
	Expect(k8s.List(ctx, list)).To(Succeed())
	n := 0
	for _, e := range list.Items {
		if e.Reason == "SyncWorkSucceed" {
			n++
		}
	}
	return n
}

// manifest decodes a Work's only manifest.
func manifest(w *workv1alpha1.Work) *unstructured.Unstructured {
	Expect(w.Spec.Workload.Manifests).To(HaveLen(1))
	u := &unstructured.Unstructured{}
	Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &u.Object)).To(Succeed())
	return u
}

// admittedByWebhook says what is missing for the Work to be as karmada-webhook leaves
// it: a permanent ID, copied into the manifest and recorded among its managed labels.
func admittedByWebhook(w *workv1alpha1.Work) string {
	id := w.Labels[workv1alpha2.WorkPermanentIDLabel]
	if id == "" {
		return "no permanent ID"
	}
	m := manifest(w)
	if got := m.GetLabels()[workv1alpha2.WorkPermanentIDLabel]; got != id {
		return fmt.Sprintf("manifest labelled %q, Work %q", got, id)
	}
	if managed := m.GetAnnotations()[workv1alpha1.ManagedLabelsAnnotation]; !strings.Contains(managed, workv1alpha2.WorkPermanentIDLabel) {
		return "managed labels " + managed
	}
	return ""
}

// The case that started the project, behind the webhook: a disconnected member1 keeps
// its old Work terminating, and that must not stop member2 and member3.
var _ = Describe("The seed case behind karmada-webhook", Ordered, func() {
	seedMembers := members[:3]
	var nginx *appsv1.Deployment

	It("writes one Work per member, each given a permanent ID by the webhook", func() {
		nginx = testkit.Deployment("default", "nginx")
		Expect(k8s.Create(ctx, nginx)).To(Succeed())
		Expect(k8s.Create(ctx, testkit.Binding("default", "nginx-deployment", "id-first", nginx, seedMembers...))).To(Succeed())
		for _, m := range seedMembers {
			key := workKey(m, nginx)
			Expect(key.Name).To(Equal("nginx-687f7fb96f"))
			Eventually(workState(key)).Should(Equal("live:id-first"), m)
			Expect(admittedByWebhook(getWork(key))).To(BeEmpty(), m)
		}
		Eventually(eventsOn("default", "ResourceBinding", "nginx-deployment")).Should(
			ContainElement("Normal SyncWorkSucceed: Sync work of ResourceBinding(default/nginx-deployment) successful."))
	})

	It("releases the binding while member1's Work stays terminating", func() {
		sim.Disconnect("member1")
		rb := &workv1alpha2.ResourceBinding{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx-deployment"}, rb)).To(Succeed())
		Expect(k8s.Delete(ctx, rb)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)) }).Should(BeTrue())
		Eventually(workState(workKey("member2", nginx))).Should(Equal("absent"))
		Eventually(workState(workKey("member3", nginx))).Should(Equal("absent"))
		Expect(workState(workKey("member1", nginx))()).To(Equal("terminating"))
	})

	It("gives member2 and member3 their new Works at once after the recreate, and reports member1", func() {
		Expect(k8s.Create(ctx, testkit.Binding("default", "nginx-deployment", "id-second", nginx, seedMembers...))).To(Succeed())
		Eventually(workState(workKey("member2", nginx))).Should(Equal("live:id-second"))
		Eventually(workState(workKey("member3", nginx))).Should(Equal("live:id-second"))
		Expect(workState(workKey("member1", nginx))()).To(Equal("terminating"))
		const failure = "work karmada-es-member1/nginx-687f7fb96f is being deleted"
		Eventually(logs.String).Should(ContainSubstring(
			"Failed to transform resourceBinding(default/nginx-deployment) to works. Error: " + failure + "."))
		Eventually(eventsOn("default", "ResourceBinding", "nginx-deployment")).Should(ContainElement("Warning SyncWorkFailed: " + failure))
	})

	It("writes member1's new Work once the old one is gone", func() {
		sim.Connect("member1")
		Eventually(workState(workKey("member1", nginx))).Should(Equal("live:id-second"))
		for _, m := range seedMembers {
			Expect(admittedByWebhook(getWork(workKey(m, nginx)))).To(BeEmpty(), m)
		}
	})
})

var _ = Describe("Works behind karmada-webhook", Ordered, func() {
	const bindings = 40 // × 5 members = 200 Works
	var (
		ns        string
		templates []*appsv1.Deployment
		keys      []types.NamespacedName
	)

	// allBindings counts every binding of the suite: a fresh manager reconciles them all.
	allBindings := func() int {
		list := &workv1alpha2.ResourceBindingList{}
		Expect(k8s.List(ctx, list)).To(Succeed())
		return len(list.Items)
	}

	BeforeAll(func() {
		ns = newNamespace()
		for i := 0; i < bindings; i++ {
			d := testkit.Deployment(ns, fmt.Sprintf("app-%02d", i))
			Expect(k8s.Create(ctx, d)).To(Succeed())
			templates = append(templates, d)
			Expect(k8s.Create(ctx, testkit.Binding(ns, d.Name+"-deployment", fmt.Sprintf("id-%02d", i), d, members...))).To(Succeed())
			for _, m := range members {
				keys = append(keys, workKey(m, d))
			}
		}
	})

	It("are written once each and labelled with their permanent ID by the webhook", func() {
		Eventually(func() int {
			n := 0
			for _, k := range keys {
				if w := getWork(k); w != nil && admittedByWebhook(w) == "" {
					n++
				}
			}
			return n
		}).Should(Equal(len(keys)))
		settled()
	})

	It("cost no write on a no-op resync", func() {
		before, writes, runs := settled(), workWrites("create")+workWrites("update")+workWrites("delete"), reconciles()
		for _, d := range templates {
			// A new generation of the binding that asks for the same Works.
			rb := &workv1alpha2.ResourceBinding{}
			Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: d.Name + "-deployment"}, rb); err != nil {
					return err
				}
				rb.Spec.Resource.ResourceVersion = d.ResourceVersion
				return k8s.Update(ctx, rb)
			})).To(Succeed())
		}
		Eventually(reconciles).Should(BeNumerically(">=", runs+bindings))
		got := delta(before, settled())
		Expect(workWrites("create") + workWrites("update") + workWrites("delete")).To(Equal(writes))
		Expect(got).NotTo(HaveKey("PUT work"))
		Expect(got).NotTo(HaveKey("POST works"))
		Expect(got).NotTo(HaveKey("GET work"))
	})

	It("cost no Work write, no per-Work read and no SyncWorkSucceed event on a restart", func() {
		want := allBindings()
		before, writes, events := settled(), workWrites("create")+workWrites("update")+workWrites("delete"), syncSucceededEvents()
		succeeded := strings.Count(logs.String(), "successful.")
		runs := reconciles()
		restartManager()
		Eventually(reconciles).Should(BeNumerically(">=", runs+float64(want)))
		got := delta(before, settled())
		By(fmt.Sprintf("a fresh manager reconciled %d bindings of %d Works with requests %v", want, len(keys), got))
		Expect(workWrites("create")+workWrites("update")+workWrites("delete")).To(Equal(writes), "Work writes")
		Expect(got["GET work"]).To(BeZero(), "reads of single Works")
		Expect(got["PUT work"]+got["POST works"]+got["PATCH work"]+got["DELETE work"]).To(BeZero(), "Work writes sent")
		Expect(got["POST event"]).To(BeZero(), "events recorded")
		Expect(strings.Count(logs.String(), "successful.")).To(Equal(succeeded), "Sync work … successful. lines")
		Expect(syncSucceededEvents()).To(Equal(events), "SyncWorkSucceed events")
	})

	It("read no manifest on a restart: the ledger is primed from the checkpoint the last process saved on shutdown", func() {
		want := allBindings()
		before, writes := settled(), workWrites("create")+workWrites("update")+workWrites("delete")
		primed := strings.Count(logs.String(), "Primed the Work ledger from its checkpoint")
		runs := reconciles()
		restartManager()
		Eventually(reconciles).Should(BeNumerically(">=", runs+float64(want)))
		got := delta(before, settled())
		By(fmt.Sprintf("a fresh manager reconciled %d bindings of %d Works with requests %v", want, len(keys), got))
		Expect(strings.Count(logs.String(), "Primed the Work ledger from its checkpoint")).To(Equal(primed + 1))
		Expect(got["LIST whole works"]).To(BeZero(), "lists of whole Works")
		Expect(got["GET work"]).To(BeZero(), "reads of single Works")
		Expect(workWrites("create")+workWrites("update")+workWrites("delete")).To(Equal(writes), "Work writes")
		cms := &corev1.ConfigMapList{}
		Expect(k8s.List(ctx, cms, client.InNamespace("karmada-system"), client.MatchingLabels{ledgercheckpoint.Label: "binding-controller-manager-work-ledger"})).To(Succeed())
		Expect(cms.Items).To(HaveLen(1))
		Expect(cms.Items[0].Name).To(Equal("binding-controller-manager-work-ledger-0"))
	})

	It("list the Works instead, and still read none of them one by one, when the checkpoint is gone", func() {
		want := allBindings()
		stopMgr()
		Expect(k8s.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace("karmada-system"),
			client.MatchingLabels{ledgercheckpoint.Label: "binding-controller-manager-work-ledger"})).To(Succeed())
		before, writes := settled(), workWrites("create")+workWrites("update")+workWrites("delete")
		runs := reconciles()
		startManager()
		Eventually(reconciles).Should(BeNumerically(">=", runs+float64(want)))
		got := delta(before, settled())
		Expect(got["LIST whole works"]).To(BeNumerically(">=", 1), "priming's list of whole Works")
		Expect(got["GET work"]).To(BeZero(), "reads of single Works")
		Expect(workWrites("create")+workWrites("update")+workWrites("delete")).To(Equal(writes), "Work writes")
	})

	It("rewrite each Work exactly once on a template change", func() {
		before, updates, creates := settled(), workWrites("update"), workWrites("create")
		for _, d := range templates {
			Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
					return err
				}
				d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
				return k8s.Update(ctx, d)
			})).To(Succeed())
			// Karmada's detector tells the binding which template version to render.
			rb := &workv1alpha2.ResourceBinding{}
			Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: d.Name + "-deployment"}, rb); err != nil {
					return err
				}
				rb.Spec.Resource.ResourceVersion = d.ResourceVersion
				return k8s.Update(ctx, rb)
			})).To(Succeed())
		}
		Eventually(func() int {
			n := 0
			for _, k := range keys {
				if w := getWork(k); w != nil && strings.Contains(string(w.Spec.Workload.Manifests[0].Raw), "nginx:1.28") {
					n++
				}
			}
			return n
		}).Should(Equal(len(keys)))
		got := delta(before, settled())
		Expect(workWrites("update")-updates).To(Equal(float64(len(keys))), "Works updated")
		Expect(workWrites("create")-creates).To(BeZero(), "Works created")
		Expect(got["PUT work"]).To(Equal(len(keys)), "PUTs of Works")
		for _, k := range keys {
			Expect(admittedByWebhook(getWork(k))).To(BeEmpty(), k.String())
		}
	})
})
