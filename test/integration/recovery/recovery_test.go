// SPDX-License-Identifier: Apache-2.0

// Package recovery_test proves that a cluster blocked by a terminating Work recovers from
// the Work's deletion event, not from the retry backoff: the backoff here is set so far
// away that only the watch can explain a recovery within seconds.
package recovery_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/suite"
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/controllermanager"
)

var (
	ctx context.Context
	k8s client.Client
	sim *executionsim.Simulator
)

func TestRecovery(t *testing.T) {
	suite.Run(t, "Recovery of blocked clusters", suite.Timeouts{Polling: 20 * time.Millisecond})
}

var _ = BeforeSuite(func() {
	plane := suite.StartPlane(suite.PlaneOptions{
		CRDs:    []string{envtestutil.KarmadaCRDDir()},
		Members: []string{"member1", "member2"},
		Manager: func(opts *controllermanager.Options) {
			// Every retry, and the safety recheck, is ten minutes away.
			opts.RateLimiter.BaseDelay = 10 * time.Minute
			opts.RateLimiter.MaxDelay = 10 * time.Minute
			opts.BlockedWorkRecheckInterval = 10 * time.Minute
		},
		Simulator: 20 * time.Millisecond,
	})
	ctx, k8s, sim = plane.Ctx, plane.Client, plane.Sim
})

// syncs counts finished ResourceBinding syncs, from the controller's own metric.
func syncs() float64 {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != "binding_controller_sync_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

var _ = Describe("A cluster blocked by a terminating Work", func() {
	It("gets its new Work within seconds of the old one going, with every retry ten minutes away", func() {
		d := testkit.Deployment("default", "nginx")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		newBinding := func(id string) *workv1alpha2.ResourceBinding {
			return &workv1alpha2.ResourceBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment", Namespace: "default",
					Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: id}},
				Spec: workv1alpha2.ResourceBindingSpec{
					Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"},
					Replicas: 2,
					Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}, {Name: "member2", Replicas: 1}},
				},
			}
		}
		state := func(cluster string) func() string {
			return func() string {
				w := &workv1alpha1.Work{}
				err := k8s.Get(ctx, types.NamespacedName{Namespace: "karmada-es-" + cluster, Name: "nginx-687f7fb96f"}, w)
				switch {
				case apierrors.IsNotFound(err):
					return "absent"
				case err != nil:
					return err.Error()
				case w.DeletionTimestamp != nil:
					return "terminating"
				}
				return "live:" + w.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]
			}
		}

		Expect(k8s.Create(ctx, newBinding("first"))).To(Succeed())
		Eventually(state("member1"), 10*time.Second).Should(Equal("live:first"))
		Eventually(state("member2"), 10*time.Second).Should(Equal("live:first"))

		sim.Disconnect("member1")
		rb := newBinding("")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)).To(Succeed())
		Expect(k8s.Delete(ctx, rb)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)) }, 10*time.Second).Should(BeTrue())
		Expect(k8s.Create(ctx, newBinding("second"))).To(Succeed())
		Eventually(state("member2"), 10*time.Second).Should(Equal("live:second"))
		Expect(state("member1")()).To(Equal("terminating"))

		By("not spinning while blocked: no sync runs while nothing changes")
		settled, err := testkit.Settled(syncs, time.Second, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Consistently(syncs, 3*time.Second, 100*time.Millisecond).Should(Equal(settled))

		By("recovering on the old Work's deletion event")
		sim.Connect("member1")
		released := time.Now()
		Eventually(state("member1"), 5*time.Second).Should(Equal("live:second"))
		GinkgoWriter.Printf("member1 recovered %s after its old Work was released\n", time.Since(released))
	})
})

var _ = Describe("A Work's execution finalizer taken away by hand", func() {
	// Without it, deleting the Work would leave its workload running in the member cluster.
	// Every retry and recheck is ten minutes away, so only the Work watch can put it back.
	It("comes back from the Work watch, with every retry ten minutes away", func() {
		d := testkit.Deployment("default", "kept")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, testkit.Binding("default", "kept-deployment", "kept-1", d, "member1"))).To(Succeed())
		key := testkit.WorkKey("member1", d)
		finalizers := func() []string {
			w := &workv1alpha1.Work{}
			if err := k8s.Get(ctx, key, w); err != nil {
				return []string{err.Error()}
			}
			return w.Finalizers
		}
		Eventually(finalizers, 10*time.Second).Should(ConsistOf(workv1alpha1.ExecutionControllerFinalizer))

		w := &workv1alpha1.Work{}
		Expect(k8s.Get(ctx, key, w)).To(Succeed())
		Expect(k8s.Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		taken := time.Now()
		Eventually(finalizers, 10*time.Second).Should(ConsistOf(workv1alpha1.ExecutionControllerFinalizer))
		GinkgoWriter.Printf("the finalizer was back %s after it was taken away\n", time.Since(taken))
	})
})
