// SPDX-License-Identifier: Apache-2.0

package vskarmada

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/freshchange"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
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
	k := karmadaSide("/bin/k", nil, nil)
	if k.spec.ReadyPath != "/healthz" || k.reconciler != "binding-controller" {
		t.Errorf("Karmada's side %+v: it serves /healthz alone and names its controller binding-controller", k)
	}
}

// --ours-args go to ours alone, after --manager-args; Karmada's concurrency follows
// them; a checkpoint interval on ours makes its restart expect a checkpoint, and a
// Karmada given the same flag does not.
func TestOursArgsFollowTheManagerArgsAndOnlyOursCheckpoints(t *testing.T) {
	o, _, err := parseOptions([]string{"--karmada", "/k", "--manager-args", "--concurrent-resourcebinding-syncs=12",
		"--ours-args", "--work-ledger-checkpoint-interval=30s --v=2", "--karmada-args", "--work-ledger-checkpoint-interval=30s"})
	if err != nil {
		t.Fatal(err)
	}
	sides := o.sides("/bin/ours", "/bin/k")
	ours, karmada := sides[0], sides[1]
	if want := []string{"--concurrent-resourcebinding-syncs=12", "--work-ledger-checkpoint-interval=30s", "--v=2"}; !reflect.DeepEqual(ours.spec.Args, want) {
		t.Errorf("ours' args %q, want %q", ours.spec.Args, want)
	}
	if controller.Flag(karmada.spec.Args, "concurrent-resourcebinding-syncs") != "12" || controller.Flag(karmada.spec.Args, "v") != "" {
		t.Errorf("Karmada's args %q: 12 syncs at once, and none of --ours-args", karmada.spec.Args)
	}
	if !ours.checkpoints() || karmada.checkpoints() {
		t.Errorf("checkpoints: ours %v, Karmada %v; want true, false", ours.checkpoints(), karmada.checkpoints())
	}
	if oursSide("/bin/ours", []string{"--work-ledger-checkpoint-interval=0s"}, nil).checkpoints() || oursSide("/bin/ours", nil, nil).checkpoints() {
		t.Error("ours without a checkpoint interval expects a checkpoint")
	}
	if _, _, err := parseOptions([]string{"--karmada", "/k", "--bindings", "10", "--fresh-changes", "11"}); err == nil {
		t.Error("more fresh changes than bindings accepted")
	}
}

func TestValuesAndRatiosPrintInTheirUnits(t *testing.T) {
	for _, c := range []struct {
		unit string
		v    float64
		want string
	}{
		{"s", 12.345, "12.3s"}, {"s", 125, "2m5s"}, {"ms", 0.4567, "0.457 ms"}, {"MiB", 1234.56, "1234.6 MiB"}, {"/s", 812.6, "813/s"},
		{"", 41, "41"}, {"%.2f", 2.345, "2.35"}, {"s", math.NaN(), "n/a"},
	} {
		if got := value(c.unit, c.v); got != c.want {
			t.Errorf("value(%q, %v) = %q, want %q", c.unit, c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		ours, karmada float64
		want          string
	}{{1, 4, "0.25×"}, {30, 10, "3×"}, {0, 7, "0×"}, {1500, 10, "150×"}, {3, 0, "n/a"}, {0, 0, "n/a"}, {math.NaN(), 1, "n/a"}} {
		if got := ratio(float64(newRow("", "", "", c.ours, c.karmada).Ratio)); got != c.want {
			t.Errorf("ratio of %v ÷ %v = %q, want %q", c.ours, c.karmada, got, c.want)
		}
	}
}

// The table has a row per figure under its section, both values and their ratio; a
// verb neither restart used has no row, a phase a controller did not get to is n/a, and
// so is every figure of a propagation that timed out: a partial fleet compares with
// nothing.
func TestFiguresCompareBothControllersFigureByFigure(t *testing.T) {
	o := &options{bindings: 10, clusters: 2, block: 10 * time.Second, samples: 2, fresh: 2, freshInterval: 250 * time.Millisecond}
	fl := fleetSpec{Bindings: 10, Clusters: 2, Works: 20}
	ours := &result{Label: "ours", Works: 20,
		Propagation: propagationResult{Elapsed: 2 * time.Second, WorksPerSec: 10, CPUSeconds: 0.2, Requests: audit.Counts{"create works.work.karmada.io": 20}},
		Memory:      memoryResult{Idle: localplane.Memory{RSS: 40 << 20}, Current: localplane.Memory{RSS: 40<<20 + 20<<10}},
		Restart:     &restartResult{LastRequest: time.Second, Requests: audit.Counts{"list works.work.karmada.io": 1, "watch works.work.karmada.io": 1}},
		Recovery:    &recoveryResult{P50Ms: 50, MaxMs: 60},
		Fresh:       &freshchange.Result{P50: 100 * time.Millisecond, P99: 300 * time.Millisecond, Max: 300 * time.Millisecond}}
	karmada := &result{Label: "karmada", Works: 20, Propagation: propagationResult{CPUSeconds: 0.8},
		Memory: memoryResult{Idle: localplane.Memory{RSS: 80 << 20}, Current: localplane.Memory{RSS: 80<<20 + 80<<10}},
		Fresh:  &freshchange.Result{P50: 400 * time.Millisecond, P99: 1200 * time.Millisecond, Max: 1500 * time.Millisecond}}
	rows := figures(fl, o, ours, karmada)
	find := func(name string) row {
		for _, r := range rows {
			if strings.TrimSpace(r.Name) == name {
				return r
			}
		}
		t.Fatalf("no row %q in %+v", name, rows)
		return row{}
	}
	if r := find("controller CPU"); r.Ours != 0.2 || r.Karmada != 0.8 || r.Ratio != 0.25 {
		t.Errorf("controller CPU row %+v, want 0.2, 0.8, 0.25", r)
	}
	if r := find("growth per Work over idle"); r.Ours != 1 || r.Karmada != 4 || r.Ratio != 0.25 {
		t.Errorf("RSS growth row %+v, want 1 and 4 KiB per Work", r)
	}
	if r := find("change → its last Work rewritten, p50"); r.Ours != 0.1 || r.Karmada != 0.4 || r.Ratio != 0.25 {
		t.Errorf("fresh change p50 row %+v, want 0.1 s, 0.4 s, 0.25", r)
	}
	if r := find("watch"); r.Ours != 1 || !math.IsNaN(float64(r.Karmada)) {
		t.Errorf("watch row %+v, want 1 and n/a for the side with no restart", r)
	}
	for _, r := range rows {
		if n := strings.TrimSpace(r.Name); n == "get" || n == "create" {
			t.Errorf("row %q though neither restart made such a request", n)
		}
	}
	karmada.Propagation.TimedOut = true
	for _, r := range figures(fl, o, ours, karmada)[:8] {
		if !math.IsNaN(float64(r.Karmada)) {
			t.Errorf("row %q of a timed-out propagation = %v, want n/a", r.Name, r.Karmada)
		}
	}
	var out bytes.Buffer
	table(rows).Print(&out)
	lines := strings.Split(out.String(), "\n")
	if !strings.HasPrefix(lines[0], "figure") || !strings.HasSuffix(lines[0], "ours÷Karmada") ||
		!strings.HasPrefix(lines[2], "— initial propagation: 10 bindings × 2 clusters = 20 Works") {
		t.Errorf("table starts\n%s", strings.Join(lines[:3], "\n"))
	}
	if !strings.Contains(out.String(), "every Work exists after") || !strings.Contains(out.String(), "2s") {
		t.Errorf("table lacks the propagation time:\n%s", out.String())
	}
}
