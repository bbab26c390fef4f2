// SPDX-License-Identifier: Apache-2.0

package cachecompact

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func deployment() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "nginx", "namespace": "default", "uid": "uid-1", "resourceVersion": "7",
			"labels":        map[string]any{"app": "nginx"},
			"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Update"}},
		},
		"spec": map[string]any{
			"replicas": int64(3),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "nginx", "image": "nginx", "env": []any{map[string]any{"name": "A", "value": strings.Repeat("x", 100)}}},
			}}},
			"ratio": 0.5,
		},
	}}
	return u
}

func TestATemplateComesBackWholeButItsManagedFields(t *testing.T) {
	cached, err := Transform(deployment())
	if err != nil {
		t.Fatal(err)
	}
	c := cached.(*unstructured.Unstructured)
	if _, has := c.Object["spec"]; has {
		t.Fatal("the cached template still holds its fields as maps")
	}
	if c.GetName() != "nginx" || c.GetNamespace() != "default" || c.GetUID() != "uid-1" || c.GetResourceVersion() != "7" ||
		c.GetKind() != "Deployment" || c.GetLabels()["app"] != "nginx" {
		t.Fatalf("the cache cannot find or serve the compacted template: %v", c.Object)
	}
	read := c.DeepCopy() // as the cache hands it out
	if err := Expand(read); err != nil {
		t.Fatal(err)
	}
	want := deployment()
	want.SetManagedFields(nil)
	if !reflect.DeepEqual(read.Object, want.Object) {
		t.Fatalf("expanded\n%v\nwant\n%v", read.Object, want.Object)
	}
	if replicas, ok, _ := unstructured.NestedInt64(read.Object, "spec", "replicas"); !ok || replicas != 3 {
		t.Fatal("replicas did not come back as an int64")
	}
}

func TestOtherObjectsOnlyLoseManagedFields(t *testing.T) {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "w", Labels: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}}}
	out, err := Transform(m)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*metav1.PartialObjectMetadata)
	if got.ManagedFields != nil || got.Labels["a"] != "b" || got.Name != "w" {
		t.Fatalf("got %+v", got.ObjectMeta)
	}
}

func TestExpandLeavesAWholeObjectAlone(t *testing.T) {
	u := deployment()
	if err := Expand(u); err != nil || !reflect.DeepEqual(u.Object, deployment().Object) {
		t.Fatalf("a live (not compacted) template was changed: %v", err)
	}
}
