// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/workload"
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
	*session.Session
	Native loadSpec `json:"native"`
	Lua    loadSpec `json:"lua"`
	// Script is the customization's ReviseReplica.
	Script string `json:"script"`
	// Runs are every run by controller, in the order they ran.
	Runs     map[string][]*runResult `json:"runs"`
	Figures  []report.Figure         `json:"figures"`
	Notes    []string                `json:"notes"`
	Finished time.Time               `json:"finished"`
	label    string
}

// interpreterScenario runs the native and the Lua load rounds times each.
func (p *propagation) interpreterScenario(ctx context.Context, bindings, clusters, rounds int) (*interpreterReport, error) {
	native := loadSpec{Name: "interpreter-native", Bindings: bindings, Clusters: clusters, PerBinding: clusters, Interpreted: true, Kind: "Deployment"}
	lua := native
	lua.Name, lua.Kind = "interpreter-lua", workload.LuaKind
	rep := &interpreterReport{Session: p.s, Native: native, Lua: lua, Script: workload.LuaReviseReplica, Runs: map[string][]*runResult{}, label: p.spec.Label}
	for i := 0; i < rounds; i++ {
		order := []loadSpec{native, lua}
		if i%2 == 1 {
			order = []loadSpec{lua, native}
		}
		for _, l := range order {
			r, err := p.controllerRun(ctx, l, false)
			if err != nil {
				return nil, err
			}
			rep.Runs[p.spec.Label] = append(rep.Runs[p.spec.Label], r)
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

// printInterpreter prints the scenario's table and notes and writes its JSON.
func printInterpreter(rep *interpreterReport, jsonPath string) error {
	var native, lua []*runResult
	for _, r := range rep.Runs[rep.label] {
		if r.TimedOut {
			continue
		}
		if r.Load.lua() {
			lua = append(lua, r)
		} else {
			native = append(native, r)
		}
	}
	f := &figures{Figures: report.Figures{Labels: []string{rep.label}}}
	f.Section(fmt.Sprintf("interpreter: %s each of a native Deployment and of a %s revised by a customization's Lua, alternating", rep.Native, workload.LuaKind))
	if len(native) == 0 || len(lua) == 0 {
		f.info("controller CPU-seconds per 1000 Works, native → Lua (medians)", "n/a")
	} else {
		cpu := func(r *runResult) float64 { return r.CPUSeconds * 1000 / float64(r.Seen) }
		worksPerSec := func(r *runResult) float64 { return r.WorksPerSec }
		f.info("controller CPU-seconds per 1000 Works, native (each run)", series(native, cpu))
		f.info("controller CPU-seconds per 1000 Works, Lua (each run)", series(lua, cpu))
		f.info("controller CPU-seconds per 1000 Works, native → Lua (medians)", fmt.Sprintf("%.2f → %.2f", medianOf(native, cpu), medianOf(lua, cpu)))
		f.info("Works/s, native → Lua (medians)", report.Rate(medianOf(native, worksPerSec))+" → "+report.Rate(medianOf(lua, worksPerSec)))
		ratio := medianOf(lua, cpu) / medianOf(native, cpu)
		f.held("Lua ÷ native CPU per Work (medians)", fmt.Sprintf("%.3f", ratio), fmt.Sprintf("≤ %.2f", targetLuaCPURatio), ratio <= targetLuaCPURatio)
	}
	rep.Figures = f.List
	rep.Notes = []string{
		"both loads run on fresh control planes with the test workload CRDs (test/testdata/workload-crds) and the same ResourceInterpreterCustomization installed; only the templates' kind differs",
		"the " + workload.LuaKind + " templates carry the Deployment's body as the API server defaults it (a dry-run create), so both kinds' Works carry the same manifest; every binding is a workload (spec.replicas > 0), so the interpreter is asked for both kinds and only the " + workload.LuaKind + "'s is revised by the script",
		"each run's canary is of the load's kind, so the template kind's informer is synced before the clock starts",
		"CPU = the controller process's user+system time from the first binding to quiet, ÷ Works; the first and last Work of each run are read to check they carry their cluster's share (1 replica; the template has one per cluster)",
		"rounds alternate native, Lua / Lua, native (ABBA); the ratio is of the medians",
	}
	return report.Print("interpreter", f.Table(), rep.Notes, rep, jsonPath)
}

func series(rs []*runResult, v func(*runResult) float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%.2f", v(r))
	}
	return strings.Join(parts, ", ")
}

func medianOf(rs []*runResult, v func(*runResult) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = v(r)
	}
	return report.Median(xs)
}
