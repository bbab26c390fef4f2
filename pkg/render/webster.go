// SPDX-License-Identifier: Apache-2.0

package render

import (
	"container/heap"
	"hash/fnv"

	"k8s.io/apimachinery/pkg/types"
)

// websterShares splits total seats over targets by their replicas with the Webster
// (Sainte-Laguë) method, seat by seat, as Karmada divides a Job's completions
// (pkg/util/helper: SpreadReplicasByTargetClusters, AllocateWebsterSeats). Every cluster
// has a share, 0 included. ok is false when the replicas sum to zero: Karmada then
// divides nothing and the template's value stands.
//
// Equal priorities go to the cluster with fewer seats, then by name; whether names rank
// ascending or descending is fixed by the template's UID (tieBreakerByUID), so one Job
// always splits the same way while different Jobs do not all favour the same cluster.
func websterShares(total int32, targets []Target, uid types.UID) (shares map[string]int64, ok bool) {
	var sum int64
	q := &websterQueue{namesDescending: namesDescending(uid)}
	for _, t := range targets {
		sum += int64(t.Replicas)
		q.parties = append(q.parties, party{name: t.Cluster, votes: int64(t.Replicas)})
	}
	if sum == 0 || len(q.parties) == 0 {
		return nil, false
	}
	total -= q.seatsAboveDivisor(total)
	heap.Init(q)
	for ; total > 0; total-- {
		q.parties[0].seats++
		heap.Fix(q, 0)
	}
	shares = make(map[string]int64, len(q.parties))
	for _, p := range q.parties {
		shares[p.name] = int64(p.seats)
	}
	return shares, true
}

// namesDescending reports whether ties rank cluster names descending for this template:
// Karmada takes the parity of the FNV-1a hash of the UID, and ascends for an empty UID.
func namesDescending(uid types.UID) bool {
	if uid == "" {
		return false
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	return h.Sum32()&1 == 1
}

// seatsAboveDivisor hands out at once the seats that seat-by-seat allocation would give
// first, so a Job of a million completions costs no million heap steps per cluster. Those
// are all seats whose priority exceeds a divisor d: any seat ranked above one of them has
// a priority at least as high, so they are the head of the seat sequence as long as there
// are no more of them than total. d = (sum of positive votes) / 2(total-parties) keeps
// them below total. It returns how many seats it gave (0 when it cannot be sure).
func (q *websterQueue) seatsAboveDivisor(total int32) int32 {
	n := int32(len(q.parties))
	// Beyond 2^30 seats Karmada's int32 arithmetic wraps; then only seat by seat agrees.
	if total <= n || total >= 1<<30 {
		return 0
	}
	var positive int64
	for _, p := range q.parties {
		if p.votes > 0 {
			positive += p.votes
		}
	}
	d := float64(positive) / float64(2*(total-n))
	var given int64
	for i := range q.parties {
		p := &q.parties[i]
		if p.votes <= 0 {
			continue
		}
		// The estimate is off by rounding at most; exact float comparisons settle it.
		k := int32(max(0, (float64(p.votes)/d-1)/2))
		for k > 0 && priority(p.votes, k-1) <= d {
			k--
		}
		for priority(p.votes, k) > d {
			k++
		}
		p.seats = k
		given += int64(k)
	}
	if given > int64(total) {
		// Rounding pushed too many seats over d: fall back to seat by seat.
		for i := range q.parties {
			q.parties[i].seats = 0
		}
		return 0
	}
	return int32(given)
}

// priority is a party's claim to its next seat. Computed as Karmada does (int32 seats,
// float64 division), so its exact ties, and so its tie-breaks, are ours too.
func priority(votes int64, seats int32) float64 {
	return float64(votes) / float64(2*seats+1)
}

type party struct {
	name  string
	votes int64
	seats int32
}

// websterQueue keeps the party owed the next seat on top. Its order is total (names are
// unique), so the seat sequence does not depend on how the heap is arranged.
type websterQueue struct {
	parties         []party
	namesDescending bool
}

func (q *websterQueue) Len() int      { return len(q.parties) }
func (q *websterQueue) Swap(i, j int) { q.parties[i], q.parties[j] = q.parties[j], q.parties[i] }
func (q *websterQueue) Push(x any)    { q.parties = append(q.parties, x.(party)) }
func (q *websterQueue) Pop() any {
	last := q.parties[len(q.parties)-1]
	q.parties = q.parties[:len(q.parties)-1]
	return last
}

func (q *websterQueue) Less(i, j int) bool {
	a, b := q.parties[i], q.parties[j]
	pa, pb := priority(a.votes, a.seats), priority(b.votes, b.seats)
	if pa != pb {
		return pa > pb
	}
	if a.seats != b.seats {
		return a.seats < b.seats
	}
	if q.namesDescending {
		return a.name > b.name
	}
	return a.name < b.name
}
