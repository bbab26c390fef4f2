// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"context"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// Observer reads what the controller left in the API server as a user would, through an
// uncached client: the Work each cluster holds and the events about an object. A failed
// read fails the spec, through Gomega.
type Observer struct {
	Ctx    context.Context
	Client client.Client
}

// WorkKey is where cluster's Work of Deployment d lives.
func WorkKey(cluster string, d *appsv1.Deployment) types.NamespacedName {
	return types.NamespacedName{Namespace: names.ExecutionNamespace(cluster), Name: names.WorkName("Deployment", d.Namespace, d.Name)}
}

// Work returns the Work as the API server has it, or nil when there is none.
func (o Observer) Work(key types.NamespacedName) *workv1alpha1.Work {
	w := &workv1alpha1.Work{}
	err := o.Client.Get(o.Ctx, key, w)
	if apierrors.IsNotFound(err) {
		return nil
	}
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	return w
}

// WorkState says what a cluster holds: "absent", "terminating", or "live:" and the
// binding's permanent id of a live Work.
func (o Observer) WorkState(key types.NamespacedName) func() string {
	return func() string {
		w := o.Work(key)
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

// EventsOn returns "Type Reason: message" for every event about the named object.
func (o Observer) EventsOn(namespace, kind, name string) func() []string {
	return func() []string {
		list := &corev1.EventList{}
		gomega.Expect(o.Client.List(o.Ctx, list, client.InNamespace(namespace))).To(gomega.Succeed())
		var out []string
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
				out = append(out, e.Type+" "+e.Reason+": "+e.Message)
			}
		}
		return out
	}
}
