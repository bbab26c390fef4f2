package bindingcontroller_test

import (
	"strings"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
	"github.com/binding-controller/binding-controller/test/testkit"
)

var (
	deployment = testkit.Deployment
	binding    = testkit.Binding
)

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

// karmadaSyncs is how many syncs Karmada's binding_sync_work_duration_seconds holds with
// the given result, as the controller's metrics endpoint serves it.
func karmadaSyncs(result string) float64 {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "binding_sync_work_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return 0
}
