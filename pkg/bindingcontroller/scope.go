// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/pkg/render"
)

// scope is what one reconcile of one binding gathers once and its phases share.
type scope struct {
	bindingAPI
	obj     client.Object
	binding render.Binding
	started time.Time
	// rendered holds the annotations of each target's rendered Work (render.Targets'
	// order; nil where rendering failed), which record the override policies applied.
	rendered []map[string]string
}

func newScope(k bindingAPI, obj client.Object) *scope {
	s := &scope{bindingAPI: k, started: time.Now()}
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

// String names the binding the way current Karmada's events do:
// ResourceBinding(ns/name), ClusterResourceBinding(name).
func (s *scope) String() string {
	return s.named(client.ObjectKeyFromObject(s.obj))
}

// legacyName names the binding as Karmada v1.13's log line did: resourceBinding(ns/name),
// clusterResourceBinding(name).
func (s *scope) legacyName() string {
	return fmt.Sprintf("%s(%s)", s.bindingAPI.legacyName, objectKey(client.ObjectKeyFromObject(s.obj)))
}

// indexKey is the value under which this binding's Works are indexed.
func (s *scope) indexKey() string {
	return bindingIndexValue(s.BindingKind, s.obj.GetNamespace(), s.obj.GetName())
}
