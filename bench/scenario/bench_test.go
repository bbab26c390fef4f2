// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/report"
)

func TestKarmadaSyncsAsManyBindingsAtOnceAsOursAndExtraFlagsComeLast(t *testing.T) {
	want := []string{"--controllers=binding", "--kube-api-qps=5000", "--kube-api-burst=10000", "--concurrent-resourcebinding-syncs=5"}
	if got := karmadaArgs(nil, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("karmadaArgs with ours' defaults = %q, want %q", got, want)
	}
	got := karmadaArgs([]string{"--concurrent-resourcebinding-syncs", "12"}, []string{"--v=4"})
	if controller.Flag(got, "concurrent-resourcebinding-syncs") != "12" || got[len(got)-1] != "--v=4" {
		t.Errorf("karmadaArgs with ours at 12 and --v=4 extra = %q", got)
	}
}

// --ours-args go to ours alone, after --manager-args, and Karmada's concurrency follows
// them; Karmada serves /healthz alone and names its controller binding-controller.
// Without a Karmada binary ours runs alone, or beside itself with --versus's flags.
func TestSides(t *testing.T) {
	o, _, err := parseOptions("vs-karmada", []string{"--manager-args", "--concurrent-resourcebinding-syncs=12",
		"--ours-args", "--work-ledger-checkpoint-interval=30s --v=2"})
	if err != nil {
		t.Fatal(err)
	}
	sides := o.sides("/bin/ours", &karmadaSource{Binary: "/bin/k"})
	us, karmada := sides[0], sides[1]
	if want := []string{"--concurrent-resourcebinding-syncs=12", "--work-ledger-checkpoint-interval=30s", "--v=2"}; !reflect.DeepEqual(us.spec.Args, want) {
		t.Errorf("ours' args %q, want %q", us.spec.Args, want)
	}
	if controller.Flag(karmada.spec.Args, "concurrent-resourcebinding-syncs") != "12" || controller.Flag(karmada.spec.Args, "v") != "" {
		t.Errorf("Karmada's args %q: 12 syncs at once, and none of --ours-args", karmada.spec.Args)
	}
	if karmada.spec.ReadyPath != "/healthz" || karmada.reconciler != "binding-controller" || us.reconciler != "resourcebinding" {
		t.Errorf("sides %+v", sides)
	}
	if alone := o.sides("/bin/ours", nil); len(alone) != 1 || alone[0].spec.Label != "ours" {
		t.Errorf("without Karmada's binary: %+v", alone)
	}
	o.versus = "backoff=--watch-works=false"
	if two := o.sides("/bin/ours", nil); len(two) != 2 || two[1].spec.Label != "backoff" || two[1].reconciler != "resourcebinding" ||
		controller.Flag(two[1].spec.Args, "watch-works") != "false" || controller.Flag(two[0].spec.Args, "watch-works") != "" {
		t.Errorf("--versus: %+v", two)
	}
}

// The table has a row per figure under its section, both values and their ratio; a
// verb neither side used has no row, a phase a side did not get to is n/a, and so is
// every figure of a propagation that timed out: a partial fleet compares with nothing.
func TestFiguresCompareBothSidesFigureByFigure(t *testing.T) {
	o, _, err := parseOptions("vs-karmada", []string{"--bindings", "10", "--clusters", "2", "--fresh-changes", "2"})
	if err != nil {
		t.Fatal(err)
	}
	us := &result{Label: "ours",
		Propagation: propagation{Elapsed: 2 * time.Second, WorksPerSec: 10, CPUSeconds: 0.2, Requests: audit.Counts{"create works.work.karmada.io": 20}},
		Idle:        memory{RSS: 40 << 20}, Current: memory{RSS: 40<<20 + 20<<10},
		Restart:  &phase{LastRequest: time.Second, Requests: audit.Counts{"list works.work.karmada.io": 1, "watch works.work.karmada.io": 1}},
		Recovery: []*recoveries{{P50Ms: 50, MaxMs: 60}},
		Fresh:    &freshChanges{P50: 100 * time.Millisecond, P99: 300 * time.Millisecond, Max: 300 * time.Millisecond}}
	karmada := &result{Label: "Karmada", Propagation: propagation{CPUSeconds: 0.8, Requests: audit.Counts{"create works.work.karmada.io": 20}},
		Idle: memory{RSS: 80 << 20}, Current: memory{RSS: 80<<20 + 80<<10},
		Fresh: &freshChanges{P50: 400 * time.Millisecond, P99: 1200 * time.Millisecond, Max: 1500 * time.Millisecond}}
	rep := &benchReport{Results: []*result{us, karmada}}
	rows := rep.figures(o)
	find := func(section, name string) report.Figure {
		for _, r := range rows.List {
			if strings.HasPrefix(r.Section, section) && r.Name == name {
				return r
			}
		}
		t.Fatalf("no row %q in %+v", name, rows.List)
		return report.Figure{}
	}
	for _, c := range []struct {
		section, name string
		want          map[string]string
	}{
		{"initial", "controller CPU", map[string]string{"ours": "200ms", "Karmada": "800ms", "ours ÷ Karmada": "0.25×"}},
		{"memory", "growth per Work over idle", map[string]string{"ours": "1 KiB", "Karmada": "4 KiB", "ours ÷ Karmada": "0.25×"}},
		{"restart", "watch", map[string]string{"ours": "1", "Karmada": "n/a", "ours ÷ Karmada": "n/a"}},
		{"a second restart", "p50", map[string]string{"ours": "100ms", "Karmada": "400ms", "ours ÷ Karmada": "0.25×"}},
		{"recovery", "blocked 10s: median", map[string]string{"ours": "50ms", "Karmada": "n/a", "ours ÷ Karmada": "n/a"}},
	} {
		if got := find(c.section, c.name).Values; !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q = %v, want %v", c.section, c.name, got, c.want)
		}
	}
	if r := find("initial", "Work requests per new Work (audit)"); r.Result["ours"] != "pass" || r.Result["Karmada"] != "pass" {
		t.Errorf("Work requests per new Work: %+v, both exactly 1", r)
	}
	for _, r := range rows.List {
		if strings.HasPrefix(r.Section, "restart") && (r.Name == "get" || r.Name == "create") {
			t.Errorf("row %q though neither restart made such a request", r.Name)
		}
	}
	karmada.Propagation.TimedOut = true
	for _, r := range rep.figures(o).List[:8] {
		if r.Values["Karmada"] != "n/a" {
			t.Errorf("row %q of a timed-out propagation = %v, want n/a", r.Name, r.Values)
		}
	}
	var out bytes.Buffer
	rows.Table().Print(&out)
	lines := strings.Split(out.String(), "\n")
	if !strings.HasPrefix(lines[0], "figure") || !strings.Contains(lines[0], "ours ÷ Karmada") ||
		!strings.HasPrefix(lines[2], "— initial propagation: 10 bindings × 2 clusters = 20 Works") {
		t.Errorf("table starts\n%s", strings.Join(lines[:3], "\n"))
	}
}
