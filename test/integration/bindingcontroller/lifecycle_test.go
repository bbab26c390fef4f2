// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

var _ = Describe("Binding lifecycle", func() {
	It("removes the Work of a cluster the binding no longer targets", func() {
		ns := newNamespace()
		d := deployment(ns, "api")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		rb := binding(ns, "api-deployment", "id-1", d, members...)
		Expect(k8s.Create(ctx, rb)).To(Succeed())
		for _, m := range members {
			Eventually(workState(workKey(m, d))).Should(Equal("live:id-1"))
		}

		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)).To(Succeed())
		rb.Spec.Clusters = rb.Spec.Clusters[:2]
		Expect(k8s.Update(ctx, rb)).To(Succeed())
		Eventually(workState(workKey("member3", d))).Should(Equal("absent"))
		Expect(workState(workKey("member1", d))()).To(Equal("live:id-1"))
		Expect(workState(workKey("member2", d))()).To(Equal("live:id-1"))
	})

	It("deletes every Work of a deleted binding, then releases its finalizer", func() {
		ns := newNamespace()
		d := deployment(ns, "db")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		rb := binding(ns, "db-deployment", "id-1", d, members...)
		Expect(k8s.Create(ctx, rb)).To(Succeed())
		Eventually(func() []string {
			_ = k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)
			return rb.Finalizers
		}).Should(ContainElement(workv1alpha2.BindingControllerFinalizer))
		for _, m := range members {
			Eventually(workState(workKey(m, d))).Should(Equal("live:id-1"))
		}
		Expect(k8s.Delete(ctx, rb)).To(Succeed())
		for _, m := range members {
			Eventually(workState(workKey(m, d))).Should(Equal("absent"))
		}
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)) }).Should(BeTrue())
	})

	It("serves the healthy clusters when one has no execution namespace, and names that cluster", func() {
		member9 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member9"}}
		Expect(k8s.Create(ctx, member9)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(ctx, member9)).To(Succeed()) })
		ns := newNamespace()
		d := deployment(ns, "cache")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "cache-deployment", "id-1", d, "member1", "member9", "member2"))).To(Succeed())
		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-1"))
		Eventually(workState(workKey("member2", d))).Should(Equal("live:id-1"))
		Eventually(eventsOn(ns, "ResourceBinding", "cache-deployment")).Should(ContainElement(And(
			ContainSubstring("Warning SyncWorkFailed: cluster member9: work karmada-es-member9/"),
			ContainSubstring(`namespaces "karmada-es-member9" not found`))))

		By("events are core/v1 as Karmada writes them: source binding-controller, repeats counted")
		failedOn := func(kind, name string) func() *corev1.Event {
			return func() *corev1.Event {
				list := &corev1.EventList{}
				Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
				for i, e := range list.Items {
					if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name && e.Reason == "SyncWorkFailed" {
						return &list.Items[i]
					}
				}
				return nil
			}
		}
		for _, on := range [][2]string{{"ResourceBinding", "cache-deployment"}, {"Deployment", "cache"}} {
			Eventually(failedOn(on[0], on[1])).Should(And(
				HaveField("Source.Component", "binding-controller"),
				HaveField("ReportingController", "binding-controller"),
				HaveField("Type", corev1.EventTypeWarning)), on[0])
		}
		// The retries raise the same event again: one Event whose count grows, not one
		// Event per retry.
		Eventually(func() int32 { return failedOn("ResourceBinding", "cache-deployment")().Count }).Should(BeNumerically(">=", 2))
		Expect(eventsOn(ns, "ResourceBinding", "cache-deployment")()).To(HaveLen(1))

		// Once the namespace exists the retries get member9 its Work without help.
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-es-member9"}})).To(Succeed())
		Eventually(workState(workKey("member9", d))).Should(Equal("live:id-1"))
	})

	// Every path that writes the binding: the finalizer patch, the condition patch of a
	// partial failure (cluster ghost has no execution namespace), and the release of the
	// finalizer on deletion (another controller's finalizer keeps the binding visible).
	It("leaves every field of the binding it does not own as it was, through sync, failure and deletion", func() {
		ns := newNamespace()
		d := deployment(ns, "kept")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		rb := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
			"metadata": map[string]any{
				"name": "kept-deployment", "namespace": ns,
				"labels":      map[string]any{workv1alpha2.ResourceBindingPermanentIDLabel: "id-1", "team": "a"},
				"annotations": map[string]any{"example.com/note": "keep me"},
				"finalizers":  []any{"example.com/other"},
			},
			"spec": map[string]any{
				"resource": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": ns, "name": "kept",
					"resourceVersion": "42"},
				"replicas":      int64(2),
				"clusters":      []any{map[string]any{"name": "member1", "replicas": int64(2)}, map[string]any{"name": "ghost"}},
				"schedulerName": "default-scheduler",
				"replicaRequirements": map[string]any{
					"resourceRequest":   map[string]any{"cpu": "100m"},
					"priorityClassName": "high",
				},
				"failover": map[string]any{"application": map[string]any{
					"decisionConditions": map[string]any{"tolerationSeconds": int64(30)},
					"purgeMode":          "Gracefully",
				}},
				"rescheduleTriggeredAt": "2026-12-01T10:00:00Z",
				"schedulePriority":      map[string]any{"priority": int64(7)},
			},
		}}
		Expect(k8s.Create(ctx, rb)).To(Succeed())
		scheduled := map[string]any{"type": "Scheduled", "status": "True", "reason": "Success",
			"message": "Binding has been scheduled successfully.", "lastTransitionTime": "2026-12-01T10:00:00Z"}
		// The controller may add its finalizer and condition at any moment: write the status
		// as a well-behaved scheduler would, keeping conditions it does not own and retrying
		// on conflict.
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
				return err
			}
			conditions, _, _ := unstructured.NestedSlice(rb.Object, "status", "conditions")
			rb.Object["status"] = map[string]any{
				"schedulerObservedGeneration": int64(1),
				"conditions":                  []any{scheduled},
				"aggregatedStatus": []any{map[string]any{"clusterName": "member1", "applied": true, "health": "Healthy",
					"status": map[string]any{"readyReplicas": int64(2)}}},
			}
			if c := worksSyncedOf(conditions); c != nil {
				rb.Object["status"].(map[string]any)["conditions"] = append([]any{c}, scheduled)
			}
			return k8s.Status().Update(ctx, rb)
		})).To(Succeed())
		before := rb.DeepCopy()

		Eventually(workState(workKey("member1", d))).Should(Equal("live:id-1"))
		after := &unstructured.Unstructured{}
		Eventually(func() []any {
			after.SetGroupVersionKind(schema.GroupVersionKind{Group: "work.karmada.io", Version: "v1alpha2", Kind: "ResourceBinding"})
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), after)).To(Succeed())
			conditions, _, _ := unstructured.NestedSlice(after.Object, "status", "conditions")
			return conditions
		}).Should(HaveLen(2), "the WorksSynced condition joins the scheduler's")
		Expect(after.GetFinalizers()).To(ConsistOf("example.com/other", workv1alpha2.BindingControllerFinalizer))
		Expect(after.Object["spec"]).To(Equal(before.Object["spec"]))
		// Status is the same but for the controller's own condition.
		gotStatus := after.Object["status"].(map[string]any)
		wantStatus := before.Object["status"].(map[string]any)
		gotStatus["conditions"] = withoutWorksSynced(gotStatus["conditions"].([]any))
		wantStatus["conditions"] = withoutWorksSynced(wantStatus["conditions"].([]any))
		Expect(gotStatus["conditions"]).To(HaveLen(1))
		Expect(gotStatus).To(Equal(wantStatus))
		Expect(after.GetLabels()).To(Equal(before.GetLabels()))
		Expect(after.GetAnnotations()).To(Equal(before.GetAnnotations()))
		Expect(worksSyncedOn(ns, "kept-deployment")()).To(HavePrefix("False PartiallySynced: 1/2 clusters synced; ghost: "))

		Expect(k8s.Delete(ctx, rb)).To(Succeed())
		Eventually(workState(workKey("member1", d))).Should(Equal("absent"))
		Eventually(func() []string {
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rb), after)).To(Succeed())
			return after.GetFinalizers()
		}).Should(Equal([]string{"example.com/other"}), "only the controller's own finalizer is released")
		Expect(after.Object["spec"]).To(Equal(before.Object["spec"]))
		gotStatus = after.Object["status"].(map[string]any)
		gotStatus["conditions"] = withoutWorksSynced(gotStatus["conditions"].([]any))
		Expect(gotStatus).To(Equal(wantStatus))
		Expect(after.GetLabels()).To(Equal(before.GetLabels()))
		Expect(after.GetAnnotations()).To(Equal(before.GetAnnotations()))

		// Let it go, as the other controller would.
		base := after.DeepCopy()
		after.SetFinalizers(nil)
		Expect(k8s.Patch(ctx, after, client.MergeFrom(base))).To(Succeed())
	})

	It("syncs a ClusterResourceBinding of a cluster-scoped template and cleans up after it", func() {
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "it:reader"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
		}
		Expect(k8s.Create(ctx, role)).To(Succeed())
		crb := &workv1alpha2.ClusterResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "it-reader-clusterrole",
				Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "crb-1"}},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource: workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "it:reader"},
				Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member2"}},
			},
		}
		Expect(k8s.Create(ctx, crb)).To(Succeed())
		keys := []types.NamespacedName{}
		for _, m := range []string{"member1", "member2"} {
			key := types.NamespacedName{Namespace: names.ExecutionNamespace(m), Name: names.WorkName("ClusterRole", "", "it:reader")}
			keys = append(keys, key)
			Eventually(func() *workv1alpha1.Work { return getWork(key) }).ShouldNot(BeNil())
			w := getWork(key)
			Expect(w.Labels).To(HaveKeyWithValue(workv1alpha2.ClusterResourceBindingPermanentIDLabel, "crb-1"))
			Expect(w.Annotations).To(HaveKeyWithValue(workv1alpha2.ClusterResourceBindingNameAnnotation, "it-reader-clusterrole"))
		}
		Eventually(func() []string {
			_ = k8s.Get(ctx, client.ObjectKeyFromObject(crb), crb)
			return crb.Finalizers
		}).Should(ContainElement(workv1alpha2.ClusterResourceBindingControllerFinalizer))
		// Current Karmada's words: no namespace, no stray slash. Events of cluster-scoped
		// objects are kept in the default namespace.
		const synced = "Normal SyncWorkSucceed: Sync work of ClusterResourceBinding(it-reader-clusterrole) successful."
		Eventually(eventsOn("default", "ClusterResourceBinding", "it-reader-clusterrole")).Should(ContainElement(synced))
		Eventually(eventsOn("default", "ClusterRole", "it:reader")).Should(ContainElement(synced))
		// Under the name of Karmada's controller for this kind, which exporters select on.
		events := &corev1.EventList{}
		Expect(k8s.List(ctx, events, client.InNamespace("default"))).To(Succeed())
		components := map[string]string{}
		for _, e := range events.Items {
			if e.Reason == "SyncWorkSucceed" && e.InvolvedObject.Name == "it-reader-clusterrole" {
				components[e.Source.Component] = e.ReportingController
			}
		}
		Expect(components).To(Equal(map[string]string{"cluster-resource-binding-controller": "cluster-resource-binding-controller"}))
		Expect(k8s.Delete(ctx, crb)).To(Succeed())
		for _, key := range keys {
			Eventually(func() *workv1alpha1.Work { return getWork(key) }).Should(BeNil())
		}
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(crb), crb)) }).Should(BeTrue())
	})

	It("restores a Work removed by hand", func() {
		ns := newNamespace()
		d := deployment(ns, "restored")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "restored-deployment", "id-1", d, "member1"))).To(Succeed())
		key := workKey("member1", d)
		Eventually(workState(key)).Should(Equal("live:id-1"))
		w := getWork(key)
		Expect(k8s.Delete(ctx, w)).To(Succeed())
		Eventually(func() bool {
			now := getWork(key)
			return now != nil && now.UID != w.UID && now.DeletionTimestamp == nil
		}).Should(BeTrue())
	})
})

func isWorksSynced(c any) bool {
	m, ok := c.(map[string]any)
	return ok && m["type"] == workv1alpha2.ConditionWorksSynced
}

func withoutWorksSynced(conditions []any) []any {
	var out []any
	for _, c := range conditions {
		if !isWorksSynced(c) {
			out = append(out, c)
		}
	}
	return out
}

func worksSyncedOf(conditions []any) any {
	for _, c := range conditions {
		if isWorksSynced(c) {
			return c
		}
	}
	return nil
}

var _ = Describe("Drift", func() {
	It("restores a Work whose manifest was edited by hand", func() {
		ns := newNamespace()
		d := deployment(ns, "edited")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "edited-deployment", "id-1", d, "member1"))).To(Succeed())
		key := workKey("member1", d)
		Eventually(workState(key)).Should(Equal("live:id-1"))
		original := string(getWork(key).Spec.Workload.Manifests[0].Raw)

		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			w := getWork(key)
			w.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"edited","namespace":"` + ns + `"}}`)
			return k8s.Update(ctx, w)
		})).To(Succeed())
		Eventually(func() string { return string(getWork(key).Spec.Workload.Manifests[0].Raw) }).Should(MatchJSON(original))
	})

	It("restores a label of its own removed by hand, keeping labels others added", func() {
		ns := newNamespace()
		d := deployment(ns, "relabelled")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "relabelled-deployment", "id-1", d, "member1"))).To(Succeed())
		key := workKey("member1", d)
		Eventually(workState(key)).Should(Equal("live:id-1"))

		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			w := getWork(key)
			delete(w.Labels, workv1alpha2.ResourceBindingPermanentIDLabel)
			w.Labels["example.com/team"] = "web"
			return k8s.Update(ctx, w)
		})).To(Succeed())
		Eventually(func() map[string]string { return getWork(key).Labels }).Should(And(
			HaveKeyWithValue(workv1alpha2.ResourceBindingPermanentIDLabel, "id-1"),
			HaveKeyWithValue("example.com/team", "web")))
	})
})
