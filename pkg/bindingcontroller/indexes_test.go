// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"slices"
	"testing"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/overridepolicy"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestTemplateIndexValues(t *testing.T) {
	got := templateIndexValues(templateRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"})
	want := []string{
		"apps/v1/Deployment/default/nginx",
		"apps/v1/Deployment/default/*",
		"apps/v1/Deployment/*/nginx",
		"apps/v1/Deployment/*/*",
		"*/*/default/*",
		"*/*/*/*",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("namespaced (-want +got):\n%s", diff)
	}
	got = templateIndexValues(templateRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "admin"})
	want = []string{
		"rbac.authorization.k8s.io/v1/ClusterRole//admin",
		"rbac.authorization.k8s.io/v1/ClusterRole//*",
		"rbac.authorization.k8s.io/v1/ClusterRole/*/admin",
		"rbac.authorization.k8s.io/v1/ClusterRole/*/*",
		"*/*/*/*",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cluster-scoped (-want +got):\n%s", diff)
	}
}

func TestIndexKeys(t *testing.T) {
	labels := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}
	selectors := []policyv1alpha1.ResourceSelector{
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"},
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx", LabelSelector: labels}, // duplicate key
		{APIVersion: "apps/v1", Kind: "StatefulSet", LabelSelector: labels},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default"},
		{APIVersion: "v1", Kind: "Secret", Namespace: "kube-system", Name: "token"},
	}
	tests := []struct {
		name            string
		policyNamespace string
		selectors       []policyv1alpha1.ResourceSelector
		want            []string
	}{
		{"OverridePolicy", "default", selectors, []string{
			"apps/v1/Deployment/default/nginx",
			"apps/v1/StatefulSet/default/*",
			"v1/ConfigMap/default/*",
			// the Secret selector names another namespace: it can select nothing
		}},
		{"ClusterOverridePolicy", "", selectors, []string{
			"apps/v1/Deployment/*/nginx",
			"apps/v1/StatefulSet/*/*",
			"v1/ConfigMap/default/*",
			"v1/Secret/kube-system/token",
		}},
		{"OverridePolicy without selectors", "default", nil, []string{"*/*/default/*"}},
		{"ClusterOverridePolicy without selectors", "", nil, []string{"*/*/*/*"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, policyIndexKeys(tt.policyNamespace, tt.selectors)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestSelectsTemplate(t *testing.T) {
	nginx := templateRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"}
	role := templateRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "admin"}
	labels := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
	deploy := func(namespace, name string, ls *metav1.LabelSelector) policyv1alpha1.ResourceSelector {
		return policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: namespace, Name: name, LabelSelector: ls}
	}
	tests := []struct {
		name            string
		policyNamespace string
		selectors       []policyv1alpha1.ResourceSelector
		ref             templateRef
		want            bool
	}{
		{"OP without selectors, own namespace", "default", nil, nginx, true},
		{"OP without selectors, other namespace", "prod", nil, nginx, false},
		{"OP never selects cluster-scoped", "default", nil, role, false},
		{"COP without selectors", "", nil, role, true},
		{"by name", "default", []policyv1alpha1.ResourceSelector{deploy("", "nginx", nil)}, nginx, true},
		{"by other name", "default", []policyv1alpha1.ResourceSelector{deploy("", "web", nil)}, nginx, false},
		{"label selector counts as maybe", "default", []policyv1alpha1.ResourceSelector{deploy("", "", labels)}, nginx, true},
		{"OP selector naming another namespace", "default", []policyv1alpha1.ResourceSelector{deploy("prod", "", nil)}, nginx, false},
		{"COP selector in any namespace", "", []policyv1alpha1.ResourceSelector{deploy("", "nginx", nil)}, nginx, true},
		{"COP selector in another namespace", "", []policyv1alpha1.ResourceSelector{deploy("prod", "", nil)}, nginx, false},
		{"other kind", "", []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "StatefulSet"}}, nginx, false},
		{"COP selector for cluster-scoped kind", "", []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}}, role, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := selectsTemplate(tt.policyNamespace, tt.selectors, tt.ref)
			if got != tt.want {
				t.Errorf("selectsTemplate() = %v, want %v", got, tt.want)
			}
			// The index finds exactly the same bindings.
			values := templateIndexValues(tt.ref)
			shared := slices.ContainsFunc(policyIndexKeys(tt.policyNamespace, tt.selectors), func(k string) bool { return slices.Contains(values, k) })
			if shared != got {
				t.Errorf("policyIndexKeys and templateIndexValues share a key: %v, but selectsTemplate() = %v", shared, got)
			}
		})
	}
}

// overridepolicy.Matches and selectsTemplate agree: selectsTemplate is a superset that ignores labels.
func TestSelectsTemplateCoversMatches(t *testing.T) {
	template := &unstructured.Unstructured{Object: map[string]any{}}
	template.SetAPIVersion("apps/v1")
	template.SetKind("Deployment")
	template.SetNamespace("default")
	template.SetName("w")
	template.SetLabels(map[string]string{"app": "w"})
	ref := templateRefOfTemplate(template)
	for _, selectors := range [][]policyv1alpha1.ResourceSelector{
		nil,
		{{APIVersion: "apps/v1", Kind: "Deployment"}},
		{{APIVersion: "apps/v1", Kind: "Deployment", Name: "w"}},
		{{APIVersion: "apps/v1", Kind: "Deployment", Name: "other"}},
		{{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w"}}}},
		{{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}},
		{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default"}},
		{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "prod"}},
	} {
		for _, ns := range []string{"", "default"} {
			if overridepolicy.Matches(selectors, template) && !selectsTemplate(ns, selectors, ref) {
				t.Errorf("selectors %+v (policy namespace %q) match the template but selectsTemplate is false", selectors, ns)
			}
		}
	}
}
