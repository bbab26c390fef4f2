// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"testing"
	"time"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// A change counts once every one of its Works is at a newer generation, from the last
// of them. The percentiles are nearest rank, and a change never written is the longest
// and an error.
func TestAFreshChangeIsTimedToItsLastWorkWritten(t *testing.T) {
	sent := time.Now()
	states := map[string]*localplane.WorkState{
		"a/w": {Generation: 2, GenerationAt: sent.Add(30 * time.Millisecond)},
		"b/w": {Generation: 3, GenerationAt: sent.Add(70 * time.Millisecond)},
		"c/w": {Generation: 2, GenerationAt: sent.Add(10 * time.Millisecond)},
	}
	get := func(k string) *localplane.WorkState {
		if st := states[k]; st != nil {
			return st
		}
		return &localplane.WorkState{}
	}
	two := freshChange{before: map[string]int64{"a/w": 1, "b/w": 2}, sent: sent}
	one := freshChange{before: map[string]int64{"c/w": 1}, sent: sent}
	fc := &freshChanges{Changes: []freshChange{two, one, one}}
	if !fc.settle(get) || fc.Changes[0].Latency != 70*time.Millisecond || fc.P50 != 10*time.Millisecond || fc.P99 != 70*time.Millisecond || fc.Max != 70*time.Millisecond {
		t.Errorf("changes %+v: p50 %s, p99 %s, max %s; want 70ms for the first, and 10ms, 70ms, 70ms", fc.Changes, fc.P50, fc.P99, fc.Max)
	}
	pending := freshChange{before: map[string]int64{"a/w": 1, "b/w": 3}, sent: sent}
	fc = &freshChanges{Changes: []freshChange{one, pending}}
	if fc.settle(get) || fc.Changes[1].Latency != -1 || fc.Error == "" || fc.P50 != 10*time.Millisecond {
		t.Errorf("with a Work still at its old generation: %+v, p50 %s, error %q", fc.Changes, fc.P50, fc.Error)
	}
}

// The changes made from the Works' watch on are those at or after it, a change never
// written the longest of them.
func TestSplitAtTakesTheChangesMadeFromThenOn(t *testing.T) {
	fc := &freshChanges{Changes: []freshChange{
		{At: 250 * time.Millisecond, Latency: 2 * time.Second},
		{At: 500 * time.Millisecond, Latency: 300 * time.Millisecond},
		{At: 750 * time.Millisecond, Latency: 400 * time.Millisecond},
	}}
	fc.splitAt(500 * time.Millisecond)
	if fc.WorksWatchAt != 500*time.Millisecond || fc.AfterWorksWatch != 2 || fc.P99AfterWorksWatch != 400*time.Millisecond {
		t.Errorf("split at 500ms: at %s, %d changes, p99 %s; want 500ms, 2, 400ms", fc.WorksWatchAt, fc.AfterWorksWatch, fc.P99AfterWorksWatch)
	}
	fc.Changes[2].Latency = -1
	if fc.splitAt(0); fc.AfterWorksWatch != 3 || fc.P99AfterWorksWatch < time.Hour {
		t.Errorf("with a change never written: %d changes, p99 %s; want 3 and the longest", fc.AfterWorksWatch, fc.P99AfterWorksWatch)
	}
}
