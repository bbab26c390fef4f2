// SPDX-License-Identifier: Apache-2.0

package overridepolicy

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
)

var member1 = &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}

func opWith(name string, o policyv1alpha1.Overriders) policyv1alpha1.OverridePolicy {
	return policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: o}}},
	}
}

func podSpec() map[string]any {
	return map[string]any{"containers": []any{
		map[string]any{"name": "app", "image": "app:1.0", "command": []any{"/app"}},
	}}
}

// workload builds a template of kind whose pod spec sits at Karmada's default path.
func workload(apiVersion, kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace("default")
	u.SetName("w")
	switch kind {
	case "Pod":
		u.Object["spec"] = podSpec()
	case "CronJob":
		u.Object["spec"] = map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": podSpec()}}}}
	default:
		u.Object["spec"] = map[string]any{"template": map[string]any{"spec": podSpec()}}
	}
	return u
}

func TestDefaultContainerPaths(t *testing.T) {
	overriders := policyv1alpha1.Overriders{
		ImageOverrider:   []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Tag, Operator: "replace", Value: "2.0"}},
		CommandOverrider: []policyv1alpha1.CommandArgsOverrider{{ContainerName: "app", Operator: "add", Value: []string{"--x"}}},
		ArgsOverrider:    []policyv1alpha1.CommandArgsOverrider{{ContainerName: "app", Operator: "add", Value: []string{"run"}}},
	}
	policies := Policies{Namespaced: []policyv1alpha1.OverridePolicy{opWith("op", overriders)}}
	tests := []struct {
		apiVersion, kind string
		path             []string
		changed          bool
	}{
		{"v1", "Pod", []string{"spec", "containers"}, true},
		{"apps/v1", "ReplicaSet", []string{"spec", "template", "spec", "containers"}, true},
		{"apps/v1", "Deployment", []string{"spec", "template", "spec", "containers"}, true},
		{"apps/v1", "DaemonSet", []string{"spec", "template", "spec", "containers"}, true},
		{"apps/v1", "StatefulSet", []string{"spec", "template", "spec", "containers"}, true},
		{"batch/v1", "Job", []string{"spec", "template", "spec", "containers"}, true},
		{"batch/v1", "CronJob", []string{"spec", "jobTemplate", "spec", "template", "spec", "containers"}, false},
		{"example.io/v1", "Deployment", []string{"spec", "template", "spec", "containers"}, true}, // by kind alone, as Karmada
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			got, _, err := Apply(workload(tt.apiVersion, tt.kind), member1, policies)
			if err != nil {
				t.Fatal(err)
			}
			containers, _, _ := unstructured.NestedSlice(got.Object, tt.path...)
			want := map[string]any{"name": "app", "image": "app:1.0", "command": []any{"/app"}}
			if tt.changed {
				want = map[string]any{"name": "app", "image": "app:2.0", "command": []any{"/app", "--x"}, "args": []any{"run"}}
			}
			if diff := cmp.Diff([]any{want}, containers); diff != "" {
				t.Errorf("containers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyError(t *testing.T) {
	template := workload("apps/v1", "Deployment")
	bad := opWith("op-bad", policyv1alpha1.Overriders{
		Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/spec/missing/x", Operator: "remove"}},
	})
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member7"}}
	got, applied, err := Apply(template, cluster, Policies{Namespaced: []policyv1alpha1.OverridePolicy{bad}})
	if got != nil || applied.Cluster != nil || applied.Namespaced != nil {
		t.Errorf("on error Apply returned %v, %+v", got, applied)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *Error", err)
	}
	want := Error{
		PolicyKind: "OverridePolicy", PolicyNamespace: "default", PolicyName: "op-bad",
		Overrider: "overrideRules[0].plaintext[0]", Cluster: "member7",
	}
	e.Err = nil
	if diff := cmp.Diff(want, *e); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDeprecatedFormErrorLocation(t *testing.T) {
	cop := policyv1alpha1.ClusterOverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "cop"},
		Spec: policyv1alpha1.OverrideSpec{Overriders: policyv1alpha1.Overriders{
			LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: "add", Value: map[string]string{"a": "b"}}},
			FieldOverrider:  []policyv1alpha1.FieldOverrider{{FieldPath: "/spec", YAML: []policyv1alpha1.YAMLPatchOperation{{SubPath: "/a", Operator: "remove"}}}},
		}},
	}
	_, _, err := Apply(workload("apps/v1", "Deployment"), member1, Policies{Cluster: []policyv1alpha1.ClusterOverridePolicy{cop}})
	want := `ClusterOverridePolicy cop, overriders.fieldOverrider[0], cluster member1: field "/spec" is not a string`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestApplyCopies(t *testing.T) {
	template := workload("apps/v1", "Deployment")
	template.SetLabels(map[string]string{"app": "w"})
	before := template.DeepCopy()
	op := opWith("op", policyv1alpha1.Overriders{
		LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: "add", Value: map[string]string{"x": "y"}}},
	})
	policies := Policies{Namespaced: []policyv1alpha1.OverridePolicy{op}}
	got, applied, err := Apply(template, member1, policies)
	if err != nil {
		t.Fatal(err)
	}
	// Neither the result nor the record shares memory with the inputs.
	got.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "changed"
	applied.Namespaced[0].Overriders.LabelsOverrider[0].Value["x"] = "changed"
	if diff := cmp.Diff(before.Object, template.Object); diff != "" {
		t.Errorf("template changed (-before +after):\n%s", diff)
	}
	if v := policies.Namespaced[0].Spec.OverrideRules[0].Overriders.LabelsOverrider[0].Value["x"]; v != "y" {
		t.Errorf("policy changed through Applied: %q", v)
	}
}

func TestAnnotations(t *testing.T) {
	got, err := Applied{}.Annotations()
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty Applied: Annotations() = %v, %v; want an empty map", got, err)
	}
	rule := func(v string) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: "add", Value: map[string]string{"k": v}}}}
	}
	a := Applied{Namespaced: []AppliedPolicy{
		{PolicyName: "zeta", Overriders: rule("1")},
		{PolicyName: "alpha", Overriders: rule("2")},
		{PolicyName: "zeta", Overriders: rule("3")},
	}}
	got, err = a.Annotations()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		policyv1alpha1.AppliedOverridesAnnotation: `[{"policyName":"alpha","overriders":{"labelsOverrider":[{"operator":"add","value":{"k":"2"}}]}},` +
			`{"policyName":"zeta","overriders":{"labelsOverrider":[{"operator":"add","value":{"k":"1"}}]}},` +
			`{"policyName":"zeta","overriders":{"labelsOverrider":[{"operator":"add","value":{"k":"3"}}]}}]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if a.Namespaced[0].PolicyName != "zeta" {
		t.Error("Annotations reordered the Applied record")
	}
}
