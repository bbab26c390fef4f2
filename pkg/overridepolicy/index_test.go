package overridepolicy

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
)

func TestTemplateIndexValues(t *testing.T) {
	got := TemplateIndexValues(TemplateRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"})
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
	got = TemplateIndexValues(TemplateRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "admin"})
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
		if diff := cmp.Diff(tt.want, IndexKeys(tt.policyNamespace, tt.selectors)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestSelectsTemplate(t *testing.T) {
	nginx := TemplateRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"}
	role := TemplateRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "admin"}
	labels := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
	deploy := func(namespace, name string, ls *metav1.LabelSelector) policyv1alpha1.ResourceSelector {
		return policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: namespace, Name: name, LabelSelector: ls}
	}
	tests := []struct {
		name            string
		policyNamespace string
		selectors       []policyv1alpha1.ResourceSelector
		ref             TemplateRef
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
			got := SelectsTemplate(tt.policyNamespace, tt.selectors, tt.ref)
			if got != tt.want {
				t.Errorf("SelectsTemplate() = %v, want %v", got, tt.want)
			}
			// The index finds exactly the same bindings.
			values := TemplateIndexValues(tt.ref)
			shared := slices.ContainsFunc(IndexKeys(tt.policyNamespace, tt.selectors), func(k string) bool { return slices.Contains(values, k) })
			if shared != got {
				t.Errorf("IndexKeys and TemplateIndexValues share a key: %v, but SelectsTemplate() = %v", shared, got)
			}
		})
	}
}
