// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/render"
)

// bindingAPI holds what differs between ResourceBindings and ClusterResourceBindings; the sync
// path itself is shared.
type bindingAPI struct {
	render.BindingKind
	finalizer string
	// legacyName is how Karmada v1.13 named this kind in its "Failed to transform" log
	// line, which we keep word for word: operators grep for it.
	legacyName string
	// eventComponent is the source.component of this kind's events: the name of Karmada's
	// controller for it, which event exporters and alert rules select on.
	eventComponent string
	newObject      func() client.Object
	newList        func() client.ObjectList
	keysOf         func(client.ObjectList) []types.NamespacedName
	specOf         func(client.Object) *workv1alpha2.ResourceBindingSpec
	conditionsOf   func(client.Object) *[]metav1.Condition
}

var resourceBinding = bindingAPI{
	BindingKind: render.ResourceBindingKind,
	finalizer:   workv1alpha2.BindingControllerFinalizer,
	legacyName:  "resourceBinding",
	// Karmada: pkg/controllers/binding ControllerName.
	eventComponent: "binding-controller",
	newObject:      func() client.Object { return &workv1alpha2.ResourceBinding{} },
	newList:        func() client.ObjectList { return &workv1alpha2.ResourceBindingList{} },
	keysOf: func(l client.ObjectList) []types.NamespacedName {
		var keys []types.NamespacedName
		for _, b := range l.(*workv1alpha2.ResourceBindingList).Items {
			keys = append(keys, client.ObjectKeyFromObject(&b))
		}
		return keys
	},
	specOf: func(o client.Object) *workv1alpha2.ResourceBindingSpec {
		return &o.(*workv1alpha2.ResourceBinding).Spec
	},
	conditionsOf: func(o client.Object) *[]metav1.Condition {
		return &o.(*workv1alpha2.ResourceBinding).Status.Conditions
	},
}

var clusterResourceBinding = bindingAPI{
	BindingKind: render.ClusterResourceBindingKind,
	finalizer:   workv1alpha2.ClusterResourceBindingControllerFinalizer,
	legacyName:  "clusterResourceBinding",
	// Karmada: pkg/controllers/binding ClusterResourceBindingControllerName.
	eventComponent: "cluster-resource-binding-controller",
	newObject:      func() client.Object { return &workv1alpha2.ClusterResourceBinding{} },
	newList:        func() client.ObjectList { return &workv1alpha2.ClusterResourceBindingList{} },
	keysOf: func(l client.ObjectList) []types.NamespacedName {
		var keys []types.NamespacedName
		for _, b := range l.(*workv1alpha2.ClusterResourceBindingList).Items {
			keys = append(keys, client.ObjectKeyFromObject(&b))
		}
		return keys
	},
	specOf: func(o client.Object) *workv1alpha2.ResourceBindingSpec {
		return &o.(*workv1alpha2.ClusterResourceBinding).Spec
	},
	conditionsOf: func(o client.Object) *[]metav1.Condition {
		return &o.(*workv1alpha2.ClusterResourceBinding).Status.Conditions
	},
}

func bindingAPIOf(k render.BindingKind) bindingAPI {
	if k == render.ClusterResourceBindingKind {
		return clusterResourceBinding
	}
	return resourceBinding
}

// named names the binding of this kind at key, as String does; key need not exist.
func (k bindingAPI) named(key types.NamespacedName) string {
	return fmt.Sprintf("%s(%s)", k.BindingKind, objectKey(key))
}

// objectKey is ns/name, or name alone for a cluster-scoped object (NamespacedName.String
// would print "/name").
func objectKey(key types.NamespacedName) string {
	if key.Namespace == "" {
		return key.Name
	}
	return key.String()
}
