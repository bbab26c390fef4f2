// SPDX-License-Identifier: Apache-2.0

package restart_test

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

var members = []string{"member1", "member2"}

// createWeb creates Deployment name in ns and its binding to both members.
func createWeb(ns, name string) (*appsv1.Deployment, *workv1alpha2.ResourceBinding) {
	d := testkit.Deployment(ns, name)
	Expect(k8s.Create(ctx, d)).To(Succeed())
	rb := testkit.Binding(ns, name+"-deployment", "id-"+name, d, members...)
	Expect(k8s.Create(ctx, rb)).To(Succeed())
	return d, rb
}

// replicas returns what a cluster's Work of d asks for: "absent", or the manifest's
// replicas.
func replicas(cluster string, d *appsv1.Deployment) func() string {
	return func() string {
		w := &workv1alpha1.Work{}
		err := k8s.Get(ctx, testkit.WorkKey(cluster, d), w)
		if apierrors.IsNotFound(err) {
			return "absent"
		}
		Expect(err).NotTo(HaveOccurred())
		var manifest appsv1.Deployment
		Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &manifest)).To(Succeed())
		return fmt.Sprint(*manifest.Spec.Replicas)
	}
}

var _ = Describe("A controller restarted while the Works and templates are still being listed", func() {
	It("serves the changes made while it was down and since at once, and leaves deletions and re-verifications until the list is in", func() {
		ns := fmt.Sprintf("restart-%d", GinkgoRandomSeed()%100000)
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		stop := startManager(plane.Config)
		fresh, freshRB := createWeb(ns, "fresh")
		gone, goneRB := createWeb(ns, "gone")
		drift, _ := createWeb(ns, "drift")
		moved, movedRB := createWeb(ns, "moved")
		for _, d := range []*appsv1.Deployment{fresh, gone, drift, moved} {
			for _, m := range members {
				Eventually(replicas(m, d)).Should(Equal("1"), "%s in %s", d.Name, m)
			}
		}
		stop()

		By("while the controller is down, someone edits a Work")
		work := &workv1alpha1.Work{}
		Expect(k8s.Get(ctx, testkit.WorkKey("member1", drift), work)).To(Succeed())
		var manifest map[string]any
		Expect(json.Unmarshal(work.Spec.Workload.Manifests[0].Raw, &manifest)).To(Succeed())
		manifest["spec"].(map[string]any)["replicas"] = 7
		raw, err := json.Marshal(manifest)
		Expect(err).NotTo(HaveOccurred())
		work.Spec.Workload.Manifests[0].Raw = raw
		Expect(k8s.Update(ctx, work)).To(Succeed())

		By("while the controller is down, the scheduler moves a replica")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(freshRB), freshRB)).To(Succeed())
		freshRB.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 1}}
		Expect(k8s.Update(ctx, freshRB)).To(Succeed())

		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(movedRB), movedRB)).To(Succeed())
		movedRB.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member2", Replicas: 3}}
		Expect(k8s.Update(ctx, movedRB)).To(Succeed())

		By("restarted with the lists of every Work and every template held back")
		gate := newListGate()
		stop = startManager(gate.config(plane.Config))
		DeferCleanup(func() { stop() })
		released := false
		DeferCleanup(func() {
			if !released {
				gate.release()
			}
		})
		Eventually(replicas("member1", fresh)).Should(Equal("2"),
			"the change made while the controller was down waited for the lists of the Works or templates")
		Expect(k8s.Delete(ctx, goneRB)).To(Succeed())
		// A change the controller sees once it runs is fresh, and is served at once. One
		// made before its list of the bindings counts as made while it was down (above). To
		// test the first kind, the change is made again until it lands after that list:
		// each try must be served while the Works are still held back.
		rescaleUntilServed(freshRB, fresh, 2, "the fresh change waited for the lists of the Works or templates")
		Expect(gate.heldWorks.Load()).To(BeNumerically(">", 0), "nothing listed the Works: the gate proves nothing")
		Expect(gate.heldTemplates.Load()).To(BeNumerically(">", 0), "nothing listed the templates: the gate proves nothing")

		Eventually(replicas("member2", moved)).Should(Equal("3"), "a binding moved while the controller was down waited")

		By("the deletion, which needs every Work of its binding, and the re-verification wait")
		for _, m := range members {
			Expect(replicas(m, gone)()).To(Equal("1"), "a Work of the deleted binding went before the list was in")
		}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(goneRB), &workv1alpha2.ResourceBinding{})).To(Succeed())
		Expect(replicas("member1", drift)()).To(Equal("7"))

		By("the lists in, all is done, the Work of the cluster the moved binding left deleted")
		gate.release()
		released = true
		for _, m := range members {
			Eventually(replicas(m, gone)).Should(Equal("absent"), m)
		}
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: goneRB.Name}, &workv1alpha2.ResourceBinding{}))
		}).Should(BeTrue(), "the deleted binding kept its finalizer")
		Eventually(replicas("member1", drift)).Should(Equal("1"), "the edited Work was not restored")
		Eventually(replicas("member1", moved)).Should(Equal("absent"), "the Work of the cluster the binding left stayed")
	})
})

var _ = Describe("A controller restarted while the bindings themselves are still being listed", func() {
	It("serves a binding changed meanwhile, read from the API server, before the list is in", func() {
		ns := fmt.Sprintf("restart-listing-%d", GinkgoRandomSeed()%100000)
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		stop := startManager(plane.Config)
		web, webRB := createWeb(ns, "web")
		for _, m := range members {
			Eventually(replicas(m, web)).Should(Equal("1"), m)
		}
		stop()

		By("restarted with the bindings' list held back, and with it the Works' and templates'")
		gate := newListGate()
		gate.bindings = true
		stop = startManager(gate.config(plane.Config))
		DeferCleanup(func() { stop() })
		released := false
		DeferCleanup(func() {
			if !released {
				gate.release()
			}
		})
		want := rescaleUntilServed(webRB, web, 1, "the change waited for the list of the bindings")
		Expect(gate.heldBindings.Load()).To(BeNumerically(">", 0), "nothing listed the bindings: the gate proves nothing")
		Eventually(func() int64 {
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(webRB), webRB)).To(Succeed())
			return syncedGeneration(webRB)
		}).Should(Equal(webRB.Generation), "the binding's WorksSynced condition does not name the generation served")

		By("the list in, a change is served as before")
		gate.release()
		released = true
		rescaleUntilServed(webRB, web, want, "a change after the list was not served")
		Expect(replicas("member2", web)()).To(Equal("1"))
	})
})

// rescaleUntilServed sets rb's replicas in member1 to from+1, from+2, … until one change
// has d's Work in member1 within 2 s, and returns the replicas served. Tried again because
// a change made before the restarted controller watches the bindings counts as made
// while it was down, and waits for the list a gate may hold back.
func rescaleUntilServed(rb *workv1alpha2.ResourceBinding, d *appsv1.Deployment, from int32, because string) int32 {
	want := from
	Eventually(func() bool {
		want++
		// A patch, not an update: the controller may patch the status meanwhile.
		base := rb.DeepCopy()
		rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: want}, {Name: "member2", Replicas: 1}}
		Expect(k8s.Patch(ctx, rb, client.MergeFrom(base))).To(Succeed())
		for range 20 {
			if replicas("member1", d)() == fmt.Sprint(want) {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	}).Should(BeTrue(), because)
	return want
}

// syncedGeneration is the generation the binding's WorksSynced condition names, -1 when
// it has none.
func syncedGeneration(rb *workv1alpha2.ResourceBinding) int64 {
	for _, c := range rb.Status.Conditions {
		if c.Type == workv1alpha2.ConditionWorksSynced {
			return c.ObservedGeneration
		}
	}
	return -1
}
