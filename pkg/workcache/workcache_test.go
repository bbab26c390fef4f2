// SPDX-License-Identifier: Apache-2.0

package workcache

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

func metadata(kind string) runtime.Object {
	gvk := workv1alpha1.GroupVersion.WithKind(kind)
	if kind == "WorkList" {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(gvk)
		return l
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// Every form of a Work, one object or a list, typed or metadata only, and every template
// (read as unstructured) goes to the split-off cache; everything else to the manager's,
// which is the only one waited for.
func TestWorksAreServedApart(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := workv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	main, split := &informertest.FakeInformers{}, &informertest.FakeInformers{}
	c := &Cache{Cache: main, split: split, kind: schema.GroupKind{Group: workv1alpha1.GroupVersion.Group, Kind: "Work"}, scheme: scheme}
	for _, tc := range []struct {
		name string
		obj  runtime.Object
		want any
	}{
		{"a Work's metadata", metadata("Work"), split},
		{"a list of Works' metadata", metadata("WorkList"), split},
		{"a typed Work", &workv1alpha1.Work{}, split},
		{"a typed list of Works", &workv1alpha1.WorkList{}, split},
		{"a template read as unstructured", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}, split},
		{"a list of templates", &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList"}}, split},
		{"a Deployment", &appsv1.Deployment{}, main},
		{"a list of Deployments", &appsv1.DeploymentList{}, main},
	} {
		if got := c.cacheFor(tc.obj); got != tc.want {
			t.Errorf("%s: served by the wrong cache", tc.name)
		}
	}
}
