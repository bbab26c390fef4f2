// SPDX-License-Identifier: Apache-2.0

package render

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
	"github.com/binding-controller/binding-controller/pkg/overridepolicy"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden renders every case under testdata/golden: binding.yaml and template.yaml in,
// and, when present, policies.yaml (OverridePolicies and ClusterOverridePolicies) and
// clusters.yaml (Cluster objects: when present, every one there is, so a target it does not
// list has none and gets no Work; when absent, every target has a bare one) and customizations.yaml (ResourceInterpreterCustomizations,
// run with the bundled ones as the controller runs them); one want-<cluster>.yaml out per target cluster (the
// Work, or the error for that cluster). A case that pins a Karmada rule says in the
// comment heading its binding.yaml which Karmada file and function it encodes, and what
// was measured against Karmada; the inputs are plain API objects, so a case can be fed
// to Karmada itself.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/golden/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases found: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, template := loadCase(t, dir)
			policies, clusters := loadOverrides(t, dir)
			reviser := interpreter.New(interpreter.Options{Customizations: loadCustomizations(t, dir)}).For(context.Background())
			targets := Targets(b.Spec)
			if len(targets) == 0 {
				t.Fatal("case has no target cluster")
			}
			for _, target := range targets {
				o := Overrides{Policies: policies, Cluster: clusters[target.Cluster], Interpreter: reviser}
				if len(clusters) > 0 && clusters[target.Cluster] == nil {
					// clusters.yaml lists every Cluster object there is.
					o.ClusterNotFound = apierrors.NewNotFound(schema.GroupResource{Group: "cluster.karmada.io", Resource: "Cluster"}, target.Cluster)
				}
				got := renderToYAML(t, b, template, target, o)
				path := filepath.Join(dir, "want-"+target.Cluster+".yaml")
				if *update {
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("reading %s (run with -update to create it): %v", path, err)
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("cluster %s: rendered Work differs from %s (-want +got):\n%s", target.Cluster, path, diff)
				}
			}
		})
	}
}

func renderToYAML(t *testing.T, b Binding, template *unstructured.Unstructured, target Target, o Overrides) []byte {
	t.Helper()
	before := template.DeepCopy()
	work, err := Work(b, template, target, o)
	if diff := cmp.Diff(before.Object, template.Object); diff != "" {
		t.Fatalf("Work modified the template:\n%s", diff)
	}
	if err != nil {
		return []byte("error: " + err.Error() + "\n")
	}
	out, err := yaml.Marshal(work)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func loadCase(t *testing.T, dir string) (Binding, *unstructured.Unstructured) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "binding.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rb workv1alpha2.ResourceBinding
	if err := yaml.UnmarshalStrict(raw, &rb); err != nil {
		t.Fatalf("binding.yaml: %v", err)
	}
	kind := ResourceBindingKind
	if strings.HasPrefix(rb.Kind, "Cluster") {
		kind = ClusterResourceBindingKind
	}
	b := Binding{
		Kind: kind, Namespace: rb.Namespace, Name: rb.Name,
		PermanentID: rb.Labels[kind.PermanentIDLabel()], Spec: &rb.Spec,
	}
	raw, err = os.ReadFile(filepath.Join(dir, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Decode as the API machinery does, so integers stay int64 as they do from a server.
	raw, err = yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	template := &unstructured.Unstructured{}
	if err := template.UnmarshalJSON(raw); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	return b, template
}

// loadOverrides reads the optional policies.yaml and clusters.yaml of a case.
func loadOverrides(t *testing.T, dir string) (overridepolicy.Policies, map[string]*clusterv1alpha1.Cluster) {
	t.Helper()
	var policies overridepolicy.Policies
	clusters := map[string]*clusterv1alpha1.Cluster{}
	for _, doc := range documents(t, filepath.Join(dir, "policies.yaml")) {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ClusterOverridePolicy":
			var p policyv1alpha1.ClusterOverridePolicy
			if err := yaml.UnmarshalStrict(doc, &p); err != nil {
				t.Fatalf("policies.yaml: %v", err)
			}
			policies.Cluster = append(policies.Cluster, p)
		case "OverridePolicy":
			var p policyv1alpha1.OverridePolicy
			if err := yaml.UnmarshalStrict(doc, &p); err != nil {
				t.Fatalf("policies.yaml: %v", err)
			}
			policies.Namespaced = append(policies.Namespaced, p)
		default:
			t.Fatalf("policies.yaml: unexpected kind %q", meta.Kind)
		}
	}
	for _, doc := range documents(t, filepath.Join(dir, "clusters.yaml")) {
		c := &clusterv1alpha1.Cluster{}
		if err := yaml.UnmarshalStrict(doc, c); err != nil {
			t.Fatalf("clusters.yaml: %v", err)
		}
		clusters[c.Name] = c
	}
	return policies, clusters
}

// loadCustomizations reads the optional customizations.yaml of a case.
func loadCustomizations(t *testing.T, dir string) staticCustomizations {
	t.Helper()
	var out staticCustomizations
	for _, doc := range documents(t, filepath.Join(dir, "customizations.yaml")) {
		var c configv1alpha1.ResourceInterpreterCustomization
		if err := yaml.UnmarshalStrict(doc, &c); err != nil {
			t.Fatalf("customizations.yaml: %v", err)
		}
		out = append(out, c)
	}
	return out
}

// documents splits a multi-document YAML file; a missing file has none.
func documents(t *testing.T, path string) [][]byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, doc := range strings.Split(string(raw), "\n---") {
		if strings.TrimSpace(doc) != "" {
			docs = append(docs, []byte(doc))
		}
	}
	return docs
}
