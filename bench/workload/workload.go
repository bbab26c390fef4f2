// SPDX-License-Identifier: Apache-2.0

// Package workload makes what a benchmark's loads are made of: member clusters,
// Deployment templates, bindings, the Works they render to, and the changes made to
// bindings during a run.
package workload

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// Deployment returns a small Deployment template with padEnv extra environment variables
// (each adds about 100 bytes to the manifest a Work carries).
func Deployment(namespace, name string, replicas int32, padEnv int) *appsv1.Deployment {
	c := corev1.Container{Name: "app", Image: "nginx:1.27",
		Ports: []corev1.ContainerPort{{ContainerPort: 80}}}
	for k := 0; k < padEnv; k++ {
		c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("BENCH_PAD_%05d", k), Value: strings.Repeat("x", 64)})
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

// Binding returns the ResourceBinding of template d to clusters, one replica each.
func Binding(d *appsv1.Deployment, name, permanentID string, clusters []string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: name,
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: permanentID}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, UID: d.UID},
			Replicas: int32(len(clusters)),
		},
	}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 1})
	}
	return rb
}

// RenderBinding renders the Works rb of template d (as the API server returned it)
// should have, as the controller writes them.
func RenderBinding(rb *workv1alpha2.ResourceBinding, d *appsv1.Deployment) ([]*workv1alpha1.Work, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		return nil, err
	}
	template := &unstructured.Unstructured{Object: obj}
	template.SetAPIVersion("apps/v1")
	template.SetKind("Deployment")
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
	w, err := RenderBinding(Binding(d, d.Name, "size-probe", []string{"member1"}), d)
	if err != nil {
		return 0, err
	}
	return len(w[0].Spec.Workload.Manifests[0].Raw), nil
}

// PadForScale returns how many padding variables make a template's manifest about
// scale times its unpadded size.
func PadForScale(scale float64) (int, error) {
	var size [3]int // with 0, 1 and 2 variables
	for i := range size {
		var err error
		if size[i], err = ManifestBytes(Deployment("bench", "app-00000", 1, i)); err != nil {
			return 0, err
		}
	}
	if scale <= 1 {
		return 0, nil
	}
	perVar := size[2] - size[1]
	overhead := size[1] - size[0] - perVar // the "env":[] around the variables
	return int(((scale-1)*float64(size[0])-float64(overhead))/float64(perVar) + 0.5), nil
}

// DoubleReplicas is rb with twice the replicas on every target cluster, and the merge
// patch to it: a spec change every one of its Works must show.
func DoubleReplicas(rb *workv1alpha2.ResourceBinding) (*workv1alpha2.ResourceBinding, client.Patch) {
	doubled := rb.DeepCopy()
	doubled.Spec.Replicas *= 2
	for i := range doubled.Spec.Clusters {
		doubled.Spec.Clusters[i].Replicas *= 2
	}
	return doubled, client.MergeFrom(rb)
}
