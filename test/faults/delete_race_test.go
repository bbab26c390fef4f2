// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/binding-controller/binding-controller/internal/testenv/soaker"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

var _ = Describe("Binding deleted during its first sync", func() {
	// 60 bindings × 3 clusters are each deleted 0–15 ms after they are created, so the
	// deletion often lands while the first sync is still writing the Works. Every binding
	// must be gone and must leave no Work behind. Some deletions race the finalizer patch,
	// and kube-apiserver then removes a binding whose finalizer it has just accepted
	// (kubernetes/kubernetes#77988): the Works its sync wrote must still go.
	It("leaves no orphaned Work when a binding is deleted while its first sync is creating its Works", func() {
		startReadyManager(noLeader...)
		ns := newNamespace("faults-delete-race")
		load := soaker.NewWorkload(k8s, ns, members, uint64(GinkgoRandomSeed()))
		for i := 0; i < 60; i++ {
			Expect(load.Create(ctx, appName(i), members)).To(Succeed())
			time.Sleep(time.Duration(i%6) * 3 * time.Millisecond)
			Expect(load.Delete(ctx, appName(i))).To(Succeed())
		}
		Eventually(func() ([]workv1alpha2.ResourceBinding, error) {
			list := &workv1alpha2.ResourceBindingList{}
			err := k8s.List(ctx, list)
			var left []workv1alpha2.ResourceBinding
			for _, rb := range list.Items {
				if rb.Namespace == ns {
					left = append(left, rb)
				}
			}
			return left, err
		}).Should(BeEmpty())
		expectConverged(ns, 0)
		Consistently(func() int { state, _ := check(ns); return state.Works }, 2*time.Second).Should(BeZero())
	})
})
