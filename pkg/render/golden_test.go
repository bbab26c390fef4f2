package render

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden renders every case under testdata/golden: binding.yaml and template.yaml in,
// one want-<cluster>.yaml out per target cluster (the Work, or the error for that cluster).
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/golden/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases found: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, template := loadCase(t, dir)
			targets := Targets(b.Spec)
			if len(targets) == 0 {
				t.Fatal("case has no target cluster")
			}
			for _, target := range targets {
				got := renderToYAML(t, b, template, target)
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

func renderToYAML(t *testing.T, b Binding, template *unstructured.Unstructured, target Target) []byte {
	t.Helper()
	before := template.DeepCopy()
	work, err := Work(b, template, target)
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
