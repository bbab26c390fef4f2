// SPDX-License-Identifier: Apache-2.0

// Package cachecompact shrinks what the informer cache holds. Resource templates are of
// any kind and so are cached as unstructured objects, whose nested maps take about ten
// times the memory of the object's JSON; with thousands of templates that is most of the
// controller's heap. The cache keeps each template as its JSON instead, with just enough
// metadata to be found, and a read expands it again. Managed fields, which nothing here
// reads, are dropped from every cached object.
package cachecompact

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// jsonKey holds a compacted object's JSON. Kubernetes objects have no such top-level field.
const jsonKey = "binding-controller.karmada.io/compacted-json"

// Transform is a cache transform (cache.Options.DefaultTransform): unstructured objects
// are compacted, others only lose their managed fields.
func Transform(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return compact(u)
	}
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

func compact(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if _, done := u.Object[jsonKey]; done {
		return u, nil
	}
	u.SetManagedFields(nil)
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("compacting %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	c := &unstructured.Unstructured{Object: map[string]any{jsonKey: string(raw)}}
	// What the cache itself reads: its key, and the kind it serves.
	c.SetAPIVersion(u.GetAPIVersion())
	c.SetKind(u.GetKind())
	c.SetNamespace(u.GetNamespace())
	c.SetName(u.GetName())
	c.SetUID(u.GetUID())
	c.SetResourceVersion(u.GetResourceVersion())
	c.SetLabels(u.GetLabels())
	return c, nil
}

// Expand turns an object read from the cache back into the whole object; an object that
// was not compacted is left as it is.
func Expand(u *unstructured.Unstructured) error {
	raw, ok := u.Object[jsonKey].(string)
	if !ok {
		return nil
	}
	// Decoded as the API client decodes: whole numbers as int64, not float64.
	whole := &unstructured.Unstructured{}
	if err := whole.UnmarshalJSON([]byte(raw)); err != nil {
		return fmt.Errorf("expanding cached %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	u.Object = whole.Object
	return nil
}
