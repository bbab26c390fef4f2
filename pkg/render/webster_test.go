// SPDX-License-Identifier: Apache-2.0

package render

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// FNV-1a 32 parity of these UIDs: odd ranks tied names descending, even ascending.
const (
	oddUID  types.UID = "7c7c7c7c-0000-4000-8000-000000000004"
	evenUID types.UID = "7c7c7c7c-0000-4000-8000-000000000005"
)

func TestWebsterShares(t *testing.T) {
	for _, tc := range []struct {
		name    string
		total   int32
		targets []Target
		uid     types.UID
		want    map[string]int64
	}{
		{"fewer seats win a tie, whichever way names rank (ascending)", 3,
			[]Target{{"member1", 1}, {"member2", 1}, {"member3", 3}}, evenUID,
			map[string]int64{"member1": 1, "member2": 1, "member3": 1}},
		{"fewer seats win a tie, whichever way names rank (descending)", 3,
			[]Target{{"member1", 1}, {"member2", 1}, {"member3", 3}}, oddUID,
			map[string]int64{"member1": 1, "member2": 1, "member3": 1}},
		{"odd UID hash gives the last tie to the larger name", 7,
			[]Target{{"member3", 1}, {"member4", 1}}, oddUID,
			map[string]int64{"member3": 3, "member4": 4}},
		{"even UID hash gives the last tie to the smaller name", 7,
			[]Target{{"member3", 1}, {"member4", 1}}, evenUID,
			map[string]int64{"member3": 4, "member4": 3}},
		{"no UID ranks names ascending", 1,
			[]Target{{"b", 1}, {"a", 1}}, "",
			map[string]int64{"a": 1, "b": 0}},
		{"a cluster without replicas gets none", 5,
			[]Target{{"member1", 2}, {"member2", 0}}, oddUID,
			map[string]int64{"member1": 5, "member2": 0}},
		{"Webster, not largest remainder", 6,
			[]Target{{"member1", 2}, {"member2", 1}}, oddUID,
			map[string]int64{"member1": 4, "member2": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := websterShares(tc.total, tc.targets, tc.uid)
			if !ok {
				t.Fatal("websterShares divided nothing")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("shares (-want +got):\n%s", diff)
			}
		})
	}
}

// Karmada leaves a Job's completions as the template has them when no cluster has replicas.
func TestWebsterSharesWithoutWeight(t *testing.T) {
	if shares, ok := websterShares(4, []Target{{"member1", 0}, {"member2", 0}}, oddUID); ok {
		t.Errorf("got shares %v, want none", shares)
	}
}

// Handing out the seats above a divisor at once must give exactly what seat-by-seat
// allocation gives, ties included, or large Jobs would split unlike Karmada's.
func TestWebsterSharesMatchesSeatBySeat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		n := 1 + rng.IntN(6)
		targets := make([]Target, n)
		for j := range targets {
			targets[j] = Target{Cluster: fmt.Sprintf("member%d", j), Replicas: int32(rng.IntN(8))}
			if rng.IntN(20) == 0 {
				targets[j].Replicas = -int32(rng.IntN(3))
			}
		}
		total := int32(rng.IntN(200))
		uid := []types.UID{oddUID, evenUID, ""}[rng.IntN(3)]
		got, ok := websterShares(total, targets, uid)
		if !ok {
			continue
		}
		if diff := cmp.Diff(seatBySeat(total, targets, uid), got); diff != "" {
			t.Fatalf("%d seats over %v (uid %q) (-seat by seat +got):\n%s", total, targets, uid, diff)
		}
	}
}

func seatBySeat(total int32, targets []Target, uid types.UID) map[string]int64 {
	q := &websterQueue{namesDescending: namesDescending(uid)}
	for _, t := range targets {
		q.parties = append(q.parties, party{name: t.Cluster, votes: int64(t.Replicas)})
	}
	heap.Init(q)
	for ; total > 0; total-- {
		q.parties[0].seats++
		heap.Fix(q, 0)
	}
	shares := map[string]int64{}
	for _, p := range q.parties {
		shares[p.name] = int64(p.seats)
	}
	return shares
}

func BenchmarkWebsterSharesLargeJob(b *testing.B) {
	targets := make([]Target, 50)
	for i := range targets {
		targets[i] = Target{Cluster: fmt.Sprintf("member%d", i), Replicas: int32(1 + i%7)}
	}
	for b.Loop() {
		websterShares(100000, targets, oddUID)
	}
}
