// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// hostileCustomizations are six scripts of the review that found the sandbox's holes, one
// per kind of test/e2e/testdata/hostile-crds. Before the sandbox's bounds, the first ended
// the process (a Go stack overflow), the second and third held a worker for about a minute
// each and the fourth and fifth took GiBs.
var hostileCustomizations = map[string]string{
	"Pattern":   `local s = "" for i = 1, 1000000 do s = s .. "(" end string.find("x", s)`,
	"Backtrack": `string.find(string.rep("a", 400), ".-.-.-b")`,
	"Gsub":      `string.gsub(string.rep("a", 200000), "a", "%0%0%0%0%0%0")`,
	"Doubling":  `local s = "x" while true do s = s .. s end`,
	"Tables":    `local t = {} while true do t[#t + 1] = {} end`,
	"Loop":      `while true do end`,
}

// maxRSS is the bound on the controller's memory while hostile scripts run.
const maxRSS = 1 << 30

var _ = Describe("Hostile customizations", func() {
	It("never end the process or take its memory, and the workloads of others still get their Works", func() {
		manager := startManager("--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
			"--rate-limiter-max-delay=2s")
		ns := newNamespace("e2e-hostile")
		// Other specs' managers count what they write: leave no binding behind. This runs
		// after the customizations' cleanups and before the manager's.
		DeferCleanup(func() {
			Expect(k8s.DeleteAllOf(ctx, &workv1alpha2.ResourceBinding{}, client.InNamespace(ns))).To(Succeed())
			Eventually(func() int {
				list := &workv1alpha2.ResourceBindingList{}
				Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
				return len(list.Items)
			}).Should(BeZero())
		})
		By("a first ordinary binding, so that what follows is measured on a started manager")
		createWorkload(ns, "warm-up", members3...)
		want := expectedWorks(ns, members3, "warm-up")
		Eventually(liveWorks(ns)).Should(ConsistOf(want))

		By("six hostile customizations, each with a binding of its kind to three clusters")
		for kind, body := range hostileCustomizations {
			ric := &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: "hostile-" + strings.ToLower(kind)}}
			ric.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "hostile.example.io/v1", Kind: kind}
			ric.Spec.Customizations.ReplicaRevision = &configv1alpha1.ReplicaRevision{
				LuaScript: "function ReviseReplica(obj, desiredReplica)\n" + body + "\nreturn obj\nend"}
			Expect(k8s.Create(ctx, ric)).To(Succeed())
			DeferCleanup(func() { _ = k8s.Delete(ctx, ric) })
			dividedTemplateBinding(ns, "hostile.example.io/v1", kind, "h-"+strings.ToLower(kind))
		}

		By("while the hostile templates keep changing, so that their scripts keep running")
		stopChurn := make(chan struct{})
		churned := make(chan struct{})
		go churnTemplates(ns, stopChurn, churned)

		By("ordinary bindings, one after another: Deployments, and a kind a well-behaved customization revises")
		ric := &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: "e2e-queue-consumers"}}
		ric.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "queues.example.io/v1", Kind: "Queue"}
		ric.Spec.Customizations.ReplicaRevision = &configv1alpha1.ReplicaRevision{LuaScript: `
function ReviseReplica(obj, desiredReplica)
  obj.spec.consumers = desiredReplica
  return obj
end`}
		Expect(k8s.Create(ctx, ric)).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(ctx, ric) })
		var slowest time.Duration
		var took []string
		for i := 0; i < 10; i++ {
			name := fmt.Sprintf("web-%d", i)
			start := time.Now()
			createWorkload(ns, name, members3...)
			want = append(want, expectedWorks(ns, members3, name)...)
			Eventually(liveWorks(ns)).Should(ConsistOf(want))
			slowest = max(slowest, time.Since(start))
			took = append(took, time.Since(start).Round(time.Millisecond).String())
		}
		start := time.Now()
		dividedTemplateBinding(ns, "queues.example.io/v1", "Queue", "jobs")
		for _, m := range members3 {
			want = append(want, m+"/"+names.WorkName("Queue", ns, "jobs"))
		}
		Eventually(liveWorks(ns)).Should(ConsistOf(want))
		slowest = max(slowest, time.Since(start))
		took = append(took, time.Since(start).Round(time.Millisecond).String())
		close(stopChurn)
		<-churned
		AddReportEntry("ordinary bindings, creation to every Work", strings.Join(took, " "))
		AddReportEntry("slowest ordinary binding, creation to every Work", slowest.Round(time.Millisecond).String())

		By("each hostile binding says which customization failed it")
		for kind := range hostileCustomizations {
			name := "h-" + strings.ToLower(kind)
			Eventually(func() string {
				rb := &workv1alpha2.ResourceBinding{}
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-binding"}, rb); err != nil {
					return err.Error()
				}
				if c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.ConditionWorksSynced); c != nil {
					return c.Message
				}
				return ""
			}).Should(ContainSubstring(`ResourceInterpreterCustomization "hostile-`+strings.ToLower(kind)+`"`), kind)
		}

		By("the process is the one started, and its memory stayed under 1 GiB")
		Expect(manager.Exited()).To(BeFalse(), "the manager exited:\n%s", manager.log())
		mem, err := localplane.ReadMemory(manager.Pid())
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("peak RSS", fmt.Sprintf("%d MiB", mem.PeakRSS>>20))
		Expect(mem.PeakRSS).To(BeNumerically("<", maxRSS))
	})
})

// churnTemplates changes every hostile template every 100 ms until stop closes, so that
// their bindings sync, and their scripts run, again and again.
func churnTemplates(ns string, stop <-chan struct{}, done chan<- struct{}) {
	defer GinkgoRecover()
	defer close(done)
	for round := 0; ; round++ {
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
		for kind := range hostileCustomizations {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("hostile.example.io/v1")
			u.SetKind(kind)
			patch := []byte(fmt.Sprintf(`{"spec":{"round":%d}}`, round))
			u.SetNamespace(ns)
			u.SetName("h-" + strings.ToLower(kind))
			_ = k8s.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch))
		}
	}
}

// dividedTemplateBinding creates a template of kind and its binding to three clusters, with
// replicas divided so that each cluster's copy is revised by the kind's interpreter.
func dividedTemplateBinding(ns, apiVersion, kind, name string) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"replicas": int64(3), "consumers": int64(3)},
	}}
	Expect(k8s.Create(ctx, u)).To(Succeed())
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-binding", Namespace: ns,
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-" + name}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name, UID: u.GetUID()},
			Replicas: 3,
			Placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}},
		},
	}
	for _, m := range members3 {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: m, Replicas: 1})
	}
	Expect(k8s.Create(ctx, rb)).To(Succeed())
}
