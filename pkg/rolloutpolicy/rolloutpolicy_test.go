// SPDX-License-Identifier: Apache-2.0

package rolloutpolicy

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
)

func web() *unstructured.Unstructured {
	d := &unstructured.Unstructured{}
	d.SetAPIVersion("apps/v1")
	d.SetKind("Deployment")
	d.SetNamespace("default")
	d.SetName("web")
	d.SetLabels(map[string]string{"tier": "frontend"})
	return d
}

func byName(name string) []policyv1alpha1.ResourceSelector {
	return []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}}
}

func byLabel() []policyv1alpha1.ResourceSelector {
	return []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment",
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "frontend"}}}}
}

func rp(ns, name string, sel []policyv1alpha1.ResourceSelector) rolloutsv1alpha1.RolloutPolicy {
	return rolloutsv1alpha1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rolloutsv1alpha1.RolloutPolicySpec{ResourceSelectors: sel}}
}

func crp(name string, sel []policyv1alpha1.ResourceSelector) rolloutsv1alpha1.ClusterRolloutPolicy {
	return rolloutsv1alpha1.ClusterRolloutPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: rolloutsv1alpha1.RolloutPolicySpec{ResourceSelectors: sel}}
}

func TestOnePolicyGovernsATemplate(t *testing.T) {
	for _, tc := range []struct {
		name        string
		namespaced  []rolloutsv1alpha1.RolloutPolicy
		clusterWide []rolloutsv1alpha1.ClusterRolloutPolicy
		want        string // Kind/name, "" for none
	}{
		{name: "none selects it", namespaced: []rolloutsv1alpha1.RolloutPolicy{rp("default", "api", byName("api"))}},
		{name: "a RolloutPolicy of another namespace does not", namespaced: []rolloutsv1alpha1.RolloutPolicy{rp("other", "web", byName("web"))}},
		{name: "a RolloutPolicy before a ClusterRolloutPolicy, even a more specific one",
			namespaced:  []rolloutsv1alpha1.RolloutPolicy{rp("default", "by-label", byLabel())},
			clusterWide: []rolloutsv1alpha1.ClusterRolloutPolicy{crp("by-name", byName("web"))},
			want:        "RolloutPolicy/by-label"},
		{name: "a name before a label selector",
			namespaced: []rolloutsv1alpha1.RolloutPolicy{rp("default", "a-label", byLabel()), rp("default", "z-name", byName("web"))},
			want:       "RolloutPolicy/z-name"},
		{name: "a label selector before a whole kind (no selectors)",
			clusterWide: []rolloutsv1alpha1.ClusterRolloutPolicy{crp("a-all", nil), crp("b-label", byLabel())},
			want:        "ClusterRolloutPolicy/b-label"},
		{name: "equals: the name that sorts first",
			namespaced: []rolloutsv1alpha1.RolloutPolicy{rp("default", "zeta", byName("web")), rp("default", "alpha", byName("web"))},
			want:       "RolloutPolicy/alpha"},
		{name: "a ClusterRolloutPolicy when no RolloutPolicy selects it",
			namespaced:  []rolloutsv1alpha1.RolloutPolicy{rp("default", "api", byName("api"))},
			clusterWide: []rolloutsv1alpha1.ClusterRolloutPolicy{crp("all", nil)},
			want:        "ClusterRolloutPolicy/all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if p := Select(web(), tc.namespaced, tc.clusterWide); p != nil {
				got = p.Kind + "/" + p.Name
			}
			if got != tc.want {
				t.Errorf("Select = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClustersFallIntoTheFirstStageThatSelectsThem(t *testing.T) {
	spec := &rolloutsv1alpha1.RolloutPolicySpec{Stages: []rolloutsv1alpha1.RolloutStage{
		{Name: "canary", Clusters: rolloutsv1alpha1.StageClusters{Names: []string{"member1"}}},
		{Name: "empty", Clusters: rolloutsv1alpha1.StageClusters{Names: []string{"member9"}}},
		{Name: "prod", Clusters: rolloutsv1alpha1.StageClusters{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
			MaxConcurrency: ptr.To(intstr.FromString("50%")), MinSuccessTime: &metav1.Duration{Duration: time.Minute}, RequireApproval: true},
	}}
	clusters := map[string]*clusterv1alpha1.Cluster{
		"member1": {ObjectMeta: metav1.ObjectMeta{Name: "member1", Labels: map[string]string{"env": "prod"}}},
		"member2": {ObjectMeta: metav1.ObjectMeta{Name: "member2", Labels: map[string]string{"env": "prod"}}},
		"member3": {ObjectMeta: metav1.ObjectMeta{Name: "member3", Labels: map[string]string{"env": "prod"}}},
		"member4": {ObjectMeta: metav1.ObjectMeta{Name: "member4", Labels: map[string]string{"env": "dev"}}},
	}
	got := Stages(spec, []string{"member4", "member3", "member1", "member2", "member5"}, clusters)
	want := []Stage{
		{Name: "canary", Clusters: []string{"member1"}, MaxConcurrency: 1},
		{Name: "prod", Clusters: []string{"member3", "member2"}, MaxConcurrency: 1, MinSuccessTime: metav1.Duration{Duration: time.Minute}, RequireApproval: true},
		{Name: UnstagedName, Clusters: []string{"member4", "member5"}, MaxConcurrency: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Stages =\n%+v\nwant\n%+v", got, want)
	}
}

func TestConcurrency(t *testing.T) {
	for _, tc := range []struct {
		limit *intstr.IntOrString
		n     int
		want  int
	}{
		{nil, 7, 7},
		{ptr.To(intstr.FromInt32(2)), 7, 2},
		{ptr.To(intstr.FromInt32(20)), 7, 7},
		{ptr.To(intstr.FromInt32(0)), 7, 1},
		{ptr.To(intstr.FromString("50%")), 7, 4},
		{ptr.To(intstr.FromString("1%")), 7, 1},
		{ptr.To(intstr.FromString("half")), 7, 7},
		{ptr.To(intstr.FromInt32(3)), 0, 0},
	} {
		if got := Concurrency(tc.limit, tc.n); got != tc.want {
			t.Errorf("Concurrency(%v, %d) = %d, want %d", tc.limit, tc.n, got, tc.want)
		}
	}
}
