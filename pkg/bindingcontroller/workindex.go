// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/render"
)

// workByBindingIndex indexes Works by the binding their annotations name. Annotations, not
// the permanent-id label, so that a recreated binding still finds the Works its previous
// incarnation left behind.
const workByBindingIndex = "binding.work.karmada.io/owner"

func bindingIndexValue(k render.BindingKind, namespace, name string) string {
	return string(k) + "/" + types.NamespacedName{Namespace: namespace, Name: name}.String()
}

// bindingOfWork returns the binding a Work's annotations name, and false for a Work that
// names none (not ours).
func bindingOfWork(obj client.Object) (render.BindingKind, types.NamespacedName, bool) {
	a := obj.GetAnnotations()
	if name, ok := a[workv1alpha2.ClusterResourceBindingNameAnnotation]; ok && name != "" {
		return render.ClusterResourceBindingKind, types.NamespacedName{Name: name}, true
	}
	namespace, okNS := a[workv1alpha2.ResourceBindingNamespaceAnnotation]
	name, okName := a[workv1alpha2.ResourceBindingNameAnnotation]
	if okNS && okName && name != "" {
		return render.ResourceBindingKind, types.NamespacedName{Namespace: namespace, Name: name}, true
	}
	return "", types.NamespacedName{}, false
}

func indexWorkByBinding(obj client.Object) []string {
	k, key, ok := bindingOfWork(obj)
	if !ok {
		return nil
	}
	return []string{bindingIndexValue(k, key.Namespace, key.Name)}
}
