// SPDX-License-Identifier: Apache-2.0

package workload

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A fresh change doubles every target cluster's replicas and the binding's total, and
// the patch carries nothing else.
func TestDoubleReplicasPatchesEveryClustersReplicasAndTheTotal(t *testing.T) {
	rb := Binding(Deployment("bench", "app", 2, 0), "app-deployment", "id", Members(2))
	doubled, patch := DoubleReplicas(rb)
	data, err := patch.Data(doubled)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"spec": map[string]any{"replicas": 4.0, "clusters": []any{
		map[string]any{"name": "member1", "replicas": 2.0}, map[string]any{"name": "member2", "replicas": 2.0}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("patch %s, want %v", data, want)
	}
	if rb.Spec.Replicas != 2 || rb.Spec.Clusters[0].Replicas != 1 {
		t.Errorf("DoubleReplicas changed the binding it was given: %+v", rb.Spec)
	}
}
