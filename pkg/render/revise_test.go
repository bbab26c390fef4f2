// SPDX-License-Identifier: Apache-2.0

package render

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
)

func cloneSet(replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
		"metadata": map[string]any{"name": "web", "namespace": "default", "uid": "u1"},
		"spec":     map[string]any{"replicas": replicas},
	}}
}

func workReplicas(t *testing.T, b Binding, template *unstructured.Unstructured, target Target, o Overrides) int64 {
	t.Helper()
	w, err := Work(b, template, target, o)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj); err != nil {
		t.Fatal(err)
	}
	v, _, _ := unstructured.NestedFieldNoCopy(obj, "spec", "replicas")
	return int64(v.(float64))
}

// A Divided CloneSet gets each cluster's share from the bundled Kruise customization,
// where before every cluster got the template's full count.
func TestACloneSetGetsEachClustersShare(t *testing.T) {
	spec := &workv1alpha2.ResourceBindingSpec{Replicas: 6, Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 4}}}
	b := Binding{Kind: ResourceBindingKind, Namespace: "default", Name: "web-cloneset", Spec: spec}
	o := Overrides{Interpreter: interpreter.New(interpreter.Options{}).For(context.Background())}
	for _, target := range Targets(spec) {
		if got := workReplicas(t, b, cloneSet(6), target, o); got != int64(target.Replicas) {
			t.Errorf("cluster %s: replicas %d, want %d", target.Cluster, got, target.Replicas)
		}
	}
}

type reviserFunc func(*unstructured.Unstructured, int64, string) (*unstructured.Unstructured, bool, error)

func (f reviserFunc) ReviseReplica(obj *unstructured.Unstructured, n int64, cluster string) (*unstructured.Unstructured, bool, error) {
	return f(obj, n, cluster)
}

func TestTheInterpreterIsAskedOnlyForWorkloads(t *testing.T) {
	calls := 0
	r := reviserFunc(func(obj *unstructured.Unstructured, n int64, _ string) (*unstructured.Unstructured, bool, error) {
		calls++
		return obj, false, nil
	})
	target := Target{Cluster: "member1", Replicas: 2}
	for _, spec := range []*workv1alpha2.ResourceBindingSpec{
		{Replicas: 3},
		{ReplicaRequirements: &workv1alpha2.ReplicaRequirements{}},
		{Components: []workv1alpha2.Component{{Name: "leader"}}},
	} {
		if _, err := Work(Binding{Kind: ResourceBindingKind, Name: "b", Spec: spec}, cloneSet(3), target, Overrides{Interpreter: r}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Work(Binding{Kind: ResourceBindingKind, Name: "b", Spec: &workv1alpha2.ResourceBindingSpec{}}, cloneSet(3), target, Overrides{Interpreter: r}); err != nil {
		t.Fatal(err)
	}
	if calls != 3 {
		t.Errorf("interpreter asked %d times, want 3 (not for the binding that is no workload)", calls)
	}
}

func TestAnInterpreterErrorFailsTheRender(t *testing.T) {
	r := reviserFunc(func(*unstructured.Unstructured, int64, string) (*unstructured.Unstructured, bool, error) {
		return nil, false, errors.New("script broke")
	})
	_, err := Work(Binding{Kind: ResourceBindingKind, Name: "b", Spec: &workv1alpha2.ResourceBindingSpec{Replicas: 3}}, cloneSet(3),
		Target{Cluster: "member1", Replicas: 1}, Overrides{Interpreter: r})
	if err == nil || !strings.Contains(err.Error(), "script broke") {
		t.Fatalf("error %v", err)
	}
}

// Render changes the revised workload further (pruned, labelled, annotated); a hook's
// result is its own, so the template every cluster is rendered from stays as it was.
func TestAHooksRevisionLeavesTheTemplateAsItWas(t *testing.T) {
	template := cloneSet(6)
	template.SetResourceVersion("7")
	template.SetLabels(map[string]string{"app": "web"})
	template.SetAnnotations(map[string]string{"team": "a"})
	template.Object["status"] = map[string]any{"replicas": int64(6)}
	before := template.DeepCopy()
	spec := &workv1alpha2.ResourceBindingSpec{Replicas: 6, Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 4}}}
	b := Binding{Kind: ResourceBindingKind, Namespace: "default", Name: "web-cloneset", PermanentID: "p1", Spec: spec}
	o := Overrides{Interpreter: interpreter.New(interpreter.Options{}).For(context.Background())}
	for _, target := range Targets(spec) {
		w, err := Work(b, template, target, o)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj); err != nil {
			t.Fatal(err)
		}
		if _, ok := obj["status"]; ok {
			t.Errorf("cluster %s: the Work's manifest keeps the status", target.Cluster)
		}
		if got := obj["metadata"].(map[string]any)["labels"].(map[string]any)["app"]; got != "web" {
			t.Errorf("cluster %s: label app = %v, want web", target.Cluster, got)
		}
	}
	if diff := cmp.Diff(before.Object, template.Object); diff != "" {
		t.Errorf("the template changed (-before +after):\n%s", diff)
	}
}
