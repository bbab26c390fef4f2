// SPDX-License-Identifier: Apache-2.0

package overridepolicy

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
)

func deployment(namespace, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

func TestMatches(t *testing.T) {
	nginx := deployment("default", "nginx", map[string]string{"app": "nginx", "tier": "web"})
	sel := func(mutate func(*policyv1alpha1.ResourceSelector)) policyv1alpha1.ResourceSelector {
		rs := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
		if mutate != nil {
			mutate(&rs)
		}
		return rs
	}
	tests := []struct {
		name      string
		selectors []policyv1alpha1.ResourceSelector
		want      bool
	}{
		{"no selectors match everything", nil, true},
		{"kind only", []policyv1alpha1.ResourceSelector{sel(nil)}, true},
		{"other apiVersion", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) { rs.APIVersion = "apps/v1beta2" })}, false},
		{"other kind", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Kind = "StatefulSet" })}, false},
		{"kind is case sensitive", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Kind = "deployment" })}, false},
		{"same namespace", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Namespace = "default" })}, true},
		{"other namespace", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Namespace = "prod" })}, false},
		{"name", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Name = "nginx" })}, true},
		{"other name", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Name = "web" })}, false},
		{"name wins over a non-matching label selector", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) {
			rs.Name = "nginx"
			rs.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
		})}, true},
		{"other name is not rescued by a matching label selector", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) {
			rs.Name = "web"
			rs.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}
		})}, false},
		{"matching labels", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) {
			rs.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}
		})}, true},
		{"matching expressions", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) {
			rs.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}},
				{Key: "canary", Operator: metav1.LabelSelectorOpDoesNotExist},
			}}
		})}, true},
		{"non-matching labels", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) {
			rs.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
		})}, false},
		{"empty label selector matches all", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) {
			rs.LabelSelector = &metav1.LabelSelector{}
		})}, true},
		{"invalid label selector matches nothing", []policyv1alpha1.ResourceSelector{sel(func(rs *policyv1alpha1.ResourceSelector) {
			rs.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
		})}, false},
		{"one of several", []policyv1alpha1.ResourceSelector{
			sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Kind = "Service" }),
			sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Name = "nginx" }),
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Matches(tt.selectors, nginx); got != tt.want {
				t.Errorf("Matches() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSelectorsPriority(t *testing.T) {
	nginx := deployment("default", "nginx", map[string]string{"app": "nginx"})
	kind := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	byLabel := kind
	byLabel.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}
	byName := kind
	byName.Name = "nginx"
	other := kind
	other.Name = "web"
	tests := []struct {
		name      string
		selectors []policyv1alpha1.ResourceSelector
		want      priority
	}{
		{"none", nil, priorityMatchAll},
		{"kind", []policyv1alpha1.ResourceSelector{kind}, priorityMatchAll},
		{"label", []policyv1alpha1.ResourceSelector{byLabel}, priorityMatchLabelSelector},
		{"name", []policyv1alpha1.ResourceSelector{byName}, priorityMatchName},
		{"best of several", []policyv1alpha1.ResourceSelector{kind, byName, byLabel}, priorityMatchName},
		{"mismatch", []policyv1alpha1.ResourceSelector{other}, priorityMismatch},
	}
	for _, tt := range tests {
		if got := selectorsPriority(tt.selectors, nginx); got != tt.want {
			t.Errorf("%s: selectorsPriority() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTargetsCluster(t *testing.T) {
	member1 := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member1", Labels: map[string]string{"env": "prod", "gpu": "4"}},
		Spec: clusterv1alpha1.ClusterSpec{
			Provider: "aws", Region: "eu-west-1", Zones: []string{"eu-west-1a", "eu-west-1b"},
		},
	}
	legacyZone := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy"},
		Spec:       clusterv1alpha1.ClusterSpec{Zone: "z1"},
	}
	bare := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}
	fields := func(exprs ...corev1.NodeSelectorRequirement) *policyv1alpha1.ClusterAffinity {
		return &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: exprs}}
	}
	req := func(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	tests := []struct {
		name     string
		affinity *policyv1alpha1.ClusterAffinity
		cluster  *clusterv1alpha1.Cluster
		want     bool
	}{
		{"nil selects all", nil, member1, true},
		{"empty selects all", &policyv1alpha1.ClusterAffinity{}, member1, true},
		{"named", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2", "member1"}}, member1, true},
		{"not named", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, member1, false},
		{"excluded", &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"member1"}}, member1, false},
		{"named and excluded", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}, ExcludeClusters: []string{"member1"}}, member1, false},
		{"other excluded", &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"member2"}}, member1, true},
		{"labels", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, member1, true},
		{"other labels", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}, member1, false},
		{"labels and names both needed", &policyv1alpha1.ClusterAffinity{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			ClusterNames:  []string{"member2"},
		}, member1, false},
		{"invalid label selector", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn}},
		}}, member1, false},
		{"provider In", fields(req("provider", corev1.NodeSelectorOpIn, "aws", "gcp")), member1, true},
		{"provider In other", fields(req("provider", corev1.NodeSelectorOpIn, "gcp")), member1, false},
		{"region NotIn", fields(req("region", corev1.NodeSelectorOpNotIn, "us-east-1")), member1, true},
		{"region NotIn own", fields(req("region", corev1.NodeSelectorOpNotIn, "eu-west-1")), member1, false},
		{"region NotIn when unset", fields(req("region", corev1.NodeSelectorOpNotIn, "eu-west-1")), bare, true},
		{"provider Exists", fields(req("provider", corev1.NodeSelectorOpExists)), member1, true},
		{"provider Exists unset", fields(req("provider", corev1.NodeSelectorOpExists)), bare, false},
		{"provider DoesNotExist unset", fields(req("provider", corev1.NodeSelectorOpDoesNotExist)), bare, true},
		{"all expressions must hold", fields(req("provider", corev1.NodeSelectorOpIn, "aws"), req("region", corev1.NodeSelectorOpIn, "us-east-1")), member1, false},
		{"In without values is invalid", fields(req("provider", corev1.NodeSelectorOpIn)), member1, false},
		{"unknown operator", fields(req("provider", "Like", "aws")), member1, false},
		{"zone In covers all zones", fields(req("zone", corev1.NodeSelectorOpIn, "eu-west-1a", "eu-west-1b", "eu-west-1c")), member1, true},
		{"zone In misses one zone", fields(req("zone", corev1.NodeSelectorOpIn, "eu-west-1a")), member1, false},
		{"zone In without zones", fields(req("zone", corev1.NodeSelectorOpIn, "eu-west-1a")), bare, false},
		{"zone NotIn", fields(req("zone", corev1.NodeSelectorOpNotIn, "eu-west-1c")), member1, true},
		{"zone NotIn one of them", fields(req("zone", corev1.NodeSelectorOpNotIn, "eu-west-1b")), member1, false},
		{"zone Exists", fields(req("zone", corev1.NodeSelectorOpExists)), member1, true},
		{"zone DoesNotExist", fields(req("zone", corev1.NodeSelectorOpDoesNotExist)), bare, true},
		{"zone Gt unsupported", fields(req("zone", corev1.NodeSelectorOpGt, "1")), member1, false},
		{"deprecated spec.zone", fields(req("zone", corev1.NodeSelectorOpIn, "z1")), legacyZone, true},
		{"empty field selector", fields(), member1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TargetsCluster(tt.affinity, tt.cluster); got != tt.want {
				t.Errorf("TargetsCluster() = %v, want %v", got, tt.want)
			}
		})
	}
}
