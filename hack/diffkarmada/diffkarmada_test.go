// SPDX-License-Identifier: Apache-2.0

package main

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The same seed and index give the same case, so a difference found in a run can be
// replayed alone (--first, --bindings 1).
func TestGenerateIsDeterministic(t *testing.T) {
	for i := range 200 {
		a := Generate(7, i, Customizations(7, 0))
		b := Generate(7, i, Customizations(7, 0))
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("case %d differs between two generations", i)
		}
	}
	if reflect.DeepEqual(Generate(7, 3, nil).Template, Generate(8, 3, nil).Template) &&
		reflect.DeepEqual(Generate(7, 3, nil).Binding, Generate(8, 3, nil).Binding) {
		t.Error("seeds 7 and 8 gave the same case 3")
	}
}

// Every case names its own template, keeps its namespaced objects in its own namespace,
// and reaches no other case's template with its policies.
func TestGeneratedCasesAreSelfContained(t *testing.T) {
	kindsSeen := map[string]bool{}
	customizations := Customizations(3, 0)
	for i := range 500 {
		c := Generate(3, i, customizations)
		kindsSeen[c.Template.GetAPIVersion()+"/"+c.Template.GetKind()] = true
		ref, _, _ := unstructured.NestedStringMap(c.Binding.Object, "spec", "resource")
		if ref["name"] != c.Template.GetName() || ref["kind"] != c.Template.GetKind() || ref["apiVersion"] != c.Template.GetAPIVersion() {
			t.Fatalf("case %d: binding names %v, template is %s %s", i, ref, c.Template.GetKind(), c.Template.GetName())
		}
		for _, o := range c.Objects() {
			if o.GetNamespace() != "" && o.GetNamespace() != c.Namespace {
				t.Errorf("case %d: %s %s is in namespace %s, not the case's %s", i, o.GetKind(), o.GetName(), o.GetNamespace(), c.Namespace)
			}
		}
		for _, p := range c.Policies {
			selectors, _, _ := unstructured.NestedSlice(p.Object, "spec", "resourceSelectors")
			for _, s := range selectors {
				name, _ := s.(map[string]any)["name"].(string)
				if name != c.Template.GetName() && name != c.Template.GetName()+"-other" {
					t.Errorf("case %d: policy %s selects %q", i, p.GetName(), name)
				}
			}
		}
		clusters, _, _ := unstructured.NestedSlice(c.Binding.Object, "spec", "clusters")
		if len(clusters) == 0 {
			t.Errorf("case %d: no target cluster", i)
		}
	}
	if len(kindsSeen) != len(kinds) {
		t.Errorf("500 cases drew %d of the %d kinds", len(kindsSeen), len(kinds))
	}
}

func TestCompareFindsEachKindOfDifference(t *testing.T) {
	work := func(image string) map[string]any {
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{"resourcebinding.karmada.io/name": "b"}},
			"spec": map[string]any{"workload": map[string]any{"manifests": []any{map[string]any{"image": image}}}}}
	}
	karmada := Works{"karmada-es-member1/w": work("a"), "karmada-es-member2/w": work("a"), "karmada-es-member3/w": work("a")}
	ours := Works{"karmada-es-member1/w": work("a"), "karmada-es-member2/w": work("b"), "karmada-es-member4/w": work("a")}
	diffs := compare(karmada, ours, nil, func(map[string]any) int { return 1 })
	var got []string
	for _, d := range diffs {
		got = append(got, d.Cluster+" "+d.Signature("Pod"))
	}
	want := []string{
		"member2 Pod: fields differ /spec/workload/manifests/*/image",
		"member3 Pod: only Karmada wrote it ",
		"member4 Pod: only ours wrote it ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("differences\n%q\nwant\n%q", got, want)
	}
	if v := valueAt(ours["karmada-es-member2/w"], "/spec/workload/manifests/0/image"); v != "b" {
		t.Errorf("valueAt = %v, want b", v)
	}
}

// A restamped case is the same case under fresh names: its binding still names its
// template, and its policies still select it.
func TestRestampKeepsTheCaseWhole(t *testing.T) {
	for i := range 300 {
		c := restamp(Generate(5, i, nil), 9_000_000+i)
		ref, _, _ := unstructured.NestedStringMap(c.Binding.Object, "spec", "resource")
		if ref["name"] != c.Template.GetName() || ref["namespace"] != c.Template.GetNamespace() {
			t.Fatalf("case %d: binding names %v, template is %s/%s", i, ref, c.Template.GetNamespace(), c.Template.GetName())
		}
		for _, o := range c.Objects() {
			if o.GetNamespace() != "" && o.GetNamespace() != c.Namespace {
				t.Fatalf("case %d: %s %s left in %s", i, o.GetKind(), o.GetName(), o.GetNamespace())
			}
		}
		for _, p := range c.Policies {
			selectors, _, _ := unstructured.NestedSlice(p.Object, "spec", "resourceSelectors")
			for _, s := range selectors {
				if name := s.(map[string]any)["name"].(string); name != c.Template.GetName() && name != c.Template.GetName()+"-other" {
					t.Fatalf("case %d: policy selects %q, template is %q", i, name, c.Template.GetName())
				}
			}
		}
	}
}

// Every reduction is smaller than its case by one element, and leaves the case alone.
func TestReductionsLeaveTheCaseAlone(t *testing.T) {
	for i := range 100 {
		c := Generate(11, i, nil)
		before := copyCase(c)
		for _, r := range reductions(c) {
			if reflect.DeepEqual(r, c) {
				t.Fatalf("case %d: a reduction changed nothing", i)
			}
		}
		if !reflect.DeepEqual(before, c) {
			t.Fatalf("case %d: reductions modified the case", i)
		}
	}
}

// A Work only Karmada wrote because an image overrider made an invalid reference is the
// README's deliberate difference, whatever the kind.
func TestInvalidImageIsAKnownDifference(t *testing.T) {
	work := func(image string) map[string]any {
		return map[string]any{"spec": map[string]any{"workload": map[string]any{"manifests": []any{map[string]any{
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": image}}}}}}}}}}
	}
	named := func(name string, w map[string]any) map[string]any {
		w["metadata"] = map[string]any{"annotations": map[string]any{"resourcebinding.karmada.io/name": name}}
		return w
	}
	karmada := Works{
		"karmada-es-member1/a": named("a", work(":1.27")),
		"karmada-es-member1/b": named("b", work("nginx:1.27")),
		"karmada-es-member1/c": named("c", work("nginx:1.27")),
	}
	oursSays := map[string]string{
		"b": "0/1 clusters synced; member1: failed for another reason",
		"c": "0/1 clusters synced; member1: rendering work: OverridePolicy ns/p, overrideRules[0].imageOverrider[1], cluster member1: overriding the tag of image \"nginx:1.27\": \"-mirror\" is neither a valid tag nor a valid digest",
	}
	diffs := compare(karmada, Works{}, oursSays, func(map[string]any) int { return 0 })
	if len(diffs) != 3 || diffs[0].Known != invalidImage || diffs[1].Known != "" || diffs[2].Known != invalidImage {
		t.Fatalf("differences %+v: want a (broken reference) and c (refused Tag value) known, b not", diffs)
	}
	if diffs[0].Signature("Job") != diffs[0].Signature("Pod") {
		t.Error("a known difference's class depends on the kind")
	}
}

// A batch's webhook configuration is part of exactly the cases whose kind its rules reach.
func TestWebhooksReachTheirKindsOnly(t *testing.T) {
	configs := 0
	for b := range 20 {
		w := Webhooks(2, b, "https://127.0.0.1:1", []byte("ca"))
		if w == nil {
			continue
		}
		configs++
		for i := range 100 {
			c := Generate(2, b*100+i, nil, w)
			if got, want := c.Webhooks != nil, reaches(w, c.Template.GetAPIVersion(), c.Template.GetKind()); got != want {
				t.Fatalf("batch %d case %d (%s): has webhooks %v, rules reach it %v", b, i, c.Template.GetKind(), got, want)
			}
		}
	}
	if configs == 0 || configs == 20 {
		t.Errorf("%d of 20 batches have webhooks: want some, not all", configs)
	}
}
