// SPDX-License-Identifier: Apache-2.0

package render

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// Karmada's native ReviseReplica (helper.ApplyReplica) sets a replica field only when the
// template has it, and does so for every workload binding: one with replica requirements
// or components is a workload even at spec.replicas 0.
func TestNativeReplicasFollowKarmadasApplyReplica(t *testing.T) {
	deployment := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "default", "uid": "u1"},
			"spec":     spec,
		}}
	}
	for _, tc := range []struct {
		name   string
		spec   workv1alpha2.ResourceBindingSpec
		tmpl   map[string]any
		want   any // spec.replicas in the Work, nil: absent
		reason string
	}{
		{name: "replicas set", spec: workv1alpha2.ResourceBindingSpec{Replicas: 3}, tmpl: map[string]any{"replicas": int64(3)}, want: float64(2)},
		{name: "field absent", spec: workv1alpha2.ResourceBindingSpec{Replicas: 3}, tmpl: map[string]any{}, want: nil,
			reason: "ApplyReplica writes no field the template does not have"},
		{name: "workload by replica requirements", spec: workv1alpha2.ResourceBindingSpec{ReplicaRequirements: &workv1alpha2.ReplicaRequirements{}},
			tmpl: map[string]any{"replicas": int64(3)}, want: float64(2), reason: "IsWorkload: replicaRequirements set"},
		{name: "not a workload", spec: workv1alpha2.ResourceBindingSpec{}, tmpl: map[string]any{"replicas": int64(3)}, want: float64(3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Resource = workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}
			tc.spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}}
			b := Binding{Kind: ResourceBindingKind, Namespace: "default", Name: "web-deployment", Spec: &tc.spec}
			w, err := Work(b, deployment(tc.tmpl), Targets(&tc.spec)[0], Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]any
			if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj); err != nil {
				t.Fatal(err)
			}
			got, _, _ := unstructured.NestedFieldNoCopy(obj, "spec", "replicas")
			if got != tc.want {
				t.Errorf("spec.replicas = %v, want %v (%s)", got, tc.want, tc.reason)
			}
		})
	}
}
