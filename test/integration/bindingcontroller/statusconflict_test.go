// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

var _ = Describe("The binding's status shared with Karmada's own writers", func() {
	// Karmada's scheduler and binding status controller write the same status as this
	// controller. A stand-in for them rewrites a condition of its own in a loop while the
	// binding's clusters change under it.
	It("writes WorksSynced in place, keeps the other writer's condition, and logs no Reconciler error", func() {
		ns := newNamespace()
		d := deployment(ns, "busy")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		rb := binding(ns, "busy-deployment", "id-1", d, "member1")
		Expect(k8s.Create(ctx, rb)).To(Succeed())
		Eventually(worksSyncedOn(ns, "busy-deployment")).Should(Equal("True Synced: 1/1 clusters synced"))

		var writes atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				live := &workv1alpha2.ResourceBinding{}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(rb), live); err != nil {
					continue
				}
				meta.SetStatusCondition(&live.Status.Conditions, metav1.Condition{Type: "Scheduled", Status: metav1.ConditionTrue,
					Reason: "Success", Message: fmt.Sprintf("binding has been scheduled successfully (%d)", i)})
				if k8s.Status().Update(ctx, live) == nil {
					writes.Add(1)
				}
			}
		}()

		// Each step runs while the other writer is writing: its count must move on during it.
		Eventually(writes.Load).Should(BeNumerically(">=", 5))
		for _, clusters := range [][]string{{"member1", "member2"}, {"member1"}, {"member1", "member2", "member3"}} {
			before := writes.Load()
			// The other writer updates the status as fast as it can, so this spec change
			// conflicts often: client-go's default five tries in 50 ms ran out on a busy
			// machine. Try for longer, with jitter, as a real writer would.
			Expect(retry.RetryOnConflict(wait.Backoff{Steps: 100, Duration: 20 * time.Millisecond, Jitter: 1}, func() error {
				live := &workv1alpha2.ResourceBinding{}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(rb), live); err != nil {
					return err
				}
				live.Spec.Clusters = nil
				for _, c := range clusters {
					live.Spec.Clusters = append(live.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 1})
				}
				return k8s.Update(ctx, live)
			})).To(Succeed())
			want := fmt.Sprintf("True Synced: %d/%d clusters synced", len(clusters), len(clusters))
			Eventually(worksSyncedOn(ns, "busy-deployment")).Should(Equal(want))
			Eventually(writes.Load).Should(BeNumerically(">=", before+5), "the other writer keeps writing")
		}
		close(stop)
		wg.Wait()

		live := &workv1alpha2.ResourceBinding{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), live)).To(Succeed())
		Expect(meta.FindStatusCondition(live.Status.Conditions, "Scheduled")).NotTo(BeNil(), "the other writer's condition stays")
		Expect(meta.FindStatusCondition(live.Status.Conditions, workv1alpha2.ConditionWorksSynced)).To(
			HaveField("ObservedGeneration", live.Generation))
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "Reconciler error") {
				Expect(line).NotTo(ContainSubstring(`"`+ns+`"`), "a status conflict must not surface as a Reconciler error")
			}
		}
	})
})
