// SPDX-License-Identifier: Apache-2.0

// Package workload makes what a benchmark's loads are made of: member clusters,
// Deployment templates (and the custom kind a customization's Lua revises), bindings, the
// Works they render to, and the changes made to bindings during a run.
package workload

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/render"
)

// Member returns the name of member cluster i (0-based): member1, member2, …
func Member(i int) string { return fmt.Sprintf("member%d", i+1) }

// Members returns the first n member names.
func Members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = Member(i)
	}
	return out
}

// padValue is the value of every padding environment variable: 64 characters.
var padValue = strings.Repeat("x", 64)

// Deployment returns a small Deployment template with padEnv extra environment variables
// (each adds about 100 bytes to the manifest a Work carries).
func Deployment(namespace, name string, replicas int32, padEnv int) *appsv1.Deployment {
	c := corev1.Container{Name: "app", Image: "nginx:1.27",
		Ports: []corev1.ContainerPort{{ContainerPort: 80}}}
	for k := 0; k < padEnv; k++ {
		c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("BENCH_PAD_%05d", k), Value: padValue})
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"app": name}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{c}},
			},
		},
	}
}

// DeploymentRef is a binding's reference to template d.
func DeploymentRef(d *appsv1.Deployment) workv1alpha2.ObjectReference {
	return workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, UID: d.UID}
}

// Binding returns the ResourceBinding of template d to clusters, one replica each.
func Binding(d *appsv1.Deployment, name, permanentID string, clusters []string) *workv1alpha2.ResourceBinding {
	return BindingOf(DeploymentRef(d), name, permanentID, clusters)
}

// BindingOf returns the ResourceBinding of the template ref names to clusters, one
// replica each.
func BindingOf(ref workv1alpha2.ObjectReference, name, permanentID string, clusters []string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: name,
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: permanentID}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: ref,
			Replicas: int32(len(clusters)),
		},
	}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 1})
	}
	return rb
}

// ToUnstructured converts a typed Deployment (as the API server returned it) into the
// unstructured template the controller reads.
func ToUnstructured(d *appsv1.Deployment) (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	return u, nil
}

// RenderBinding renders the Works rb should have, as the controller writes them.
func RenderBinding(rb *workv1alpha2.ResourceBinding, template *unstructured.Unstructured) ([]*workv1alpha1.Work, error) {
	b := render.Binding{Kind: render.ResourceBindingKind, Namespace: rb.Namespace, Name: rb.Name,
		PermanentID: rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel], Spec: &rb.Spec}
	var out []*workv1alpha1.Work
	for _, t := range render.Targets(&rb.Spec) {
		w, err := render.Work(b, template, t, render.Overrides{})
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// ManifestBytes is the size of the manifest the Work of d to one cluster carries.
func ManifestBytes(d *appsv1.Deployment) (int, error) {
	u, err := ToUnstructured(d)
	if err != nil {
		return 0, err
	}
	rb := Binding(d, d.Name, "size-probe", []string{"member1"})
	b := render.Binding{Kind: render.ResourceBindingKind, Namespace: rb.Namespace, Name: rb.Name,
		PermanentID: "size-probe", Spec: &rb.Spec}
	w, err := render.Work(b, u, render.Targets(&rb.Spec)[0], render.Overrides{})
	if err != nil {
		return 0, err
	}
	return len(w.Spec.Workload.Manifests[0].Raw), nil
}

// PadForScale returns how many padding variables make d's manifest about scale times
// its unpadded size.
func PadForScale(scale float64) (padEnv, baseBytes, paddedBytes int, err error) {
	probe := Deployment("bench", "app-00000", 1, 0)
	if baseBytes, err = ManifestBytes(probe); err != nil {
		return 0, 0, 0, err
	}
	if scale <= 1 {
		return 0, baseBytes, baseBytes, nil
	}
	one, err := ManifestBytes(Deployment("bench", "app-00000", 1, 1))
	if err != nil {
		return 0, 0, 0, err
	}
	two, err := ManifestBytes(Deployment("bench", "app-00000", 1, 2))
	if err != nil {
		return 0, 0, 0, err
	}
	perVar := two - one
	overhead := one - baseBytes - perVar // the "env":[] around the variables
	padEnv = int(((scale-1)*float64(baseBytes)-float64(overhead))/float64(perVar) + 0.5)
	paddedBytes, err = ManifestBytes(Deployment("bench", "app-00000", 1, padEnv))
	return padEnv, baseBytes, paddedBytes, err
}

// The custom kind of the interpreter scenario: queues.example.io/v1 Queue (WorkloadCRDDir),
// whose replicas only a ResourceInterpreterCustomization's Lua revises.
const (
	LuaKindAPIVersion = "queues.example.io/v1"
	LuaKind           = "Queue"
)

// LuaReviseReplica is the scenario's ReviseReplica script: the simplest a user writes.
const LuaReviseReplica = `
function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica
  return obj
end`

// ReplicasCustomization is the ResourceInterpreterCustomization that revises LuaKind.
func ReplicasCustomization() *configv1alpha1.ResourceInterpreterCustomization {
	c := &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: "bench-queue-replicas"}}
	c.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: LuaKindAPIVersion, Kind: LuaKind}
	c.Spec.Customizations.ReplicaRevision = &configv1alpha1.ReplicaRevision{LuaScript: LuaReviseReplica}
	return c
}

// AsLuaKind returns a LuaKind template with d's labels and spec: d as the API server
// returned it (defaults filled in), so that the Works of both kinds carry the same body.
func AsLuaKind(d *appsv1.Deployment) (*unstructured.Unstructured, error) {
	u, err := ToUnstructured(d)
	if err != nil {
		return nil, err
	}
	q := &unstructured.Unstructured{Object: map[string]any{"spec": u.Object["spec"]}}
	q.SetAPIVersion(LuaKindAPIVersion)
	q.SetKind(LuaKind)
	q.SetNamespace(d.Namespace)
	q.SetName(d.Name)
	q.SetLabels(d.Labels)
	return q, nil
}

// DoubleReplicas is a merge patch giving every target cluster of rb twice its replicas:
// a spec change every one of its Works must show.
func DoubleReplicas(rb *workv1alpha2.ResourceBinding) client.Patch {
	parts := make([]string, len(rb.Spec.Clusters))
	total := int32(0)
	for i, c := range rb.Spec.Clusters {
		parts[i] = fmt.Sprintf(`{"name":%q,"replicas":%d}`, c.Name, 2*c.Replicas)
		total += 2 * c.Replicas
	}
	return client.RawPatch(types.MergePatchType,
		[]byte(fmt.Sprintf(`{"spec":{"replicas":%d,"clusters":[%s]}}`, total, strings.Join(parts, ","))))
}

// Doubled is rb as DoubleReplicas leaves it, so that a second change doubles again.
func Doubled(rb *workv1alpha2.ResourceBinding) *workv1alpha2.ResourceBinding {
	out := rb.DeepCopy()
	out.Spec.Replicas = 0
	for i := range out.Spec.Clusters {
		out.Spec.Clusters[i].Replicas *= 2
		out.Spec.Replicas += out.Spec.Clusters[i].Replicas
	}
	return out
}
