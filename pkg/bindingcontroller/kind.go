package bindingcontroller

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/render"
)

// kind holds what differs between ResourceBindings and ClusterResourceBindings; the sync
// path itself is shared.
type kind struct {
	render.BindingKind
	finalizer string
	// logName is how Karmada's messages name this kind, e.g. resourceBinding(ns/name).
	logName      string
	newObject    func() client.Object
	newList      func() client.ObjectList
	keysOf       func(client.ObjectList) []types.NamespacedName
	specOf       func(client.Object) *workv1alpha2.ResourceBindingSpec
	conditionsOf func(client.Object) *[]metav1.Condition
}

var resourceBinding = kind{
	BindingKind: render.ResourceBindingKind,
	finalizer:   workv1alpha2.BindingControllerFinalizer,
	logName:     "resourceBinding",
	newObject:   func() client.Object { return &workv1alpha2.ResourceBinding{} },
	newList:     func() client.ObjectList { return &workv1alpha2.ResourceBindingList{} },
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

var clusterResourceBinding = kind{
	BindingKind: render.ClusterResourceBindingKind,
	finalizer:   workv1alpha2.ClusterResourceBindingControllerFinalizer,
	logName:     "clusterResourceBinding",
	newObject:   func() client.Object { return &workv1alpha2.ClusterResourceBinding{} },
	newList:     func() client.ObjectList { return &workv1alpha2.ClusterResourceBindingList{} },
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

func kindOf(k render.BindingKind) kind {
	if k == render.ClusterResourceBindingKind {
		return clusterResourceBinding
	}
	return resourceBinding
}

// scope is what one reconcile of one binding gathers once and its phases share.
type scope struct {
	kind
	obj     client.Object
	binding render.Binding
	started time.Time
}

func newScope(k kind, obj client.Object) *scope {
	s := &scope{kind: k, started: time.Now()}
	s.rebase(obj)
	return s
}

// rebase makes obj, a newer copy of the same binding, the one the phases read and patch.
func (s *scope) rebase(obj client.Object) {
	s.obj = obj
	s.binding = render.Binding{
		Kind:        s.BindingKind,
		Namespace:   obj.GetNamespace(),
		Name:        obj.GetName(),
		PermanentID: obj.GetLabels()[s.PermanentIDLabel()],
		Spec:        s.specOf(obj),
	}
}

// String names the binding the way Karmada's log lines do: resourceBinding(ns/name).
func (s *scope) String() string {
	return fmt.Sprintf("%s(%s)", s.logName, client.ObjectKeyFromObject(s.obj))
}

// indexKey is the value under which this binding's Works are indexed.
func (s *scope) indexKey() string {
	return bindingIndexValue(s.BindingKind, s.obj.GetNamespace(), s.obj.GetName())
}
