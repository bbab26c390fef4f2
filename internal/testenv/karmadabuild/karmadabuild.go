// SPDX-License-Identifier: Apache-2.0

// Package karmadabuild builds Karmada's own controller-manager from a Karmada checkout,
// for the programs that run it beside this project's against one control plane
// (hack/diffkarmada, the benchmark's vs-karmada scenario), and lists the CRDs a control
// plane needs before that controller-manager starts. Nothing in make test uses it: CI
// never needs Karmada.
package karmadabuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
)

// BinaryName is the file Build leaves the controller-manager in, inside its work directory.
const BinaryName = "karmada-controller-manager"

// sources are what building cmd/controller-manager needs of a checkout, Karmada's CRDs
// with them.
var sources = []string{"go.mod", "go.sum", "cmd", "pkg", "vendor", "operator", "charts/karmada/_crds"}

// Build builds Karmada's controller-manager from checkout, a work tree or a git
// directory (a fetched snapshot), with its vendored modules: nothing is downloaded. The
// sources go to workDir/karmada-src and the binary to workDir/BinaryName; a binary
// already there is used as it is (building takes minutes), so a work directory kept
// between runs is a cache. It also returns the directory of Karmada's CRDs
// (charts/karmada/_crds/bases).
func Build(ctx context.Context, checkout, workDir string, log io.Writer) (bin, crdDir string, err error) {
	src := filepath.Join(workDir, "karmada-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", "", err
	}
	if err := extract(ctx, checkout, src); err != nil {
		return "", "", err
	}
	bin = filepath.Join(workDir, BinaryName)
	if _, err := os.Stat(bin); err != nil {
		fmt.Fprintf(log, "building Karmada's controller-manager from %s (several minutes the first time)\n", checkout)
		build := exec.CommandContext(ctx, "go", "build", "-mod=vendor", "-o", bin, "./cmd/controller-manager")
		build.Dir = src
		build.Env = append(os.Environ(), "GOFLAGS=-mod=vendor", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("building Karmada's controller-manager: %v: %s", err, out)
		}
	}
	return bin, filepath.Join(src, "charts", "karmada", "_crds", "bases"), nil
}

// extract copies the sources of checkout into src.
func extract(ctx context.Context, checkout, src string) error {
	if _, err := os.Stat(filepath.Join(checkout, "cmd", "controller-manager")); err == nil {
		for _, p := range sources {
			if err := os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755); err != nil {
				return err
			}
			cp := exec.CommandContext(ctx, "cp", "-a", filepath.Join(checkout, p), filepath.Join(src, filepath.Dir(p))+"/")
			if out, err := cp.CombinedOutput(); err != nil {
				return fmt.Errorf("copying %s: %v: %s", p, err, out)
			}
		}
		return nil
	}
	// A git directory without a work tree: its HEAD, as the fetch tool leaves it. git
	// archive may fail on an object outside the paths asked for (a fetched snapshot can
	// lack large files) after writing every one of them: what counts is that they are there.
	archive := exec.CommandContext(ctx, "sh", "-c", fmt.Sprintf("git --git-dir=%q archive HEAD %s | tar -x -C %q",
		checkout, strings.Join(sources, " "), src))
	if out, err := archive.CombinedOutput(); err != nil {
		if _, statErr := os.Stat(filepath.Join(src, "vendor", "modules.txt")); statErr != nil {
			return fmt.Errorf("extracting %s: %v: %s", checkout, err, out)
		}
	}
	return nil
}

// CRDPaths are the CRDs a control plane needs for Karmada's controller-manager: every
// directory of Karmada's under crdDir (it refuses to start without, say,
// PropagationPolicy, even with only its binding controllers on), and this project's
// Cluster CRD, which Karmada serves from its aggregated API server instead.
func CRDPaths(crdDir string) ([]string, error) {
	dirs, err := subdirs(crdDir)
	if err != nil {
		return nil, err
	}
	return append(dirs, filepath.Join(envtestutil.ProjectCRDDir(), "cluster.karmada.io_clusters.yaml")), nil
}

// subdirs lists dir and every directory under it: envtest reads CRDs one level deep.
func subdirs(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			out = append(out, path)
		}
		return err
	})
	return out, err
}

// Commit is the commit checkout's HEAD is at ("" when git cannot tell), to say which
// Karmada was measured.
func Commit(ctx context.Context, checkout string) string {
	where := []string{"--git-dir=" + checkout}
	if _, err := os.Stat(filepath.Join(checkout, "cmd", "controller-manager")); err == nil {
		where = []string{"-C", checkout} // a work tree
	}
	out, err := exec.CommandContext(ctx, "git", append(where, "rev-parse", "HEAD")...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
