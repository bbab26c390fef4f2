// SPDX-License-Identifier: Apache-2.0

package ledgercheckpoint

import (
	"errors"
	"math"
	"testing"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"

	"github.com/binding-controller/binding-controller/pkg/workapply"
)

func vouchesOf(n int) []workapply.Vouch {
	out := make([]workapply.Vouch, n)
	for i := range out {
		out[i] = workapply.Vouch{UID: types.UID(uuid.NewString()), Generation: int64(i % 7), Hash: uint64(i) * 0x9e3779b97f4a7c15}
	}
	return out
}

// 45,000 vouches need three shards, each under the API server's 1 MiB limit on a
// ConfigMap's data, and come back whole.
func TestShardsHoldEveryVouchUnderTheConfigMapLimit(t *testing.T) {
	in := vouchesOf(45000)
	in[0].Generation = math.MaxInt64 // the widest varint
	shards := encode(in)
	if len(shards) != 3 {
		t.Fatalf("%d shards, want 3", len(shards))
	}
	got := map[types.UID]workapply.Vouch{}
	for i, s := range shards {
		if len(s) > 1<<20-1024 {
			t.Fatalf("shard %d is %d bytes, over a ConfigMap's 1 MiB", i, len(s))
		}
		if err := decode(s, got); err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
	}
	if len(got) != len(in) {
		t.Fatalf("decoded %d vouches, want %d", len(got), len(in))
	}
	for _, v := range in {
		if got[v.UID] != v {
			t.Fatalf("vouch %+v came back as %+v", v, got[v.UID])
		}
	}
}

// Shards encode in an order of their own, not the ledger's map order, so that a shard
// whose vouches did not change is the same bytes and is not written again.
func TestAnUnchangedShardEncodesToTheSameBytes(t *testing.T) {
	in := vouchesOf(30000)
	reversed := make([]workapply.Vouch, len(in))
	for i, v := range in {
		reversed[len(in)-1-i] = v
	}
	a, b := encode(in), encode(reversed)
	for i := range a {
		if string(a[i]) != string(b[i]) {
			t.Fatalf("shard %d differs with the vouches in another order", i)
		}
	}
}

// A UID that is not a canonical UUID cannot be packed into 16 bytes and back; it is left
// out, and its Work is read on its first sync.
func TestAVouchOfANonCanonicalUIDIsLeftOut(t *testing.T) {
	ok := types.UID(uuid.NewString())
	shards := encode([]workapply.Vouch{{UID: "not-a-uuid", Generation: 1}, {UID: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8", Generation: 1}, {UID: ok, Generation: 1}})
	got := map[types.UID]workapply.Vouch{}
	if err := decode(shards[0], got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[ok].UID != ok {
		t.Fatalf("decoded %v, want only %s", got, ok)
	}
}

// A shard of another version, or cut short, adds no vouch at all: a half-read shard
// could vouch with a garbled hash.
func TestAShardThatDoesNotDecodeAddsNothing(t *testing.T) {
	shard := encode(vouchesOf(10))[0]
	for name, data := range map[string][]byte{
		"truncated":     shard[:len(shard)-3],
		"other version": append([]byte("bcwl\x02"), shard[len(header):]...),
		"empty":         nil,
	} {
		got := map[types.UID]workapply.Vouch{}
		err := decode(data, got)
		if !errors.Is(err, errFormat) || len(got) != 0 {
			t.Errorf("%s: decoded %d vouches, error %v; want none and errFormat", name, len(got), err)
		}
	}
}
