// SPDX-License-Identifier: Apache-2.0

package overridepolicy

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// Golden files of a case directory under testdata.
const (
	wantFile            = "want.yaml"             // the overridden object
	wantAnnotationsFile = "want-annotations.yaml" // Applied.Annotations()
	wantErrorFile       = "want-error.txt"        // the error, instead of the two above
)

// TestGolden runs every case under testdata: template.yaml, cluster.yaml and
// policies.yaml (a multi-document file of ClusterOverridePolicies and OverridePolicies;
// optional) in; want.yaml and want-annotations.yaml, or want-error.txt, out.
func TestGolden(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		cases++
		dir := filepath.Join("testdata", e.Name())
		t.Run(e.Name(), func(t *testing.T) { runGoldenCase(t, dir) })
	}
	if cases == 0 {
		t.Fatal("no golden cases found")
	}
}

func runGoldenCase(t *testing.T, dir string) {
	template := loadTemplate(t, filepath.Join(dir, "template.yaml"))
	cluster := loadCluster(t, filepath.Join(dir, "cluster.yaml"))
	policies := loadPolicies(t, filepath.Join(dir, "policies.yaml"))

	before := template.DeepCopy()
	got, applied, err := Apply(template, cluster, policies)
	if diff := cmp.Diff(before.Object, template.Object); diff != "" {
		t.Fatalf("Apply modified the template:\n%s", diff)
	}

	// The order the policies are listed in must not matter.
	reversed := Policies{Cluster: slices.Clone(policies.Cluster), Namespaced: slices.Clone(policies.Namespaced)}
	slices.Reverse(reversed.Cluster)
	slices.Reverse(reversed.Namespaced)
	got2, applied2, err2 := Apply(template, cluster, reversed)
	if diff := cmp.Diff(errString(err), errString(err2)); diff != "" {
		t.Errorf("error depends on the order of the policies:\n%s", diff)
	}
	if err == nil {
		if diff := cmp.Diff(got.Object, got2.Object); diff != "" {
			t.Errorf("result depends on the order of the policies:\n%s", diff)
		}
		if diff := cmp.Diff(applied, applied2); diff != "" {
			t.Errorf("Applied depends on the order of the policies:\n%s", diff)
		}
	}

	files := map[string][]byte{}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || got != nil {
			t.Errorf("on error Apply must return a nil object and an *Error, got %T and %v", err, got)
		}
		files[wantErrorFile] = []byte(err.Error() + "\n")
	} else {
		out, mErr := yaml.Marshal(got.Object)
		if mErr != nil {
			t.Fatal(mErr)
		}
		files[wantFile] = out
		annotations, aErr := applied.Annotations()
		if aErr != nil {
			t.Fatal(aErr)
		}
		if out, mErr = yaml.Marshal(annotations); mErr != nil {
			t.Fatal(mErr)
		}
		files[wantAnnotationsFile] = out
	}

	for _, name := range []string{wantFile, wantAnnotationsFile, wantErrorFile} {
		path := filepath.Join(dir, name)
		content, expected := files[name]
		if *update {
			if expected {
				if err := os.WriteFile(path, content, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			continue
		}
		want, rErr := os.ReadFile(path)
		switch {
		case !expected && rErr == nil:
			t.Errorf("%s exists but Apply produced no such output (run with -update)", path)
		case expected && rErr != nil:
			t.Errorf("reading %s (run with -update to create it): %v\ngot:\n%s", path, rErr, content)
		case expected:
			if diff := cmp.Diff(string(want), string(content)); diff != "" {
				t.Errorf("%s differs (-want +got):\n%s", path, diff)
			}
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func loadTemplate(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Decode as the API machinery does, so that integers are int64 as from a server.
	if raw, err = yaml.YAMLToJSON(raw); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	template := &unstructured.Unstructured{}
	if err := template.UnmarshalJSON(raw); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return template
}

func loadCluster(t *testing.T, path string) *clusterv1alpha1.Cluster {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cluster := &clusterv1alpha1.Cluster{}
	if err := yaml.UnmarshalStrict(raw, cluster); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cluster
}

var documentSeparator = regexp.MustCompile(`(?m)^---\s*$`)

func loadPolicies(t *testing.T, path string) Policies {
	t.Helper()
	var policies Policies
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return policies
	}
	if err != nil {
		t.Fatal(err)
	}
	for i, doc := range documentSeparator.Split(string(raw), -1) {
		if j, err := yaml.YAMLToJSON([]byte(doc)); err == nil && strings.TrimSpace(string(j)) == "null" {
			continue // empty, or only comments
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%s document %d: %v", path, i, err)
		}
		switch meta.Kind {
		case policyv1alpha1.ResourceKindClusterOverridePolicy:
			var p policyv1alpha1.ClusterOverridePolicy
			if err := yaml.UnmarshalStrict([]byte(doc), &p); err != nil {
				t.Fatalf("%s document %d: %v", path, i, err)
			}
			policies.Cluster = append(policies.Cluster, p)
		case policyv1alpha1.ResourceKindOverridePolicy:
			var p policyv1alpha1.OverridePolicy
			if err := yaml.UnmarshalStrict([]byte(doc), &p); err != nil {
				t.Fatalf("%s document %d: %v", path, i, err)
			}
			policies.Namespaced = append(policies.Namespaced, p)
		default:
			t.Fatalf("%s document %d: unexpected kind %q", path, i, meta.Kind)
		}
	}
	return policies
}
