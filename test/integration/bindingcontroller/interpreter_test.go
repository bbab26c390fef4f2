// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// template creates a template of any kind from its JSON.
func createTemplate(ns, manifest string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	Expect(json.Unmarshal([]byte(manifest), &u.Object)).To(Succeed())
	u.SetNamespace(ns)
	Expect(k8s.Create(ctx, u)).To(Succeed())
	return u
}

// dividedBinding binds template with replicas divided as shares says.
func dividedBinding(template *unstructured.Unstructured, replicas int32, shares map[string]int32) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: template.GetName() + "-binding", Namespace: template.GetNamespace(),
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-" + template.GetName()}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: template.GetAPIVersion(), Kind: template.GetKind(),
				Namespace: template.GetNamespace(), Name: template.GetName(), UID: template.GetUID()},
			Replicas:  replicas,
			Placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}},
		},
	}
	for _, c := range []string{"member1", "member2"} {
		if n, ok := shares[c]; ok {
			rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: n})
		}
	}
	Expect(k8s.Create(ctx, rb)).To(Succeed())
	return rb
}

// workloadField returns the field at path of the workload in cluster's Work of template.
func workloadField(cluster string, template *unstructured.Unstructured, path ...string) func() any {
	key := types.NamespacedName{Namespace: names.ExecutionNamespace(cluster),
		Name: names.WorkName(template.GetKind(), template.GetNamespace(), template.GetName())}
	return func() any {
		w := getWork(key)
		if w == nil || len(w.Spec.Workload.Manifests) == 0 {
			return nil
		}
		obj := map[string]any{}
		Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj)).To(Succeed())
		v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
		return v
	}
}

var _ = Describe("Replicas through the resource interpreter", func() {
	It("gives a Divided CloneSet each cluster's share (bundled Kruise customization)", func() {
		ns := newNamespace()
		cs := createTemplate(ns, `{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","metadata":{"name":"web"},
			"spec":{"replicas":6,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`)
		dividedBinding(cs, 6, map[string]int32{"member1": 2, "member2": 4})
		Eventually(workloadField("member1", cs, "spec", "replicas")).Should(BeEquivalentTo(2))
		Eventually(workloadField("member2", cs, "spec", "replicas")).Should(BeEquivalentTo(4))
	})

	It("gives an Advanced StatefulSet each cluster's share", func() {
		ns := newNamespace()
		sts := createTemplate(ns, `{"apiVersion":"apps.kruise.io/v1beta1","kind":"StatefulSet","metadata":{"name":"db"},"spec":{"replicas":5}}`)
		dividedBinding(sts, 5, map[string]int32{"member1": 3, "member2": 2})
		Eventually(workloadField("member1", sts, "spec", "replicas")).Should(BeEquivalentTo(3))
		Eventually(workloadField("member2", sts, "spec", "replicas")).Should(BeEquivalentTo(2))
	})

	It("gives a RayService one head and the rest as workers in each cluster", func() {
		ns := newNamespace()
		ray := createTemplate(ns, `{"apiVersion":"ray.io/v1","kind":"RayService","metadata":{"name":"serve"},
			"spec":{"rayClusterConfig":{"headGroupSpec":{"rayStartParams":{}},"workerGroupSpecs":[{"groupName":"workers","replicas":6,"rayStartParams":{}}]}}}`)
		dividedBinding(ray, 7, map[string]int32{"member1": 3, "member2": 4})
		Eventually(workloadField("member1", ray, "spec", "rayClusterConfig", "workerGroupSpecs")).Should(
			Equal([]any{map[string]any{"groupName": "workers", "replicas": float64(2), "rayStartParams": map[string]any{}}}))
		Eventually(workloadField("member2", ray, "spec", "rayClusterConfig", "workerGroupSpecs")).Should(
			Equal([]any{map[string]any{"groupName": "workers", "replicas": float64(3), "rayStartParams": map[string]any{}}}))
		Expect(workloadField("member2", ray, "spec", "rayClusterConfig", "headGroupSpec")()).To(Equal(map[string]any{"rayStartParams": map[string]any{}}))
	})

	It("revises a custom kind as its ResourceInterpreterCustomization says, and re-renders when it changes or goes", func() {
		ns := newNamespace()
		q := createTemplate(ns, `{"apiVersion":"queues.example.io/v1","kind":"Queue","metadata":{"name":"jobs"},"spec":{"consumers":9}}`)
		ric := &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: "queue-consumers-" + ns}}
		ric.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "queues.example.io/v1", Kind: "Queue"}
		ric.Spec.Customizations.ReplicaRevision = &configv1alpha1.ReplicaRevision{LuaScript: `
function ReviseReplica(obj, desiredReplica)
  obj.spec.consumers = desiredReplica
  return obj
end`}
		Expect(k8s.Create(ctx, ric)).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(ctx, ric) })
		dividedBinding(q, 9, map[string]int32{"member1": 4, "member2": 5})
		Eventually(workloadField("member1", q, "spec", "consumers")).Should(BeEquivalentTo(4))
		Eventually(workloadField("member2", q, "spec", "consumers")).Should(BeEquivalentTo(5))

		By("changing the script re-renders the Works")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(ric), ric); err != nil {
				return err
			}
			ric.Spec.Customizations.ReplicaRevision.LuaScript = `
function ReviseReplica(obj, desiredReplica)
  obj.spec.consumers = desiredReplica * 10
  return obj
end`
			return k8s.Update(ctx, ric)
		})).To(Succeed())
		Eventually(workloadField("member1", q, "spec", "consumers")).Should(BeEquivalentTo(40))
		Eventually(workloadField("member2", q, "spec", "consumers")).Should(BeEquivalentTo(50))

		By("a script that breaks for one cluster fails that cluster only, naming customization, operation and cluster")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(ric), ric); err != nil {
				return err
			}
			ric.Spec.Customizations.ReplicaRevision.LuaScript = `
function ReviseReplica(obj, desiredReplica)
  if desiredReplica == 5 then error("five consumers is too many") end
  obj.spec.consumers = desiredReplica
  return obj
end`
			return k8s.Update(ctx, ric)
		})).To(Succeed())
		Eventually(worksSyncedOn(ns, "jobs-binding")).Should(And(
			ContainSubstring("1/2 clusters synced"),
			ContainSubstring(`member2: rendering work: cluster member2: ReviseReplica of Queue `+ns+`/jobs by ResourceInterpreterCustomization "`+ric.Name+`"`),
			ContainSubstring("five consumers is too many")))
		Eventually(workloadField("member1", q, "spec", "consumers")).Should(BeEquivalentTo(4))
		Eventually(eventsOn(ns, "ResourceBinding", "jobs-binding")).Should(ContainElement(And(
			ContainSubstring("SyncWorkFailed"), ContainSubstring("five consumers is too many"))))

		By("deleting the customization leaves the kind to the native rules: the template's own value")
		Expect(k8s.Delete(ctx, ric)).To(Succeed())
		Eventually(workloadField("member2", q, "spec", "consumers")).Should(BeEquivalentTo(9))
		Eventually(worksSyncedOn(ns, "jobs-binding")).Should(Equal("True Synced: 2/2 clusters synced"))
	})
})
