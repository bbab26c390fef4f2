// SPDX-License-Identifier: Apache-2.0

// Command diffkarmada is a differential fuzzer against Karmada: from a seed it generates
// resource templates, bindings, override policies and interpreter customizations, has
// Karmada's own binding controller and then this project's turn them into Works on one
// real API server, and reports every Work on which they disagree, by class, with the
// inputs of each case written out as a golden case (pkg/render/testdata/golden layout).
//
//	make diff-karmada KARMADA=<a Karmada checkout or fetched git directory> [DIFF_ARGS='--bindings 2000']
//
// Nothing here is needed by CI or the tests; it needs a Karmada checkout to build from.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/binding-controller/binding-controller/internal/testenv/controlplane"
	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/karmadabuild"
)

func main() {
	karmadaCheckout := flag.String("karmada", "", "Karmada checkout (work tree, or git directory as the fetch tool leaves it) to build the controller-manager from")
	ours := flag.String("manager", "bin/binding-controller-manager", "this project's controller-manager binary (make build)")
	seed := flag.Uint64("seed", 1, "seed of the generated cases")
	bindings := flag.Int("bindings", 200, "how many cases (one binding each) to generate")
	batch := flag.Int("batch", 100, "cases per batch: created together, synced by each controller in turn")
	first := flag.Int("first", 0, "index of the first case (to replay part of a run)")
	workDir := flag.String("work", "", "work directory (default: a new one under the temp directory)")
	out := flag.String("out", "bench/results/diff-karmada", "where the report and the differing cases are written (relative: to the repository root)")
	settle := flag.Duration("settle", 4*time.Second, "how long the Works must stay unchanged before a controller is taken as done")
	shrinkClasses := flag.Bool("shrink", true, "shrink one case of each class of difference to a minimal case (bench/results/diff-karmada/minimal)")
	flag.Parse()
	if *karmadaCheckout == "" {
		fmt.Fprintln(os.Stderr, "diffkarmada: --karmada is required (a Karmada checkout); see make diff-karmada")
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, options{checkout: *karmadaCheckout, ours: *ours, seed: *seed, bindings: *bindings, batch: *batch,
		first: *first, workDir: *workDir, out: *out, settle: *settle, shrink: *shrinkClasses}); err != nil {
		fmt.Fprintln(os.Stderr, "diffkarmada:", err)
		os.Exit(1)
	}
}

type options struct {
	checkout, ours, workDir, out string
	seed                         uint64
	bindings, batch, first       int
	settle                       time.Duration
	shrink                       bool
}

// report is what a run found, written as JSON beside the cases.
type report struct {
	Seed        uint64         `json:"seed"`
	First       int            `json:"first"`
	Bindings    int            `json:"bindings"`
	Works       map[string]int `json:"works"` // by controller
	Differences []Difference   `json:"differences"`
	Classes     map[string]int `json:"classes"` // signature → cases
	// Minimal holds, per class, the shrunk case's directory under minimal/.
	Minimal map[string]string `json:"minimal,omitempty"`
	Started time.Time         `json:"started"`
	Took    string            `json:"took"`
}

func run(ctx context.Context, o options) error {
	start := time.Now()
	root := envtestutil.RepoRoot()
	if o.workDir == "" {
		dir, err := os.MkdirTemp("", "diffkarmada-")
		if err != nil {
			return err
		}
		o.workDir = dir
	}
	if !filepath.IsAbs(o.out) {
		o.out = filepath.Join(root, o.out)
	}
	if !filepath.IsAbs(o.ours) {
		o.ours = filepath.Join(root, o.ours)
	}
	karmadaBin, karmadaCRDs, err := karmadabuild.Build(ctx, o.checkout, o.workDir, os.Stderr)
	if err != nil {
		return err
	}
	crdDirs, err := karmadabuild.CRDPaths(karmadaCRDs)
	if err != nil {
		return err
	}
	crdDirs = append(crdDirs, envtestutil.WorkloadCRDDir(), filepath.Join(root, "hack", "diffkarmada", "crds"))
	plane, err := controlplane.Start(controlplane.Options{Dir: filepath.Join(o.workDir, "plane"), CRDPaths: crdDirs})
	if err != nil {
		return err
	}
	defer func() { _ = plane.Stop() }()
	_, kubeconfig, err := plane.AddUser("diffkarmada", -1, 0)
	if err != nil {
		return err
	}
	r := &runner{plane: plane, kubeconfig: kubeconfig, log: os.Stderr, settle: o.settle,
		karmada: karmadaController(karmadaBin, o.workDir), ours: ourController(o.ours, o.workDir)}
	if err := r.join(ctx); err != nil {
		return err
	}
	hook, caBundle, err := startWebhook()
	if err != nil {
		return err
	}
	defer hook.Close()

	rep := report{Seed: o.seed, First: o.first, Bindings: o.bindings, Works: map[string]int{}, Classes: map[string]int{}, Started: start}
	all := map[int]*Case{}
	stored := map[int]*unstructured.Unstructured{}
	classCases := map[string]map[int]bool{}
	var karmadaAll, oursAll = Works{}, Works{}
	for b := o.first; b < o.first+o.bindings; b += o.batch {
		n := min(o.batch, o.first+o.bindings-b)
		customizations := Customizations(o.seed, b/o.batch)
		webhooks := Webhooks(o.seed, b/o.batch, hook.URL, caBundle)
		var cases []*Case
		caseOf := map[string]int{}
		for i := b; i < b+n; i++ {
			c := Generate(o.seed, i, customizations, webhooks)
			cases = append(cases, c)
			all[i] = c
			caseOf[c.Binding.GetName()] = i
		}
		res, err := r.run(ctx, cases)
		kw, ow, st := res.karmada, res.ours, res.stored
		if err != nil {
			return fmt.Errorf("batch at case %d: %w", b, err)
		}
		for i, t := range st {
			stored[i] = t
		}
		rep.Works["karmada"] += len(kw)
		rep.Works["ours"] += len(ow)
		for k, v := range kw {
			karmadaAll[k] = v
		}
		for k, v := range ow {
			oursAll[k] = v
		}
		diffs := compare(kw, ow, res.oursSays, func(work map[string]any) int { return caseOf[bindingNameOf(work)] })
		for _, d := range diffs {
			sig := d.Signature(all[d.Case].Template.GetKind())
			if classCases[sig] == nil {
				classCases[sig] = map[int]bool{}
			}
			classCases[sig][d.Case] = true
		}
		rep.Differences = append(rep.Differences, diffs...)
		fmt.Fprintf(os.Stderr, "cases %d–%d: Karmada wrote %d Works, ours %d; %d differ (%s so far)\n",
			b, b+n-1, len(kw), len(ow), len(diffs), time.Since(start).Round(time.Second))
	}
	for sig, cs := range classCases {
		rep.Classes[sig] = len(cs)
	}
	// Written before shrinking too, which can take long, and again with the minimal cases.
	rep.Took = time.Since(start).Round(time.Second).String()
	if err := writeReport(o.out, rep, all, stored, karmadaAll, oursAll); err != nil {
		return err
	}
	if o.shrink {
		rep.Minimal = map[string]string{}
		if err := os.RemoveAll(filepath.Join(o.out, "minimal")); err != nil {
			return err
		}
		nextIndex := 10_000_000
		next := func() int { nextIndex++; return nextIndex }
		for n, sig := range sortedKeys(classCases) {
			if strings.HasPrefix(sig, "known: ") {
				continue // a difference on purpose: nothing to close
			}
			c, err := shrink(ctx, r, smallest(all, classCases[sig]), sig, next)
			if err != nil {
				return fmt.Errorf("shrinking %q: %w", sig, err)
			}
			dir := filepath.Join(o.out, "minimal", fmt.Sprintf("class-%d", n+1))
			// Fresh names: the namespace a case ran in stays terminating (no namespace
			// controller runs here).
			if err := writeMinimal(ctx, r, restamp(c, next()), sig, dir); err != nil {
				return err
			}
			rep.Minimal[sig] = filepath.Base(dir)
		}
	}
	rep.Took = time.Since(start).Round(time.Second).String()
	return writeReport(o.out, rep, all, stored, karmadaAll, oursAll)
}

// smallest is the case of cases with the fewest policies and target clusters.
func smallest(all map[int]*Case, cases map[int]bool) *Case {
	var best *Case
	size := func(c *Case) int {
		clusters, _, _ := unstructured.NestedSlice(c.Binding.Object, "spec", "clusters")
		return 10*len(c.Policies) + len(clusters)
	}
	for _, i := range sortedKeys(cases) {
		if c := all[i]; best == nil || size(c) < size(best) {
			best = c
		}
	}
	return best
}

// writeMinimal runs the shrunk case once more alone and writes it with both Works.
func writeMinimal(ctx context.Context, r *runner, c *Case, sig, dir string) error {
	res, err := r.run(ctx, []*Case{c})
	if err != nil {
		return err
	}
	for _, d := range compare(res.karmada, res.ours, res.oursSays, func(map[string]any) int { return c.Index }) {
		if d.Signature(c.Template.GetKind()) == sig {
			if err := writeCase(dir, c, res.stored[c.Index], d, res.karmada, res.ours); err != nil {
				return err
			}
		}
	}
	return writeFile(dir, "class.txt", []byte(sig+"\n"))
}

func sortedKeys[K int | string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// bindingNameOf is the name of the binding a Work's annotations name.
func bindingNameOf(work map[string]any) string {
	annotations, _ := valueAt(work, "/metadata/annotations").(map[string]any)
	for _, key := range []string{"resourcebinding.karmada.io/name", "clusterresourcebinding.karmada.io/name"} {
		if v, ok := annotations[key].(string); ok {
			return v
		}
	}
	return ""
}

// writeReport writes report.json, summary.md, and for each case that differs a directory
// in the golden layout with both controllers' Works (karmada-<cluster>.yaml, ours-<cluster>.yaml).
func writeReport(dir string, rep report, all map[int]*Case, stored map[int]*unstructured.Unstructured, karmada, ours Works) error {
	if err := os.RemoveAll(filepath.Join(dir, "cases")); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(dir, "report.json", raw); err != nil {
		return err
	}
	var sigs []string
	for s := range rep.Classes {
		sigs = append(sigs, s)
	}
	sort.Strings(sigs)
	var md strings.Builder
	fmt.Fprintf(&md, "# Differential run against Karmada\n\nseed %d, cases %d–%d (%d bindings), %s\n\n", rep.Seed, rep.First, rep.First+rep.Bindings-1, rep.Bindings, rep.Took)
	fmt.Fprintf(&md, "Works: Karmada %d, ours %d; differing Works: %d\n\n| cases | class |\n|---|---|\n", rep.Works["karmada"], rep.Works["ours"], len(rep.Differences))
	for _, s := range sigs {
		minimal := ""
		if m := rep.Minimal[s]; m != "" {
			minimal = " (minimal case: `minimal/" + m + "`)"
		}
		fmt.Fprintf(&md, "| %d | `%s`%s |\n", rep.Classes[s], s, minimal)
	}
	if err := writeFile(dir, "summary.md", []byte(md.String())); err != nil {
		return err
	}
	for _, d := range rep.Differences {
		if c := all[d.Case]; c != nil {
			if err := writeCase(filepath.Join(dir, "cases", fmt.Sprintf("case-%d", d.Case)), c, stored[d.Case], d, karmada, ours); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(os.Stderr, "report: %s\n", filepath.Join(dir, "summary.md"))
	fmt.Fprint(os.Stderr, md.String())
	return nil
}

// writeCase writes c's inputs in the golden layout (binding.yaml, template.yaml as stored,
// policies.yaml, customizations.yaml, clusters.yaml) and both controllers' Works of d's
// cluster (karmada-<cluster>.yaml, ours-<cluster>.yaml; a missing file: no Work).
func writeCase(dir string, c *Case, stored *unstructured.Unstructured, d Difference, karmada, ours Works) error {
	if stored == nil {
		stored = c.Template
	}
	files := map[string][]*unstructured.Unstructured{
		"binding.yaml": {c.Binding}, "template.yaml": {withoutManagedFields(stored)},
		"policies.yaml": c.Policies, "customizations.yaml": c.Customizations, "clusters.yaml": clusterObjects(),
	}
	if c.Webhooks != nil {
		// Not part of the golden layout: the table has no webhook server.
		files["webhooks.yaml"] = []*unstructured.Unstructured{c.Webhooks}
	}
	for name, objs := range files {
		if len(objs) == 0 {
			continue
		}
		data, err := yamlDocs(objs)
		if err != nil {
			return err
		}
		if err := writeFile(dir, name, data); err != nil {
			return err
		}
	}
	for who, works := range map[string]Works{"karmada": karmada, "ours": ours} {
		w, ok := works[d.Work]
		if !ok {
			continue
		}
		data, err := yaml.Marshal(w)
		if err != nil {
			return err
		}
		if err := writeFile(dir, who+"-"+d.Cluster+".yaml", data); err != nil {
			return err
		}
	}
	return nil
}

func withoutManagedFields(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	u = u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	return u
}

func yamlDocs(objs []*unstructured.Unstructured) ([]byte, error) {
	var parts []string
	for _, o := range objs {
		if o == nil {
			continue
		}
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		parts = append(parts, string(data))
	}
	return []byte(strings.Join(parts, "---\n")), nil
}
