// SPDX-License-Identifier: Apache-2.0

package karmadabuild

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// envtest installs the CRDs of each directory it is given, not of the directories under
// it: Karmada keeps its CRDs one directory per API group, so every one is listed, and
// the Cluster CRD Karmada does not ship comes from this project.
func TestCRDPathsListEveryDirectoryAndTheProjectsClusterCRD(t *testing.T) {
	bases := t.TempDir()
	for _, d := range []string{"policy", "work", filepath.Join("work", "nested")} {
		if err := os.MkdirAll(filepath.Join(bases, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := CRDPaths(bases)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{bases, filepath.Join(bases, "policy"), filepath.Join(bases, "work"), filepath.Join(bases, "work", "nested")}
	if !reflect.DeepEqual(got[:len(got)-1], want) {
		t.Errorf("CRDPaths directories = %q, want %q", got[:len(got)-1], want)
	}
	cluster := got[len(got)-1]
	if filepath.Base(cluster) != "cluster.karmada.io_clusters.yaml" {
		t.Errorf("CRDPaths ends with %q, want the project's Cluster CRD", cluster)
	}
	if _, err := os.Stat(cluster); err != nil {
		t.Errorf("the project's Cluster CRD: %v", err)
	}
	if _, err := CRDPaths(filepath.Join(bases, "missing")); err == nil {
		t.Error("CRDPaths of a missing directory did not fail")
	}
}
