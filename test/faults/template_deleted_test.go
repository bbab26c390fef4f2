// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/soaker"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

var _ = Describe("Template deleted under its binding", func() {
	// The Deployments of 10 converged bindings are deleted, then each binding is
	// rescheduled (member1..3 → member1, member2), so it syncs against a missing
	// template. Each reports WorksSynced False SyncFailed "resource template not found"
	// for its new generation, and the controller does not retry in a loop: it runs no
	// reconcile in 3 s once they have settled. When the templates come back and the
	// bindings change again, everything converges.
	It("reports SyncFailed not found and does not retry in a loop when a binding syncs against a deleted template", func() {
		const bindings = 10
		m := startReadyManager(noLeader...)
		ns := newNamespace("faults-template-deleted")
		load := soaker.NewWorkload(k8s, ns, members, uint64(GinkgoRandomSeed()))
		for i := 0; i < bindings; i++ {
			Expect(load.Create(ctx, appName(i), members)).To(Succeed())
		}
		expectConverged(ns, bindings)

		for i := 0; i < bindings; i++ {
			Expect(k8s.Delete(ctx, load.Deployment(appName(i)))).To(Succeed())
		}
		for i := 0; i < bindings; i++ {
			Expect(load.Update(ctx, appName(i), members[:2])).To(Succeed())
		}
		for i := 0; i < bindings; i++ {
			rb := soaker.BindingName(appName(i))
			// A sync that still finds the template in the manager's cache renders from it,
			// and rightly reports Synced. Touching the binding syncs it again, until the
			// cache has seen the deletion; no fixed wait guesses how long that takes.
			touches := 0
			Eventually(func() string {
				cond := worksSynced(ns, rb)()
				if strings.HasPrefix(cond, "True ") {
					touches++
					patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.binding-controller.io/touch":"%d"}}}`, touches)
					obj := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rb}}
					Expect(k8s.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
				}
				return cond
			}).Should(And(HavePrefix("False SyncFailed gen=2/2: resource template not found: "), HaveSuffix("not found")), rb)
		}
		quiet := quietReconciles(m, 3*time.Second)
		AddReportEntry("template deleted", fmt.Sprintf("%.0f reconciles in the quiet 3 s; %s", quiet, writes(m)))
		Expect(quiet).To(BeZero(), "the controller retries a binding whose template is gone")

		// The fault ends: the templates are back and the bindings change again.
		for i := 0; i < bindings; i++ {
			Expect(k8s.Create(ctx, load.Deployment(appName(i)))).To(Succeed())
			Expect(load.Update(ctx, appName(i), members[:2])).To(Succeed())
		}
		state := expectConverged(ns, bindings)
		Expect(state.Works).To(Equal(2 * bindings))
	})
})

var _ = Describe("Rescheduled away while its template is missing", func() {
	// A binding whose template is gone is rescheduled from member1..3 to member1, member2.
	// It cannot render Works, but member3's Work no longer has any business there and
	// Karmada's binding controller deletes such orphans before it even reads the template.
	It("deletes the Work of a cluster the binding no longer targets even while its template is missing", func() {
		startReadyManager(noLeader...)
		ns := newNamespace("faults-template-orphan")
		load := soaker.NewWorkload(k8s, ns, members, uint64(GinkgoRandomSeed()))
		Expect(load.Create(ctx, appName(0), members)).To(Succeed())
		expectConverged(ns, 1)
		Expect(k8s.Delete(ctx, load.Deployment(appName(0)))).To(Succeed())
		time.Sleep(time.Second) // for the manager's template cache to see it
		Expect(load.Update(ctx, appName(0), members[:2])).To(Succeed())
		rb := soaker.BindingName(appName(0))
		Eventually(worksSynced(ns, rb)).Should(HavePrefix("False SyncFailed gen=2/2: resource template not found"))
		Eventually(describeWorks(ns, rb)).Should(ConsistOf("member1:live", "member2:live"))
	})
})
