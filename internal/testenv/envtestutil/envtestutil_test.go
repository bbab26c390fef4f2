// SPDX-License-Identifier: Apache-2.0

package envtestutil

import (
	"os"
	"path/filepath"
	"testing"
)

// From inside a nested module (bench/ has a go.mod of its own), the repository root is
// still the main module's directory, where bin/k8s and config/ are.
func TestFindGoModSkipsNestedModules(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "go.mod"), "// comment\nmodule "+mainModule+"\n\ngo 1.26.0\n")
	write(filepath.Join(root, "bench", "go.mod"), "module "+mainModule+"/bench\n")
	write(filepath.Join(root, "bench", "results", "x.json"), "{}")
	for _, dir := range []string{root, filepath.Join(root, "bench"), filepath.Join(root, "bench", "results")} {
		if got, ok := findGoMod(dir); !ok || got != root {
			t.Errorf("findGoMod(%s) = %q, %v; want %q", dir, got, ok, root)
		}
	}
	if got, ok := findGoMod(filepath.Dir(root)); ok {
		t.Errorf("findGoMod above the repository = %q, want none", got)
	}
}
