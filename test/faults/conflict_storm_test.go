// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/soaker"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/names"
)

const touched = "example.com/touched"

var _ = Describe("Conflict storm", func() {
	// Another writer patches the annotation example.com/touched on 6 Works every 20 ms for
	// 5 s, while every binding (those 6 included) is rescheduled to new replicas three
	// times, so the controller's Work updates keep meeting a changed resourceVersion.
	// Everything must converge afterwards, the other writer's annotation must survive the
	// controller's updates, and the controller must not hot-loop: once things are quiet,
	// it runs (about) no reconcile in 3 s.
	It("converges after another writer patches the same Works every 20 ms for 5 s, keeps its annotation, and stops reconciling once quiet", func() {
		const bindings, stormed = 20, 6
		m := startReadyManager(noLeader...)
		ns := newNamespace("faults-conflict-storm")
		load := soaker.NewWorkload(k8s, ns, members, uint64(GinkgoRandomSeed()))
		for i := 0; i < bindings; i++ {
			Expect(load.Create(ctx, appName(i), members)).To(Succeed())
		}
		expectConverged(ns, bindings)

		var targets []types.NamespacedName
		for i := 0; i < stormed; i++ {
			cluster := members[i%len(members)]
			targets = append(targets, types.NamespacedName{Namespace: names.ExecutionNamespace(cluster),
				Name: names.WorkName("Deployment", ns, appName(i))})
		}
		before := reconciles(m)
		var patches, failed sync.Map
		stop := time.Now().Add(5 * time.Second)
		var wg sync.WaitGroup
		for _, key := range targets {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for n := 0; time.Now().Before(stop); n++ {
					w := &workv1alpha1.Work{}
					w.Namespace, w.Name = key.Namespace, key.Name
					patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"%d"}}}`, touched, n)
					err := k8s.Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(patch)))
					if err != nil && !apierrors.IsNotFound(err) {
						failed.Store(key, err.Error())
					}
					patches.Store(key, n+1)
					time.Sleep(20 * time.Millisecond)
				}
			}()
		}
		for round := 0; round < 3; round++ {
			for i := 0; i < bindings; i++ {
				Expect(load.Update(ctx, appName(i), members)).To(Succeed())
			}
			time.Sleep(time.Second)
		}
		wg.Wait()
		failed.Range(func(k, v any) bool { Fail(fmt.Sprintf("patching %v: %v", k, v)); return false })
		stormReconciles := reconciles(m) - before

		expectConverged(ns, bindings)
		for _, key := range targets {
			w := &workv1alpha1.Work{}
			Expect(k8s.Get(ctx, key, w)).To(Succeed())
			Expect(w.Annotations).To(HaveKey(touched), "the controller dropped another writer's annotation from "+key.String())
		}
		quiet := quietReconciles(m, 3*time.Second)
		var total int
		patches.Range(func(_, v any) bool { total += v.(int); return true })
		AddReportEntry("conflict storm", fmt.Sprintf("%d patches by the other writer; %.0f reconciles during the storm; "+
			"%.0f in the quiet 3 s after convergence; %s", total, stormReconciles, quiet, writes(m)))
		Expect(quiet).To(BeNumerically("<=", 2), "the controller keeps reconciling with nothing to do")
	})
})
