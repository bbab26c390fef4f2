// SPDX-License-Identifier: Apache-2.0

package render

import (
	"context"
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
)

// benchTemplate is the Deployment of make bench as the API server returns it (defaults
// filled in, managed fields dropped as the controller's cache drops them). The other kinds
// of the benchmark carry the same body, so that the interpreter is all that differs.
const benchTemplate = `{
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "app-00000", "namespace": "bench", "uid": "6b1f7f2e-0000-4000-8000-000000000001",
    "resourceVersion": "1234", "generation": 1, "creationTimestamp": "2026-12-01T10:00:00Z",
    "labels": {"app": "app-00000"}},
  "spec": {
    "replicas": 10,
    "selector": {"matchLabels": {"app": "app-00000"}},
    "template": {
      "metadata": {"creationTimestamp": null, "labels": {"app": "app-00000"}},
      "spec": {
        "containers": [{"name": "app", "image": "nginx:1.27", "ports": [{"containerPort": 80, "protocol": "TCP"}],
          "resources": {}, "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
          "imagePullPolicy": "IfNotPresent"}],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "securityContext": {}, "schedulerName": "default-scheduler"}},
    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
    "revisionHistoryLimit": 10,
    "progressDeadlineSeconds": 600},
  "status": {}
}`

// benchLuaScript is the customization make bench's interpreter scenario installs.
const benchLuaScript = `
function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica
  return obj
end`

// staticCustomizations lists fixed customizations, as the controller's cache index does.
type staticCustomizations []configv1alpha1.ResourceInterpreterCustomization

func (s staticCustomizations) CustomizationsFor(_ context.Context, gvk schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	var out []configv1alpha1.ResourceInterpreterCustomization
	for _, c := range s {
		if schema.FromAPIVersionAndKind(c.Spec.Target.APIVersion, c.Spec.Target.Kind) == gvk {
			out = append(out, *c.DeepCopy())
		}
	}
	return out, nil
}

func benchCustomization() configv1alpha1.ResourceInterpreterCustomization {
	var c configv1alpha1.ResourceInterpreterCustomization
	c.Name = "queue-replicas"
	c.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "queues.example.io/v1", Kind: "Queue"}
	c.Spec.Customizations.ReplicaRevision = &configv1alpha1.ReplicaRevision{LuaScript: benchLuaScript}
	return c
}

func benchObject(b *testing.B, apiVersion, kind string) *unstructured.Unstructured {
	b.Helper()
	u := &unstructured.Unstructured{}
	// The controller reads templates through the unstructured decoder: whole numbers are int64.
	if err := u.UnmarshalJSON([]byte(benchTemplate)); err != nil {
		b.Fatal(err)
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

// BenchmarkRenderWork renders one Work of a ten-cluster binding, one replica each, as the
// controller does for every Work: a native Deployment (the interpreter is asked and no
// hook handles it), a custom kind revised by a ResourceInterpreterCustomization's Lua, and
// a Kruise CloneSet revised by the bundled customization. Compare cpu-ns/op (and allocs)
// side by side; ns/op is wall time and grows when other processes share the machine:
//
//	go test ./pkg/render -run '^$' -bench RenderWork -benchmem
func BenchmarkRenderWork(b *testing.B) {
	for _, c := range []struct {
		name, apiVersion, kind string
	}{
		{"native-Deployment", "apps/v1", "Deployment"},
		{"lua-customization-Queue", "queues.example.io/v1", "Queue"},
		{"bundled-CloneSet", "apps.kruise.io/v1alpha1", "CloneSet"},
	} {
		b.Run(c.name, func(b *testing.B) {
			template := benchObject(b, c.apiVersion, c.kind)
			spec := &workv1alpha2.ResourceBindingSpec{Replicas: 10}
			for _, m := range []string{"member1", "member2", "member3", "member4", "member5", "member6", "member7", "member8", "member9", "member10"} {
				spec.Clusters = append(spec.Clusters, workv1alpha2.TargetCluster{Name: m, Replicas: 1})
			}
			binding := Binding{Kind: ResourceBindingKind, Namespace: "bench", Name: "app-00000-deployment", PermanentID: "bench-0", Spec: spec}
			in := interpreter.New(interpreter.Options{Customizations: staticCustomizations{benchCustomization()}})
			o := Overrides{Interpreter: in.For(context.Background())}
			targets := Targets(spec)
			// Every kind must come out with the cluster's share, or the comparison is moot.
			if got := workReplicasB(b, binding, template, targets[0], o); got != 1 {
				b.Fatalf("%s: replicas %d, want 1", c.kind, got)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			for i := 0; i < b.N; i++ {
				if i%len(targets) == 0 {
					// One sync of the binding renders every cluster's Work.
					o.Interpreter = in.For(context.Background())
				}
				if _, err := Work(binding, template, targets[i%len(targets)], o); err != nil {
					b.Fatal(err)
				}
			}
			reportCPUPerOp(b, cpu)
		})
	}
}

// BenchmarkRenderWorkParallel is BenchmarkRenderWork's Lua case from as many goroutines as
// GOMAXPROCS, as the controller's workers render: the VM pool is shared.
func BenchmarkRenderWorkParallel(b *testing.B) {
	for _, c := range []struct{ name, apiVersion, kind string }{
		{"native-Deployment", "apps/v1", "Deployment"},
		{"lua-customization-Queue", "queues.example.io/v1", "Queue"},
	} {
		b.Run(c.name, func(b *testing.B) {
			template := benchObject(b, c.apiVersion, c.kind)
			spec := &workv1alpha2.ResourceBindingSpec{Replicas: 1, Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}}}
			binding := Binding{Kind: ResourceBindingKind, Namespace: "bench", Name: "app-00000-deployment", PermanentID: "bench-0", Spec: spec}
			in := interpreter.New(interpreter.Options{Customizations: staticCustomizations{benchCustomization()}})
			o := Overrides{Interpreter: in.For(context.Background())}
			target := Targets(spec)[0]
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			defer reportCPUPerOp(b, cpu)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := Work(binding, template, target, o); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func workReplicasB(b *testing.B, binding Binding, template *unstructured.Unstructured, target Target, o Overrides) int64 {
	b.Helper()
	w, err := Work(binding, template, target, o)
	if err != nil {
		b.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj); err != nil {
		b.Fatal(err)
	}
	v, _, _ := unstructured.NestedFieldNoCopy(obj, "spec", "replicas")
	f, _ := v.(float64)
	return int64(f)
}
