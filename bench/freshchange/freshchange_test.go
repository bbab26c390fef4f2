// SPDX-License-Identifier: Apache-2.0

package freshchange

import (
	"testing"
	"time"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// A changed binding counts once every one of its Works is at a newer generation, from
// the last of them; a new one once every Work exists. The percentiles are nearest rank,
// and a change never written is the longest and an error.
func TestLatencyIsToTheLastWorkWrittenAndPercentilesAreNearestRank(t *testing.T) {
	sent := time.Now()
	states := map[string]*localplane.WorkState{
		"a/w": {Generation: 2, GenerationAt: sent.Add(30 * time.Millisecond)},
		"b/w": {Generation: 3, GenerationAt: sent.Add(70 * time.Millisecond)},
		"c/w": {Generation: 1, FirstSeen: sent.Add(10 * time.Millisecond)},
	}
	get := func(k string) *localplane.WorkState {
		if st := states[k]; st != nil {
			return st
		}
		return &localplane.WorkState{}
	}
	changed := Change{keys: []string{"a/w", "b/w"}, before: map[string]int64{"a/w": 1, "b/w": 2}, sent: sent}
	if l, ok := changed.latency(get); !ok || l != 70*time.Millisecond {
		t.Errorf("changed binding: latency %s, %v; want 70ms from its last Work", l, ok)
	}
	unchanged := Change{keys: []string{"a/w", "b/w"}, before: map[string]int64{"a/w": 1, "b/w": 3}, sent: sent}
	if _, ok := unchanged.latency(get); ok {
		t.Error("a binding one of whose Works is still at its old generation counts as written")
	}
	created := Change{keys: []string{"c/w"}, sent: sent}
	if l, ok := created.latency(get); !ok || l != 10*time.Millisecond {
		t.Errorf("new binding: latency %s, %v; want 10ms", l, ok)
	}
	r := &Result{Changes: []Change{changed, created, created}}
	r.settle(get)
	if r.P50 != 10*time.Millisecond || r.P99 != 70*time.Millisecond || r.Max != 70*time.Millisecond || r.Error != "" {
		t.Errorf("p50 %s, p99 %s, max %s, error %q; want 10ms, 70ms, 70ms, none", r.P50, r.P99, r.Max, r.Error)
	}
	r = &Result{Changes: []Change{created, unchanged}}
	r.settle(get)
	if r.Changes[1].Latency != -1 || r.Error == "" || r.P50 != 10*time.Millisecond {
		t.Errorf("with a change never written: %+v, p50 %s, error %q", r.Changes[1], r.P50, r.Error)
	}
}
