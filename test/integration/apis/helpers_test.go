// SPDX-License-Identifier: Apache-2.0

package apis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
)

func fixturePath(name string) string {
	return filepath.Join(envtestutil.RepoRoot(), "test", "testdata", "fixtures", name)
}

func readFile(path string) []byte {
	data, err := os.ReadFile(path)
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	return data
}

// loadTyped decodes a fixture strictly into obj: a field the Go types do not model fails.
func loadTyped(name string, obj client.Object) {
	ExpectWithOffset(1, yaml.UnmarshalStrict(readFile(fixturePath(name)), obj)).
		To(Succeed(), "fixture %s must only hold fields modelled by the Go types", name)
}

// loadMap decodes a fixture into plain JSON values (map[string]any, []any, float64, ...).
func loadMap(name string) map[string]any {
	var m map[string]any
	ExpectWithOffset(1, yaml.Unmarshal(readFile(fixturePath(name)), &m)).To(Succeed())
	return m
}

// loadUnstructured decodes a fixture into an Unstructured object.
func loadUnstructured(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	ExpectWithOffset(1, yaml.Unmarshal(readFile(fixturePath(name)), &u.Object)).To(Succeed())
	return u
}

// loadCRD decodes a CustomResourceDefinition file.
func loadCRD(path string) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	ExpectWithOffset(1, yaml.UnmarshalStrict(readFile(path), crd)).To(Succeed(), path)
	return crd
}

// plainJSON converts any JSON-marshallable value into plain JSON values, so that values
// decoded differently (int64 vs float64, typed vs untyped maps) compare equal.
func plainJSON(v any) any {
	data, err := json.Marshal(v)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	var out any
	ExpectWithOffset(1, json.Unmarshal(data, &out)).To(Succeed())
	return out
}

// subsetDiffs reports where want is not contained in got: every key of a wanted object
// must be present with a contained value, lists must have the same length and contained
// elements, and scalars must be equal. Keys got has in addition are ignored.
func subsetDiffs(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %#v", path, got)}
		}
		var diffs []string
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing", path, k))
				continue
			}
			diffs = append(diffs, subsetDiffs(w[k], gv, path+"."+k)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want a list of %d items, got %#v", path, len(w), got)}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, subsetDiffs(w[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return diffs
	default:
		if !reflect.DeepEqual(want, got) {
			return []string{fmt.Sprintf("%s: want %#v, got %#v", path, want, got)}
		}
		return nil
	}
}

func jsonEqual(a, b []byte) bool {
	isNull := func(r []byte) bool { r = bytes.TrimSpace(r); return len(r) == 0 || string(r) == "null" }
	if isNull(a) || isNull(b) {
		return isNull(a) && isNull(b)
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(va, vb)
}

// cmpOptions compares typed API objects semantically: quantities by value, times by
// instant, raw JSON by content.
var cmpOptions = []cmp.Option{
	cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }),
	cmp.Comparer(func(a, b metav1.Time) bool { return a.Time.Equal(b.Time) }),
	cmp.Comparer(func(a, b runtime.RawExtension) bool { return jsonEqual(a.Raw, b.Raw) }),
	cmp.Comparer(func(a, b apiextensionsv1.JSON) bool { return jsonEqual(a.Raw, b.Raw) }),
}

// clearServerFields clears the metadata the API server sets and the TypeMeta, so that a
// fixture and its read-back copy can be compared.
func clearServerFields(obj client.Object) {
	obj.SetUID("")
	obj.SetResourceVersion("")
	obj.SetGeneration(0)
	obj.SetCreationTimestamp(metav1.Time{})
	obj.SetManagedFields(nil)
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
}

// copyStatus sets dst's status to src's (both typed objects of the same kind).
func copyStatus(dst, src client.Object) {
	srcMap, ok := plainJSON(src).(map[string]any)
	ExpectWithOffset(1, ok).To(BeTrue())
	dstMap, ok := plainJSON(dst).(map[string]any)
	ExpectWithOffset(1, ok).To(BeTrue())
	dstMap["status"] = srcMap["status"]
	data, err := json.Marshal(dstMap)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	v := reflect.ValueOf(dst).Elem()
	v.Set(reflect.Zero(v.Type()))
	ExpectWithOffset(1, json.Unmarshal(data, dst)).To(Succeed())
}

func ensureNamespace(ctx context.Context, c client.Client, name string) {
	if name == "" {
		return
	}
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
	}
}

// schemaPaths collects the property paths of a schema: ".a.b" for properties, "[]" for
// list items and "{}" for map values.
func schemaPaths(s apiextensionsv1.JSONSchemaProps, path string, out map[string]bool) {
	out[path] = true
	for name, p := range s.Properties {
		schemaPaths(p, path+"."+name, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		schemaPaths(*s.Items.Schema, path+"[]", out)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		schemaPaths(*s.AdditionalProperties.Schema, path+"{}", out)
	}
}

// dataPaths collects the schema paths that data fills (see schemaPaths).
func dataPaths(v any, s apiextensionsv1.JSONSchemaProps, path string, out map[string]bool) {
	out[path] = true
	switch t := v.(type) {
	case map[string]any:
		for k, vv := range t {
			if p, ok := s.Properties[k]; ok {
				dataPaths(vv, p, path+"."+k, out)
			} else if len(s.Properties) == 0 && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				dataPaths(vv, *s.AdditionalProperties.Schema, path+"{}", out)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for _, vv := range t {
				dataPaths(vv, *s.Items.Schema, path+"[]", out)
			}
		}
	}
}

// servedSchema returns the schema of the named version of crd.
func servedSchema(crd *apiextensionsv1.CustomResourceDefinition, version string) apiextensionsv1.JSONSchemaProps {
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			ExpectWithOffset(1, v.Schema).NotTo(BeNil())
			ExpectWithOffset(1, v.Schema.OpenAPIV3Schema).NotTo(BeNil())
			return *v.Schema.OpenAPIV3Schema
		}
	}
	Fail(fmt.Sprintf("CRD %s has no version %s", crd.Name, version), 1)
	return apiextensionsv1.JSONSchemaProps{}
}

func ptrTrue() *bool { t := true; return &t }

func yamlUnmarshalFile(path string, out any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(data, out)
}

// nested returns the value at fields of an unstructured object, failing when it is absent.
func nested(obj map[string]any, fields ...string) any {
	v, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, found).To(BeTrue(), "field %v not found", fields)
	return v
}
