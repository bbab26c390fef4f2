// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The ceiling's concurrency follows the manager's own when not given, and unknown
// scenarios (among them those dropped: urgent) are refused.
func TestParseOptions(t *testing.T) {
	o, _, err := parseOptions([]string{"--scenarios", "initial, scale", "--manager-args", "--cluster-sync-concurrency=16"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.want["initial"] || !o.want["scale"] || o.want["resync"] || o.ceilingConcurrency != 5*16 {
		t.Errorf("want %v, ceiling concurrency %d", o.want, o.ceilingConcurrency)
	}
	if _, _, err := parseOptions([]string{"--scenarios", "urgent"}); err == nil || !strings.Contains(err.Error(), "urgent") {
		t.Errorf("--scenarios urgent: %v, want an unknown scenario", err)
	}
	if _, _, err := parseOptions([]string{"--bindings", "0"}); err == nil {
		t.Error("--bindings 0 accepted")
	}
}

func TestNarrowLoadsTakeTheirClustersInTurn(t *testing.T) {
	l := loadSpec{Bindings: 3, Clusters: 3, PerBinding: 2}
	if got, want := l.clustersOf(2), []string{"member3", "member1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("clustersOf(2) = %v, want %v", got, want)
	}
	if got := (loadSpec{Clusters: 2, PerBinding: 5}).clustersOf(7); len(got) != 2 {
		t.Errorf("a binding of every cluster targets %v", got)
	}
}

func TestDurationPercentileIsNearestRank(t *testing.T) {
	var sorted []time.Duration
	for i := 1; i <= 100; i++ {
		sorted = append(sorted, time.Duration(i))
	}
	if p50, p99 := percentile(sorted, 0.50), percentile(sorted, 0.99); p50 != 50 || p99 != 99 {
		t.Errorf("p50 %d, p99 %d; want 50, 99", p50, p99)
	}
	if percentile(nil, 0.5) != 0 || percentile(sorted[:1], 0.99) != 1 {
		t.Error("percentile of none or one")
	}
}

// The steady rate leaves out the first and last tenth: 10 items a second in between.
func TestSteadyRate(t *testing.T) {
	start := time.Now()
	var times []time.Time
	for i := range 20 {
		times = append(times, start.Add(time.Duration(i)*100*time.Millisecond))
	}
	if got := steadyRate(times); got < 9.99 || got > 10.01 {
		t.Errorf("steadyRate = %v, want 10", got)
	}
	if got := steadyRate(times[:9]); !math.IsNaN(got) {
		t.Errorf("steadyRate of 9 items = %v, want NaN", got)
	}
}
