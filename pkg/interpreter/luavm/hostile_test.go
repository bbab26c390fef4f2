// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// boundTimeout replaces Karmada's one-second limit in the tests of the bounds: on a
// machine shared with other work, the clock (transient by design) could come before the
// bound a test is about.
const boundTimeout = time.Minute

// maxCallWall is far above what a bound takes (a fraction of a second on an idle
// machine, each logged) and far below boundTimeout: a call that reaches it was not
// stopped by its bound.
const maxCallWall = 20 * time.Second

// maxCallHeapGrowth bounds what one call may leave the heap holding or allocate in total:
// the 64 MiB budget of strings and tables, the 1 MiB strings a library function builds
// before its charge fails, and what gopher-lua allocates around them.
const maxCallAlloc = 512 << 20

// hostileScripts are the scripts of the review that found the sandbox's holes, and their
// variants. Each must fail its call with the error named, in time and in memory.
var hostileScripts = map[string]struct{ body, want string }{
	"nested parens by concatenation": {`local s = "(" for i = 1, 30 do s = s .. s end; string.find("x", s)`, `".." would build a string of 2097152 bytes`},
	"nested parens by rep":           {`string.find("x", string.rep("(", 1000000))`, "a pattern of 1000000 bytes is longer than 4096"},
	"gsub over 200,000 characters":   {`local s = string.rep("a", 200000); local r = string.gsub(s, "a", "%0%0%0%0%0%0")`, "string.gsub would build a string longer than 1048576 bytes"},
	"gsub every position":            {`local s = string.rep("ab", 100000); for i = 1, 100 do string.gsub(s, "", "x") end`, "took more than 10000000 steps"},
	"gsub doubling":                  {`local s = "ab" for i = 1, 30 do s = string.gsub(s, "", "%0x") end`, "string.gsub would build a string longer than"},
	"backtracking find":              {`string.find(string.rep("a", 400), ".-.-.-b")`, "took more than 10000000 steps"},
	"backtracking match":             {`string.match(string.rep("a", 5000), "(.*)(.*)(.*)b")`, "took more than 10000000 steps"},
	"backtracking gmatch":            {`for x in string.gmatch(string.rep("a", 3000), "a*a*a*b") do end`, "took more than 10000000 steps"},
	"backtracking in a loop":         {`for i = 1, 100000 do string.find(string.rep("a", 60), ".-.-b") end`, "took more than 10000000 steps"},
	"table.concat of 1 MiB strings":  {`local t = {} for i = 1, 1000 do t[i] = string.rep("x", 1048576) end; table.concat(t)`, "it built more than 64 MiB"},
	"doubling by ..":                 {`local s = "x" while true do s = s .. s end`, `".." would build a string of`},
	"doubling many operands":         {`local s = string.rep("x", 65536) while true do s = s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s end`, `would build a string of`},
	"1 MiB strings kept in a table":  {`local t = {} local s = string.rep("x", 1000000) for i = 1, 1000 do t[i] = s .. i end`, "it built more than 64 MiB"},
	"a sparse array":                 {`local t = {} t[60000000] = 1`, "it built more than 64 MiB"},
	"a sparse array by constant":     {`local t = {} local k = 60000000 t[k] = 1`, "it built more than 64 MiB"},
	"a sparse insert":                {`local t = {} table.insert(t, 60000000, 1)`, "it built more than 64 MiB"},
	"# of an array of nils":          {`local t = {} for i = 1, 500000 do t[i] = i end for i = 1, 500000 do t[i] = nil end for i = 1, 1000000 do local n = #t end`, "took more than 10000000 steps"},
	"string.byte of a MiB":           {`local s = string.rep("x", 1048576) string.byte(s, 1, -1)`, "string.byte: too many results (1048576, at most 8000)"},
	"unpack of a large table":        {`local t = {} for i = 1, 200000 do t[i] = i end unpack(t)`, "unpack: too many results (200000, at most 8000)"},
	"unpack in a loop":               {`local t = {} for i = 1, 8000 do t[i] = i end for i = 1, 100000 do unpack(t) end`, "went past its bounds"},
	"a table of tables":              {`local t = {} while true do t[#t + 1] = {} end`, "it built more than 64 MiB"},
	"rep in a loop":                  {`local t = {} for i = 1, 1000 do t[i] = string.rep("y", 1048576) end`, "it built more than 64 MiB"},
	"upper in a loop":                {`local s = string.rep("y", 1048576) local t = {} for i = 1, 1000 do t[i] = s:upper() end`, "it built more than 64 MiB"},
	"format of many strings":         {`local s = string.rep("y", 1048576) string.format("%s%s%s", s, s, s)`, "string.format would build a string of"},
	"format width":                   {`string.format("%999999999d", 1)`, "a width or precision over 99"},
	"endless loop":                   {`while true do end`, "it ran more than 10000000 instructions"},
	"endless recursion":              {`local function f() return 1 + f() end f()`, "stack overflow"},
	"recursion through pcall":        {`local function f() pcall(f) end f() error("deep")`, "deep"},
	"recursion through gsub":         {`local function f(x) return (string.gsub("a", "a", f)) end f()`, "stack overflow"},
	"sort of a large table":          {`local t = {} for i = 1, 1000000 do t[i] = -i end table.sort(t)`, "took more than 10000000 steps"},
	"a pod template held 2^17 times": {`local kube = require("kube") local c = {name = "c"} for i = 1, 17 do c = {c, c} end local p = {spec = {containers = {c}}} for i = 1, 1000 do kube.accuratePodRequirements(p) end`, "took more than 10000000 steps"},
	"a quantity of half a MiB":       {`local kube = require("kube") kube.getResourceQuantity(string.rep("1", 500000))`, "a resource quantity of 500000 bytes is longer than 128"},
	"error of a MiB":                 {`error(string.rep("e", 1048576))`, "eeee..."},
	"a table that holds itself":      {`local t = {} t.t = t obj.spec.self = t`, "nested deeper than 100"},
	"a table held 2^60 times":        {`local a = {} for i = 1, 60 do a = {a, a} end obj.spec.a = a`, "the result holds more than 1048576 values"},
}

func TestHostileScriptsFailTheirCallInTimeAndMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs each hostile script to its bound")
	}
	call := reviseWithBody(NewPool(2, boundTimeout))
	for name, tt := range hostileScripts {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			alloc := totalAlloc()
			_, err := call(tt.body)
			took, grew := time.Since(start), totalAlloc()-alloc
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
			if errors.Is(err, ErrTimeout) || errors.Is(err, ErrAbandoned) {
				t.Errorf("error %v: a hostile script is stopped by a bound, not the clock", err)
			}
			if took > maxCallWall {
				t.Errorf("the call took %v, over %v", took, maxCallWall)
			}
			if grew > maxCallAlloc {
				t.Errorf("the call allocated %d MiB, over %d", grew>>20, maxCallAlloc>>20)
			}
			if len(err.Error()) > maxErrorBytes+3 {
				t.Errorf("the error is %d bytes long", len(err.Error()))
			}
			t.Logf("%v, %d MiB allocated", took.Round(time.Millisecond), grew>>20)
		})
	}
}

// The bounds count the same on every run, so a hostile script fails as a broken script
// does, never as a timeout that a retry might not meet.
func TestABoundIsTheScriptsFaultNotATimeout(t *testing.T) {
	call := reviseWithBody(NewPool(1, boundTimeout))
	for i := 0; i < 2; i++ {
		_, err := call(`while true do end`)
		if !errors.Is(err, ErrBudget) || errors.Is(err, ErrTimeout) {
			t.Fatalf("run %d: error %v, want ErrBudget", i+1, err)
		}
	}
}

// Scripts past the source bounds fail to compile quickly instead of taking the compiler
// seconds or its stack.
func TestScriptsPastTheSourceBoundsDoNotCompile(t *testing.T) {
	p := NewPool(1, 0)
	for name, tt := range map[string]struct{ script, want string }{
		"nested blocks": {strings.Repeat("do ", 5000) + strings.Repeat("end ", 5000), "the script nests deeper than 1000 levels"},
		"nested tables": {"x = " + strings.Repeat("{", 5000) + strings.Repeat("}", 5000), "the script nests deeper than 1000 levels"},
		"too long":      {"-- " + strings.Repeat("x", 300<<10), "longer than 262144"},
	} {
		start := time.Now()
		_, err := p.ReviseReplica(context.Background(), tt.script, sample(), 1)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tt.want)
		}
		if took := time.Since(start); took > maxCallWall {
			t.Errorf("%s: took %v", name, took)
		}
	}
}

// While every state of the pool is held (here by a holder that never lets go, which no
// call can be: each ends by its own limit), a call waits for one at most its time limit,
// then fails as a timeout to be retried.
func TestAPoolSlotIsNeverWaitedForPastTheCallsLimit(t *testing.T) {
	p := NewPool(1, 300*time.Millisecond)
	p.slots <- struct{}{}
	defer func() { <-p.slots }()
	start := time.Now()
	_, err := p.ReviseReplica(context.Background(), reviseSpecReplicas, sample(), 1)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "no Lua state was free within 300ms") {
		t.Fatalf("error %v, want ErrTimeout naming the wait", err)
	}
	if took := time.Since(start); took > 2*maxCallWall {
		t.Errorf("waited %v for a state", took)
	}
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// The instruction hook reads gopher-lua's call frames by offsets found by reflection; a
// gopher-lua laid out otherwise must be refused, not misread.
func TestTheInstructionHookKnowsGopherLuasFrames(t *testing.T) {
	if _, err := frameLayoutOf(reflect.TypeOf(lua.LState{})); err != nil {
		t.Fatalf("this gopher-lua: %v", err)
	}
	type otherState struct {
		currentFrame *struct{ Fn int } //nolint:unused // read by reflection
	}
	if _, err := frameLayoutOf(reflect.TypeOf(otherState{})); err == nil {
		t.Error("a state whose frames hold no *LFunction was accepted")
	}
}

// The bounds charge what gopher-lua really does: popping an array with table.remove moves
// nothing, and filling and emptying 20,000 elements stays far inside them.
func TestOrdinaryLoopsStayInsideTheBounds(t *testing.T) {
	call := reviseWithBody(NewPool(1, boundTimeout))
	for name, body := range map[string]string{
		"push and pop":    `local t = {} for i = 1, 20000 do t[#t + 1] = i end for i = 1, 20000 do table.remove(t) end`,
		"insert at end":   `local t = {} for i = 1, 20000 do table.insert(t, i) end`,
		"build a string":  `local s = "" for i = 1, 2000 do s = s .. "x" end`,
		"match each line": `local n = 0 for i = 1, 2000 do if string.find("key=value", "^(%w+)=") then n = n + 1 end end`,
	} {
		if _, err := call(body); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
