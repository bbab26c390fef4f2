// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// fuzzStatements are the library's functions, and the loops that grow what they build,
// with the fuzzer's arguments a, b (strings) and n (a number). t is a table holding a
// and b.
var fuzzStatements = []string{
	`string.find(a, b)`,
	`string.find(a, b, n)`,
	`string.find(a, b, n, true)`,
	`string.match(a, b, n)`,
	`string.gsub(a, b, a)`,
	`string.gsub(a, b, a, n)`,
	`string.gsub(a, b, function(x) return x .. x end)`,
	`string.gsub(a, b, t)`,
	`for x in string.gmatch(a, b) do end`,
	`a = string.rep(a, n)`,
	`a = string.format(a, n, b)`,
	`a = string.format("%" .. n .. "s", b)`,
	`string.sub(a, n)`,
	`string.byte(a, 1, n)`,
	`string.char(n % 256, n % 7)`,
	`a = string.upper(a) .. string.lower(b)`,
	`a = string.reverse(a)`,
	`a = table.concat(t, a, 1, n)`,
	`table.insert(t, n, a)`,
	`table.insert(t, a)`,
	`table.sort(t)`,
	`table.remove(t, n)`,
	`unpack(t, 1, n)`,
	`select(n, a, b)`,
	`tostring(n)`,
	`tonumber(a, n)`,
	`math.floor(n)`,
	`os.date(a, n)`,
	`a = a .. b`,
	`a = a .. a`,
	`t[n] = a`,
	`t[#t + 1] = a`,
	`t = {t, t}`,
	`b = b .. a .. n`,
	`kube.getResourceQuantity(a)`,
	`kube.resourceAdd(a, b)`,
	`kube.accuratePodRequirements({spec = {containers = {{name = a}}}})`,
	`obj.spec[a] = t`,
	`pcall(error, a)`,
}

// fuzzScript is a ReviseReplica that runs two statements, loops times over.
func fuzzScript(first, second uint8, a, b string, n int64, loops uint8) string {
	return fmt.Sprintf(`
local kube = require("kube")
function ReviseReplica(obj, desiredReplica)
  local a, b, n = %q, %q, %d
  local t = {a, b}
  for i = 1, %d do
    pcall(function() %s end)
    pcall(function() %s end)
  end
  obj.spec.replicas = desiredReplica
  return obj
end`, a, b, n, loops,
		fuzzStatements[int(first)%len(fuzzStatements)], fuzzStatements[int(second)%len(fuzzStatements)])
}

// Whatever a script does with the library, its call returns within maxCallWall,
// allocates less than maxCallAlloc, and no panic escapes (one would end this process).
// make test runs it for 30 s; testdata/fuzz keeps the corpus earlier runs found.
func FuzzLibraryCalls(f *testing.F) {
	for i := range fuzzStatements {
		f.Add(uint8(i), uint8(i), "a(b)c", "(%w)", int64(3), uint8(2))
	}
	f.Add(uint8(29), uint8(29), "x", "y", int64(1), uint8(60))
	f.Add(uint8(1), uint8(9), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", ".-.-.-.-b", int64(1), uint8(200))
	f.Add(uint8(30), uint8(30), "x", "y", int64(60000000), uint8(1))
	p := NewPool(1, 0)
	f.Fuzz(func(t *testing.T, first, second uint8, a, b string, n int64, loops uint8) {
		script := fuzzScript(first, second, a, b, n, loops)
		start := time.Now()
		alloc := totalAlloc()
		_, err := p.ReviseReplica(context.Background(), script, sample(), 2)
		took, grew := time.Since(start), totalAlloc()-alloc
		if errors.Is(err, ErrAbandoned) {
			t.Fatalf("a call outlived its deadline: %v\n%s", err, script)
		}
		if took > maxCallWall {
			t.Fatalf("the call took %v\n%s", took, script)
		}
		if grew > maxCallAlloc {
			t.Fatalf("the call allocated %d MiB\n%s", grew>>20, script)
		}
	})
}
