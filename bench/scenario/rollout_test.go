// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/binding-controller/binding-controller/bench/workload"
)

// A binding's two stages: the change at 0; stage 1's one Work written at 1s, reported
// Healthy at 2s; stage 2's two Works written at 10s and 10.5s (the controller acting on
// stage 1 having been Healthy for the 5s soak 3s late), Healthy at 11s and 12s; the
// rollout seen Complete at 18s (1s after the soak).
func TestSpansSplitAStageIntoTheControllersShareAndTheExecutionSides(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	written := [][]time.Time{{at(1)}, {at(10.5), at(10)}}
	healthy := [][]time.Time{{at(2)}, {at(11), at(12)}}
	got := spans(t0, at(18), written, healthy)
	if len(got) != 2 {
		t.Fatalf("spans = %v, want two stages", got)
	}
	for i, want := range [][4]float64{
		{10 - 5, 1 + 3, 3, 1},    // stage 1: 0 → 10; written at 1; Healthy at 2, +5 = 7, acted on at 10
		{8 - 5, 0.5 + 1, 1, 1.5}, // stage 2: 10 → 18; last written at 10.5; Healthy at 12, +5 = 17, Complete at 18
	} {
		if s := got[i].shares(5 * time.Second); s != want {
			t.Errorf("stage %d: (stage−soak, controller, advance, execution) = %v, want %v", i+1, s, want)
		}
	}
	if got := spans(t0, time.Time{}, written, healthy); got != nil {
		t.Errorf("a rollout never seen Complete is timed: %v", got)
	}
	healthy[1][0] = time.Time{}
	if got := spans(t0, at(18), written, healthy); got != nil {
		t.Errorf("a cluster never reported Healthy is timed: %v", got)
	}
}

func TestRecorderKeepsWhenAValueWasFirstSeen(t *testing.T) {
	r := newRecorder()
	start := time.Now()
	r.see(r.complete, "web", "web-1")
	first := r.complete["web"].at
	r.see(r.complete, "web", "web-1")
	if r.complete["web"].at != first {
		t.Errorf("seeing the same revision again moved its time")
	}
	if n := r.completedSince(start); n != 1 {
		t.Errorf("completedSince(start) = %d, want 1", n)
	}
	later := time.Now()
	time.Sleep(time.Millisecond)
	r.see(r.complete, "web", "web-2")
	if r.complete["web"].value != "web-2" || !r.complete["web"].at.After(later) {
		t.Errorf("a new revision is not recorded with its own time: %+v", r.complete["web"])
	}
	if n := r.completedSince(later); n != 1 {
		t.Errorf("completedSince(later) = %d, want 1", n)
	}
}

// Ten clusters roll out in stages of 1, 3 and 6; too few for three stages leave the
// empty ones out, and every cluster is in exactly one stage.
func TestRolloutStagesAreACanaryAThirdOfTheRestAndTheRest(t *testing.T) {
	for clusters, want := range map[int][]int{10: {1, 3, 6}, 1: {1}, 2: {1, 1}, 4: {1, 1, 2}, 7: {1, 2, 4}} {
		stages := rolloutStages(clusters)
		sizes := make([]int, len(stages))
		for i, s := range stages {
			sizes[i] = len(s)
		}
		if !reflect.DeepEqual(sizes, want) || !reflect.DeepEqual(slices.Concat(stages...), workload.Members(clusters)) {
			t.Errorf("rolloutStages(%d) = %v, want stages of %v over every member", clusters, stages, want)
		}
	}
}
