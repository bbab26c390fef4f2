package bindingcontroller_test

import (
	"strings"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

func deployment(namespace, name string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app": name}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
}

func binding(namespace, name, permanentID string, template *appsv1.Deployment, clusters ...string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: permanentID}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment",
				Namespace: template.Namespace, Name: template.Name, UID: template.UID},
			Replicas: 3,
		},
	}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 1})
	}
	return rb
}

func workKey(cluster string, d *appsv1.Deployment) types.NamespacedName {
	return types.NamespacedName{Namespace: names.ExecutionNamespace(cluster), Name: names.WorkName("Deployment", d.Namespace, d.Name)}
}

// getWork returns the Work as the API server has it, or nil when there is none.
func getWork(key types.NamespacedName) *workv1alpha1.Work {
	w := &workv1alpha1.Work{}
	err := k8s.Get(ctx, key, w)
	if apierrors.IsNotFound(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	return w
}

// workState says what a cluster holds: "absent", "terminating" or the permanent id of a live Work.
func workState(key types.NamespacedName) func() string {
	return func() string {
		w := getWork(key)
		switch {
		case w == nil:
			return "absent"
		case w.DeletionTimestamp != nil:
			return "terminating"
		default:
			return "live:" + w.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]
		}
	}
}

// eventsOn returns "Type Reason: message" for every event about the named object.
func eventsOn(namespace, kind, name string) func() []string {
	return func() []string {
		list := &corev1.EventList{}
		Expect(k8s.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		var out []string
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
				out = append(out, e.Type+" "+e.Reason+": "+e.Message)
			}
		}
		return out
	}
}

func containing(sub string) func([]string) bool {
	return func(lines []string) bool {
		for _, l := range lines {
			if strings.Contains(l, sub) {
				return true
			}
		}
		return false
	}
}
