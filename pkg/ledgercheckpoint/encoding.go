// SPDX-License-Identifier: Apache-2.0

// Package ledgercheckpoint keeps a copy of the Work ledger's vouches in ConfigMaps of the
// controller's own namespace, so that a process that starts can trust the Works it finds
// without reading their manifests. A vouch only ever states what was true of a Work's UID
// at one generation; a copy however old stays true, and the reader trusts a vouch only
// where the Work's cached UID and generation still agree.
package ledgercheckpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"

	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// The format: a magic and version header, then per vouch the UID's 16 bytes, the
// generation as an unsigned varint and the spec hash as 8 big-endian bytes; about 27
// bytes a Work. A later version that hashes specs otherwise changes the version, and an
// older copy is then ignored instead of misread.
var header = []byte("bcwl\x01")

// vouchesPerShard bounds one ConfigMap: at the widest (a 10-byte generation) 34 bytes a
// vouch, about 680 KB, under the API server's 1 MiB limit on a ConfigMap's data even
// when UIDs spread unevenly over the shards.
const vouchesPerShard = 20000

// maxVouchBytes is the widest a vouch is encoded.
const maxVouchBytes = 16 + binary.MaxVarintLen64 + 8

// encode splits vouches into shards by a hash of their UID, each sorted by UID, so that
// an unchanged shard encodes to the same bytes and need not be written again. Vouches of
// a UID that is not a canonical UUID (the API server assigns only those) are left out.
func encode(vouches []workapply.Vouch) [][]byte {
	n := max(1, (len(vouches)+vouchesPerShard-1)/vouchesPerShard)
	type packed struct {
		uid        uuid.UUID
		generation int64
		hash       uint64
	}
	shards := make([][]packed, n)
	for _, v := range vouches {
		id, err := uuid.Parse(string(v.UID))
		if err != nil || id.String() != string(v.UID) || v.Generation < 0 {
			continue
		}
		h := fnv.New32a()
		_, _ = h.Write(id[:])
		i := h.Sum32() % uint32(n)
		shards[i] = append(shards[i], packed{uid: id, generation: v.Generation, hash: v.Hash})
	}
	out := make([][]byte, n)
	for i, shard := range shards {
		slices.SortFunc(shard, func(a, b packed) int { return bytes.Compare(a.uid[:], b.uid[:]) })
		buf := make([]byte, 0, len(header)+len(shard)*maxVouchBytes)
		buf = append(buf, header...)
		for _, p := range shard {
			buf = append(buf, p.uid[:]...)
			buf = binary.AppendUvarint(buf, uint64(p.generation))
			buf = binary.BigEndian.AppendUint64(buf, p.hash)
		}
		out[i] = buf
	}
	return out
}

var errFormat = errors.New("not a Work ledger checkpoint of this version")

// decode adds the vouches of one shard to into, all of them or, when the shard does not
// decode to the end, none.
func decode(data []byte, into map[types.UID]workapply.Vouch) error {
	if !bytes.HasPrefix(data, header) {
		return errFormat
	}
	var shard []workapply.Vouch
	rest := data[len(header):]
	for len(rest) > 0 {
		if len(rest) < 16 {
			return fmt.Errorf("%w: truncated UID", errFormat)
		}
		var id uuid.UUID
		copy(id[:], rest[:16])
		rest = rest[16:]
		generation, n := binary.Uvarint(rest)
		if n <= 0 || generation > 1<<63-1 {
			return fmt.Errorf("%w: bad generation", errFormat)
		}
		rest = rest[n:]
		if len(rest) < 8 {
			return fmt.Errorf("%w: truncated hash", errFormat)
		}
		uid := types.UID(id.String())
		shard = append(shard, workapply.Vouch{UID: uid, Generation: int64(generation), Hash: binary.BigEndian.Uint64(rest[:8])})
		rest = rest[8:]
	}
	for _, v := range shard {
		into[v.UID] = v
	}
	return nil
}
