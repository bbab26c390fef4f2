// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/benchkit"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

// targetLuaCPURatio bounds the controller's CPU per Work of the Lua-revised kind ÷ that of
// the native kind (the "Lua adds at most 10%").
const targetLuaCPURatio = 1.10

// interpreterReport is the interpreter scenario: the same load of a native Deployment and
// of a custom kind whose replicas a ResourceInterpreterCustomization's Lua revises, on
// planes alike but for the templates' kind, alternating (ABBA) so that a machine getting
// busier or quieter weighs on both alike.
type interpreterReport struct {
	*session
	Native loadSpec `json:"native"`
	Lua    loadSpec `json:"lua"`
	// Script is the customization's ReviseReplica.
	Script string `json:"script"`
	// Runs are every run by controller, in the order they ran.
	Runs    map[string][]*runResult `json:"runs"`
	Figures []figure                `json:"figures"`
	Notes   []string                `json:"notes"`
	// Finished is when the scenario ended.
	Finished time.Time `json:"finished"`
}

func interpreterLoads(bindings, clusters int) (native, lua loadSpec) {
	native = loadSpec{Name: "interpreter-native", Bindings: bindings, Clusters: clusters, PerBinding: clusters, Interpreted: true, Kind: "Deployment"}
	lua = native
	lua.Name, lua.Kind = "interpreter-lua", benchkit.LuaKind
	return native, lua
}

// interpreterScenario runs the native and the Lua load rounds times each per controller.
func (p *propagation) interpreterScenario(ctx context.Context, specs []benchkit.ControllerSpec, bindings, clusters, rounds int) (*interpreterReport, error) {
	native, lua := interpreterLoads(bindings, clusters)
	rep := &interpreterReport{session: p.s, Native: native, Lua: lua, Script: benchkit.LuaReviseReplica, Runs: map[string][]*runResult{}}
	for i := 0; i < rounds; i++ {
		order := []loadSpec{native, lua}
		if i%2 == 1 {
			order = []loadSpec{lua, native}
		}
		for _, sp := range specs {
			for _, l := range order {
				r, err := p.controllerRun(ctx, sp, l, false)
				if err != nil {
					return nil, err
				}
				rep.Runs[sp.Label] = append(rep.Runs[sp.Label], r)
			}
		}
	}
	rep.Finished = time.Now()
	return rep, nil
}

// checkShares reads the first and the last Work of keys: each must carry its cluster's
// share, one replica, as the bench's bindings assign them — for the Lua kind, proof that
// the customization's script ran; without it the template's count would be there.
func checkShares(ctx context.Context, c client.Client, keys []string) error {
	for _, key := range []string{keys[0], keys[len(keys)-1]} {
		ns, name, _ := strings.Cut(key, "/")
		w := &workv1alpha1.Work{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, w); err != nil {
			return fmt.Errorf("reading Work %s: %w", key, err)
		}
		if len(w.Spec.Workload.Manifests) != 1 {
			return fmt.Errorf("work %s has %d manifests, want 1", key, len(w.Spec.Workload.Manifests))
		}
		var obj map[string]any
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj); err != nil {
			return fmt.Errorf("work %s: %w", key, err)
		}
		if got, _, _ := unstructured.NestedFieldNoCopy(obj, "spec", "replicas"); got != float64(1) {
			return fmt.Errorf("work %s: %v %v has spec.replicas %v, want its cluster's share 1", key, obj["kind"], name, got)
		}
	}
	return nil
}

// cpuPer1000 is the controller's CPU-seconds per 1000 Works of one run.
func cpuPer1000(r *runResult) float64 { return r.CPUSeconds * 1000 / float64(r.Seen) }

func (rep *interpreterReport) table(specs []benchkit.ControllerSpec) *benchkit.Table {
	b := &tableBuilder{}
	for _, s := range specs {
		b.labels = append(b.labels, s.Label)
	}
	per := func(fn func(native, lua []*runResult) (string, string)) cells {
		c := cells{values: make([]string, len(b.labels)), verdicts: make([]string, len(b.labels))}
		for i, l := range b.labels {
			var native, lua []*runResult
			for _, r := range rep.Runs[l] {
				if r.TimedOut {
					continue
				}
				if r.Load.lua() {
					lua = append(lua, r)
				} else {
					native = append(native, r)
				}
			}
			if len(native) == 0 || len(lua) == 0 {
				c.values[i] = "n/a"
				continue
			}
			c.values[i], c.verdicts[i] = fn(native, lua)
		}
		return c
	}
	series := func(rs []*runResult, f func(*runResult) float64, format string) string {
		parts := make([]string, len(rs))
		for i, r := range rs {
			parts[i] = fmt.Sprintf(format, f(r))
		}
		return strings.Join(parts, ", ")
	}
	medianOf := func(rs []*runResult, f func(*runResult) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		return median(xs)
	}
	worksPerSec := func(r *runResult) float64 { return r.WorksPerSec }
	b.sectionRow(fmt.Sprintf("interpreter: %s each of a native Deployment and of a %s revised by a customization's Lua, alternating", rep.Native, benchkit.LuaKind))
	b.row("controller CPU-seconds per 1000 Works, native (each run)", info(per(func(native, _ []*runResult) (string, string) {
		return series(native, cpuPer1000, "%.2f"), ""
	})), "")
	b.row("controller CPU-seconds per 1000 Works, Lua (each run)", info(per(func(_, lua []*runResult) (string, string) {
		return series(lua, cpuPer1000, "%.2f"), ""
	})), "")
	b.row("controller CPU-seconds per 1000 Works, native → Lua (medians)", info(per(func(native, lua []*runResult) (string, string) {
		return fmt.Sprintf("%.2f → %.2f", medianOf(native, cpuPer1000), medianOf(lua, cpuPer1000)), ""
	})), "")
	b.row("Works/s, native → Lua (medians)", info(per(func(native, lua []*runResult) (string, string) {
		return rate(medianOf(native, worksPerSec)) + " → " + rate(medianOf(lua, worksPerSec)), ""
	})), "")
	b.row("Lua ÷ native CPU per Work (medians)", per(func(native, lua []*runResult) (string, string) {
		ratio := medianOf(lua, cpuPer1000) / medianOf(native, cpuPer1000)
		return fmt.Sprintf("%.3f", ratio), benchkit.Verdict(ratio <= targetLuaCPURatio)
	}), fmt.Sprintf("≤ %.2f", targetLuaCPURatio))
	rep.Figures = b.figures
	return figureTable(b.labels, rep.Figures)
}

func interpreterNotes() []string {
	return []string{
		"both loads run on fresh control planes with the test workload CRDs (test/testdata/workload-crds) and the same ResourceInterpreterCustomization installed; only the templates' kind differs",
		"the " + benchkit.LuaKind + " templates carry the Deployment's body as the API server defaults it (a dry-run create), so both kinds' Works carry the same manifest; every binding is a workload (spec.replicas > 0), so the interpreter is asked for both kinds and only the " + benchkit.LuaKind + "'s is revised by the script",
		"each run's canary is of the load's kind, so the template kind's informer is synced before the clock starts",
		"CPU = the controller process's user+system time from the first binding to quiet, ÷ Works; the first and last Work of each run are read to check they carry their cluster's share (1 replica; the template has one per cluster)",
		"rounds alternate native, Lua / Lua, native (ABBA); the ratio is of the medians",
	}
}

// printInterpreter prints the scenario's table and notes and writes its JSON.
func printInterpreter(rep *interpreterReport, specs []benchkit.ControllerSpec, jsonPath string) error {
	rep.Notes = interpreterNotes()
	return benchkit.PrintResults("interpreter", rep.table(specs), rep.Notes, rep, jsonPath)
}
