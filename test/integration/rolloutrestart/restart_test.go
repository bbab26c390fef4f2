// SPDX-License-Identifier: Apache-2.0

package rolloutrestart_test

import (
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

// moment is the image each member's Work carried at one instant.
type moment struct {
	at     time.Time
	images map[string]string
}

// recordImages reads the image of every member's Work of the binding in ns every few
// milliseconds, through the test's own client (it runs while the manager is down too),
// until the returned halt is called.
func recordImages(ns string) (halt func() []moment) {
	var (
		mu   sync.Mutex
		seen []moment
	)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			images, err := imagesOf(ns)
			if err != nil {
				continue // the API server is busy: the next read counts
			}
			mu.Lock()
			seen = append(seen, moment{at: time.Now(), images: images})
			mu.Unlock()
		}
	}()
	var once sync.Once
	halt = func() []moment {
		once.Do(func() { close(stop); <-done })
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
	DeferCleanup(halt)
	return halt
}

func imagesOf(ns string) (map[string]string, error) { return testkit.WorkImages(ctx, k8s, ns) }

func rolloutOf(ns, name string) func() rolloutsv1alpha1.BindingRolloutStatus {
	return func() rolloutsv1alpha1.BindingRolloutStatus {
		r := &rolloutsv1alpha1.BindingRollout{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, r); err != nil {
			return rolloutsv1alpha1.BindingRolloutStatus{}
		}
		return r.Status
	}
}

// syncs counts the ResourceBinding syncs every manager of this process finished.
func syncs() float64 {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() == "binding_controller_sync_duration_seconds" {
			for _, m := range f.GetMetric() {
				total += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return total
}

var _ = Describe("A staged rollout across a controller restart", func() {
	It("resumes mid-soak in the same stage, and updates the next stage only once the soak has run its time", func() {
		const soak = 20 * time.Second
		sim.ReportHealth(func(string, *unstructured.Unstructured) workv1alpha1.ResourceHealth {
			return workv1alpha1.ResourceHealthy
		})
		DeferCleanup(func() { sim.ReportHealth(nil) })
		const ns = "default"
		Expect(k8s.Create(ctx, &rolloutsv1alpha1.RolloutPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: rolloutsv1alpha1.RolloutPolicySpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
				Stages: []rolloutsv1alpha1.RolloutStage{
					{Name: "canary", Clusters: rolloutsv1alpha1.StageClusters{Names: []string{"member1"}},
						MinSuccessTime: &metav1.Duration{Duration: soak}},
					{Name: "rest", Clusters: rolloutsv1alpha1.StageClusters{Names: []string{"member2", "member3"}}},
				},
			},
		})).To(Succeed())
		d := testkit.Deployment(ns, "web")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		rb := testkit.Binding(ns, "web-deployment", "id-web", d, "member1", "member2", "member3")
		Expect(k8s.Create(ctx, rb)).To(Succeed())
		Eventually(rolloutOf(ns, "web-deployment"), time.Minute).Should(HaveField("Phase", rolloutsv1alpha1.PhaseComplete))
		seen := recordImages(ns)

		By("the canary healthy on 1.28, its soak starts")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
		Expect(k8s.Update(ctx, d)).To(Succeed())
		// As Karmada's detector does: the binding names the template's new version.
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)).To(Succeed())
		rb.Spec.Resource.ResourceVersion = d.ResourceVersion
		Expect(k8s.Update(ctx, rb)).To(Succeed())
		Eventually(rolloutOf(ns, "web-deployment")).Should(And(
			HaveField("Stage", "canary"), HaveField("SoakStarted", Not(BeNil()))))
		soakStarted := rolloutOf(ns, "web-deployment")().SoakStarted.Time
		soakEnds := soakStarted.Add(soak)

		By("the manager restarts mid-soak; the new one takes the rollout up in the same stage and soak")
		stopMgr()
		before := syncs()
		startManager()
		// The new manager looks at the rollout again every poll interval while it soaks.
		Eventually(syncs).Should(BeNumerically(">", before))
		Expect(time.Now()).To(BeTemporally("<", soakEnds), "the restart outlasted the soak: nothing was tested")
		status := rolloutOf(ns, "web-deployment")()
		Expect(status).To(And(HaveField("Phase", rolloutsv1alpha1.PhaseProgressing), HaveField("Stage", "canary")))
		Expect(status.SoakStarted.Time).To(BeTemporally("==", soakStarted), "the soak started again, or was skipped")
		Expect(imagesOf(ns)).To(Equal(map[string]string{"member1": "nginx:1.28", "member2": "nginx:1.27", "member3": "nginx:1.27"}))

		By("the soak over, the rest get 1.28 and the rollout completes")
		Eventually(rolloutOf(ns, "web-deployment"), soak+time.Minute).Should(HaveField("Phase", rolloutsv1alpha1.PhaseComplete))
		Expect(imagesOf(ns)).To(Equal(map[string]string{"member1": "nginx:1.28", "member2": "nginx:1.28", "member3": "nginx:1.28"}))
		moments := seen()
		Expect(moments).NotTo(BeEmpty())
		for _, m := range moments {
			Expect(m.images).To(HaveLen(3), "a cluster without a Work at %s: %v", m.at, m.images)
			if m.images["member2"] == "nginx:1.28" || m.images["member3"] == "nginx:1.28" {
				Expect(m.at).To(BeTemporally(">=", soakEnds), "the rest updated before the canary's soak ended: %v", m.images)
				Expect(m.images["member1"]).To(Equal("nginx:1.28"))
			}
		}

		By("the new manager recorded no event of the stage again")
		events := &corev1.EventList{}
		Expect(k8s.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		started := 0
		for _, e := range events.Items {
			if e.InvolvedObject.Name == "web-deployment" && e.Reason == "RolloutStageStarted" && strings.HasPrefix(e.Message, "stage canary started") {
				started += int(e.Count)
			}
		}
		Expect(started).To(Equal(1))
	})
})
