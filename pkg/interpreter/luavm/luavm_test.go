// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
)

const reviseSpecReplicas = `
function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica
  return obj
end`

func sample() map[string]any {
	return map[string]any{
		"apiVersion": "apps.example.io/v1", "kind": "Workload",
		"metadata": map[string]any{"name": "w", "namespace": "default", "annotations": map[string]any{}},
		"spec": map[string]any{
			"replicas": int64(9),
			"selector": map[string]any{},
			"ports":    []any{},
			"ratio":    0.5,
			"template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "c", "args": []any{}, "resources": map[string]any{}}},
			}},
		},
	}
}

func TestReviseReplicaSetsTheValueAndKeepsEmptyObjectsAndArrays(t *testing.T) {
	p := NewPool(2, 0)
	got, err := p.ReviseReplica(context.Background(), reviseSpecReplicas, sample(), 4)
	if err != nil {
		t.Fatal(err)
	}
	want := sample()
	want["spec"].(map[string]any)["replicas"] = int64(4)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("revised object (-want +got):\n%s", diff)
	}
}

func TestAnEmptyTableTheInputDidNotHaveIsLeftOut(t *testing.T) {
	p := NewPool(1, 0)
	got, err := p.ReviseReplica(context.Background(), `
function ReviseReplica(obj, n)
  obj.spec.replicas = n
  obj.spec.added = {}
  obj.spec.selector = {}
  return obj
end`, sample(), 2)
	if err != nil {
		t.Fatal(err)
	}
	spec := got["spec"].(map[string]any)
	if _, ok := spec["added"]; ok {
		t.Errorf("spec.added = %v; an empty table of unknown shape should be left out", spec["added"])
	}
	if diff := cmp.Diff(map[string]any{}, spec["selector"]); diff != "" {
		t.Errorf("spec.selector: %s", diff)
	}
}

func TestFailingScripts(t *testing.T) {
	cases := map[string]struct {
		script string
		want   string
	}{
		"syntax error":    {`function ReviseReplica(obj, n) obj.spec.replicas = = n end`, "syntax error"},
		"error()":         {`function ReviseReplica(obj, n) error("no replicas for you") end`, "no replicas for you"},
		"nil return":      {`function ReviseReplica(obj, n) end`, "returned nil"},
		"number return":   {`function ReviseReplica(obj, n) return n end`, "returned number"},
		"array return":    {`function ReviseReplica(obj, n) return {1, 2} end`, "returned an array"},
		"no function":     {`function Revise(obj, n) return obj end`, "no function ReviseReplica"},
		"error at load":   {`error("broken at load")`, "broken at load"},
		"function in obj": {`function ReviseReplica(obj, n) obj.spec.f = print return obj end`, "no JSON form"},
		"self-containing": {`function ReviseReplica(obj, n) obj.spec.me = obj return obj end`, "nested deeper"},
		"huge string":     {`function ReviseReplica(obj, n) obj.spec.s = string.rep("x", 1e9) return obj end`, "longer than"},
		"infinite number": {`function ReviseReplica(obj, n) obj.spec.replicas = 1/0 return obj end`, "no JSON form"},
		"bad quantity":    {`local kube = require("kube") function ReviseReplica(obj, n) kube.resourceAdd("lots") return obj end`, "not a resource quantity"},
		"unknown module":  {`local io = require("io") function ReviseReplica(obj, n) return obj end`, `module "io" is not available`},
		"stack overflow":  {`local function f() return 1 + f() end function ReviseReplica(obj, n) f() return obj end`, "stack overflow"},
	}
	p := NewPool(2, 0)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := p.ReviseReplica(context.Background(), c.script, sample(), 3)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want one containing %q", err, c.want)
			}
		})
	}
}

// An endless loop meets the instruction bound, the same on every run: the script's fault.
func TestAnEndlessLoopStopsAtTheInstructionBound(t *testing.T) {
	p := NewPool(1, 0)
	_, err := p.ReviseReplica(context.Background(), `function ReviseReplica(obj, n) while true do end end`, sample(), 3)
	if !errors.Is(err, ErrBudget) || errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "it ran more than 10000000 instructions") {
		t.Fatalf("error = %v, want ErrBudget naming the instruction bound", err)
	}
	// The state that failed is not reused, and the pool still serves calls.
	if _, err := p.ReviseReplica(context.Background(), reviseSpecReplicas, sample(), 3); err != nil {
		t.Fatalf("after a failed call: %v", err)
	}
}

// A call the clock stops before any bound does (a machine too busy to run it) ends with
// ErrTimeout, which a retry may not meet again.
func TestACallPastItsDeadlineIsATimeout(t *testing.T) {
	p := NewPool(1, time.Millisecond)
	_, err := p.ReviseReplica(context.Background(), `function ReviseReplica(obj, n) while true do end end`, sample(), 3)
	if !errors.Is(err, ErrTimeout) || errors.Is(err, ErrBudget) {
		t.Fatalf("error = %v, want ErrTimeout", err)
	}
}

func TestNothingReachesFilesEnvironmentOrProcesses(t *testing.T) {
	for _, expr := range []string{
		`io.open("/etc/passwd")`,
		`os.getenv("HOME")`,
		`os.execute("true")`,
		`os.remove("/tmp/x")`,
		`os.rename("/tmp/x", "/tmp/y")`,
		`os.exit(1)`,
		`os.tmpname()`,
		`io.popen("id")`,
		`dofile("/etc/passwd")`,
		`loadfile("/etc/passwd")`,
		`load("return 1")`,
		`loadstring("return 1")`,
		`require("os")`,
		`package.loadlib("x", "y")`,
		`string.dump(print)`,
		`getmetatable("")`,
		`setmetatable({}, {})`,
		`rawget(_G, "io")`,
		`rawset(_G, "x", 1)`,
		`rawequal(1, 1)`,
		`getfenv(1)`,
		`setfenv(1, {})`,
		`collectgarbage()`,
		`module("x")`,
		`newproxy()`,
		`debug.getinfo(1)`,
		`coroutine.create(print)`,
	} {
		t.Run(expr, func(t *testing.T) {
			p := NewPool(1, 0)
			script := "function ReviseReplica(obj, n) local r = " + expr + " return obj end"
			if _, err := p.ReviseReplica(context.Background(), script, sample(), 3); err == nil {
				t.Fatalf("%s ran in the sandbox", expr)
			}
		})
	}
}

func TestSafeLibrariesWork(t *testing.T) {
	p := NewPool(1, 0)
	got, err := p.ReviseReplica(context.Background(), `
local kube = require("kube")
function ReviseReplica(obj, n)
  local parts = {}
  table.insert(parts, string.upper("a"))
  table.insert(parts, string.format("%03d", n))
  obj.spec.s = table.concat(parts, "-")
  obj.spec.m = math.max(1, n)
  obj.spec.t = type(os.time()) .. "/" .. type(os.date("%Y"))
  obj.spec.cpu = kube.resourceAdd("100m", "1", nil)
  obj.spec.q = kube.getResourceQuantity("1500m")
  obj.spec.replicas = n
  return obj
end`, sample(), 7)
	if err != nil {
		t.Fatal(err)
	}
	spec := got["spec"].(map[string]any)
	want := map[string]any{"s": "A-007", "m": int64(7), "t": "number/string", "cpu": "1100m", "q": 1.5, "replicas": int64(7)}
	for k, v := range want {
		if diff := cmp.Diff(v, spec[k]); diff != "" {
			t.Errorf("spec.%s: %s", k, diff)
		}
	}
}

func TestKubePodHelpers(t *testing.T) {
	p := NewPool(1, 0)
	obj := sample()
	obj["spec"].(map[string]any)["template"] = map[string]any{"spec": map[string]any{
		"serviceAccountName": "runner",
		"nodeSelector":       map[string]any{"zone": "a"},
		"containers": []any{
			map[string]any{"name": "a", "resources": map[string]any{"requests": map[string]any{"cpu": "100m"}},
				"envFrom": []any{map[string]any{"configMapRef": map[string]any{"name": "cm1"}}}},
			map[string]any{"name": "b", "resources": map[string]any{"requests": map[string]any{"cpu": "200m"}}},
		},
		"initContainers": []any{map[string]any{"name": "i", "resources": map[string]any{"requests": map[string]any{"cpu": "1"}}}},
		"volumes":        []any{map[string]any{"name": "v", "secret": map[string]any{"secretName": "s1"}}},
	}}
	got, err := p.ReviseReplica(context.Background(), `
local kube = require("kube")
function ReviseReplica(obj, n)
  local req = kube.accuratePodRequirements(obj.spec.template)
  obj.spec.cpu = req.resourceRequest.cpu
  obj.spec.zone = req.nodeClaim.nodeSelector.zone
  local deps = kube.getPodDependencies(obj.spec.template, obj.metadata.namespace)
  local names = {}
  for _, d in ipairs(deps) do table.insert(names, d.kind .. "/" .. d.namespace .. "/" .. d.name) end
  obj.spec.deps = table.concat(names, ",")
  return obj
end`, obj, 1)
	if err != nil {
		t.Fatal(err)
	}
	spec := got["spec"].(map[string]any)
	if spec["cpu"] != "1" || spec["zone"] != "a" {
		t.Errorf("requirements: cpu %v zone %v, want 1 (the init container) and a", spec["cpu"], spec["zone"])
	}
	if want := "ConfigMap/default/cm1,Secret/default/s1,ServiceAccount/default/runner"; spec["deps"] != want {
		t.Errorf("dependencies %v, want %s", spec["deps"], want)
	}
}

func TestOneScriptsGlobalsAreNotSeenByTheNext(t *testing.T) {
	p := NewPool(1, 0)
	if _, err := p.ReviseReplica(context.Background(), `leaked = 5 `+reviseSpecReplicas, sample(), 1); err != nil {
		t.Fatal(err)
	}
	got, err := p.ReviseReplica(context.Background(), `
function ReviseReplica(obj, n)
  obj.spec.replicas = leaked or -1
  return obj
end`, sample(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if r := got["spec"].(map[string]any)["replicas"]; r != int64(-1) {
		t.Errorf("replicas = %v: the earlier script's global was visible", r)
	}
}

func TestManyCallersShareABoundedPool(t *testing.T) {
	p := NewPool(2, 0)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := p.ReviseReplica(context.Background(), reviseSpecReplicas, sample(), int64(i))
			if err == nil && got["spec"].(map[string]any)["replicas"] != int64(i) {
				err = errors.New("wrong replicas")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := len(p.idle); n > 2 {
		t.Errorf("%d idle states, want at most the pool size 2", n)
	}
}

func TestACancelledCallerDoesNotWaitForAState(t *testing.T) {
	p := NewPool(1, 0)
	p.slots <- struct{}{} // the only state is busy
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.ReviseReplica(ctx, reviseSpecReplicas, sample(), 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

// The shape of an empty table is looked up by its path with array indices left out: any
// empty object the input had there makes it an object, else any empty array an array.
// Tables with keys other than 1..n are objects with those keys.
func TestEmptyTablesTakeTheShapeTheInputHadAtTheirPath(t *testing.T) {
	in := map[string]any{
		"kind":   "Workload",
		"nested": []any{[]any{}, map[string]any{}},
		"items":  []any{map[string]any{"c": map[string]any{}}, map[string]any{"c": []any{}, "d": []any{}}},
		"deep":   map[string]any{"a": []any{[]any{[]any{}}}},
		"spec":   map[string]any{"replicas": int64(1)},
	}
	got, err := NewPool(1, 0).ReviseReplica(context.Background(), `
function ReviseReplica(obj, n)
  obj.spec.replicas = n
  obj.items[3] = {c = {}, d = {}, e = {}}
  obj.deep.a[1][2] = {}
  obj.mixed = {"x", "y", k = "v"}
  obj.holes = {}
  obj.holes[2] = "b"
  obj.unknown = {}
  return obj
end`, in, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"kind":   "Workload",
		"nested": []any{map[string]any{}, map[string]any{}},
		"items": []any{
			map[string]any{"c": map[string]any{}},
			map[string]any{"c": map[string]any{}, "d": []any{}},
			map[string]any{"c": map[string]any{}, "d": []any{}},
		},
		"deep":  map[string]any{"a": []any{[]any{[]any{}, []any{}}}},
		"spec":  map[string]any{"replicas": int64(3)},
		"mixed": map[string]any{"1": "x", "2": "y", "k": "v"},
		"holes": map[string]any{"2": "b"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("revised object (-want +got):\n%s", diff)
	}
}

// print goes to the controller's log at debug level, bounded per line and in rate, never
// to stdout; a script that prints still runs.
func TestPrintGoesToTheDebugLogRateLimited(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{Verbosity: 4})
	ctx := logr.NewContext(context.Background(), logger)
	p := NewPool(1, 0)
	script := `
function ReviseReplica(obj, desiredReplica)
  print("hello", desiredReplica, true)
  for i = 1, 1000 do print(string.rep("x", 2000)) end
  obj.spec.replicas = desiredReplica
  return obj
end`
	got, err := p.ReviseReplica(ctx, script, sample(), 3)
	if err != nil || got["spec"].(map[string]any)["replicas"] != int64(3) {
		t.Fatalf("ReviseReplica = %v, %v: a script that prints must still run", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) == 0 || !strings.Contains(lines[0], `"text"="hello\t3\ttrue"`) {
		t.Fatalf("first logged line %q, want the printed values tab-separated", lines)
	}
	if len(lines) > 30 {
		t.Errorf("%d lines logged for 1001 prints, want the rate limit (bursts of 20) to hold", len(lines))
	}
	for _, l := range lines[1:] {
		if len(l) > 600 {
			t.Errorf("a logged print of %d bytes, want it cut at 512", len(l))
		}
	}
}

// What one script changes of the libraries, kube and the globals is its own: the next
// call on the same pooled state, of another script, sees the sandbox as it was.
func TestAScriptsChangesToLibrariesAreInvisibleToOtherCalls(t *testing.T) {
	p := NewPool(1, 0) // one state: every call reuses it
	hostile := `
local kube = require("kube")
function ReviseReplica(obj, desiredReplica)
  math.max = function() return 1000 end
  string.split = function() return "injected" end
  table.insert = nil
  os.time = function() return 0 end
  kube.resourceAdd = nil
  _G.tostring = function() return "hijacked" end
  _G.math = {max = function() return 2000 end}
  obj.spec.replicas = desiredReplica
  return obj
end`
	if _, err := p.ReviseReplica(context.Background(), hostile, sample(), 1); err != nil {
		t.Fatalf("the hostile script itself: %v", err)
	}
	if len(p.idle) != 0 {
		t.Fatal("the state the hostile script changed went back to the pool")
	}
	probe := `
local kube = require("kube")
function ReviseReplica(obj, desiredReplica)
  local seen = {}
  table.insert(seen, tostring(math.max(1, 2)))
  table.insert(seen, tostring(string.split))
  table.insert(seen, tostring(os.time() > 0))
  table.insert(seen, tostring(kube.resourceAdd ~= nil))
  table.insert(seen, ("x"):upper())
  obj.metadata.annotations.seen = table.concat(seen, ",")
  obj.spec.replicas = desiredReplica
  return obj
end`
	got, err := p.ReviseReplica(context.Background(), probe, sample(), 2)
	if err != nil {
		t.Fatalf("the next call: %v", err)
	}
	seen := got["metadata"].(map[string]any)["annotations"].(map[string]any)["seen"]
	if want := "2,nil,true,true,X"; seen != want {
		t.Errorf("the next call saw %q, want %q: the hostile script's changes leaked", seen, want)
	}
	if len(p.idle) != 1 {
		t.Error("a state no script changed was not reused")
	}
}

// A pattern of a million nested "(" overflowed the Go stack in gopher-lua's parser: a
// fatal error that ended the process. Patterns past the bounds fail their call instead,
// and ordinary patterns still match.
func TestPatternsPastTheBoundsFailTheCallNotTheProcess(t *testing.T) {
	call := reviseWithBody(NewPool(1, 0))
	for name, tt := range map[string]struct{ body, want string }{
		"nested":   {`local s = string.rep("(", 1000000); string.find("x", s)`, "string.find: a pattern of 1000000 bytes is longer than 4096"},
		"built":    {`local s = "" for i = 1, 5000 do s = s .. "(" end; ("x"):match(s)`, "string.match: a pattern of 5000 bytes is longer than 4096"},
		"captures": {`string.gsub("x", string.rep("(x)", 40), "y")`, "string.gsub: a pattern of 40 captures has more than 32"},
		"gmatch":   {`for w in string.gmatch("x", string.rep("(", 5000)) do end`, "string.gmatch: a pattern of 5000 bytes"},
	} {
		if _, err := call(tt.body); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tt.want)
		}
	}
	ok := `
  local a, b = string.find("f(x)", "%(x%)")
  local w = ("key=value"):match("(%w+)=(%w+)")
  local n = select(2, string.gsub("a,b,c", "[(,]", ";"))
  local plain = string.find(string.rep("(", 5000) .. "x", string.rep("(", 5000), 1, true)
  local words = 0
  for _ in string.gmatch("one two three", "%a+") do words = words + 1 end
  obj.metadata.annotations.seen = a .. "," .. b .. "," .. w .. "," .. n .. "," .. plain .. "," .. words`
	got, err := call(ok)
	if err != nil {
		t.Fatalf("ordinary patterns: %v", err)
	}
	if seen := got["metadata"].(map[string]any)["annotations"].(map[string]any)["seen"]; seen != "2,4,key,2,1,3" {
		t.Errorf("ordinary patterns gave %q, want 2,4,key,2,1,3", seen)
	}
}

// table.concat and string.format cannot build strings past the sandbox's bound in one
// call; ordinary uses still work.
func TestConcatAndFormatAreBounded(t *testing.T) {
	call := reviseWithBody(NewPool(1, 0))
	for name, tt := range map[string]struct{ body, want string }{
		"concat":       {`local t = {} for i = 1, 3 do t[i] = string.rep("x", 1048576) end; table.concat(t)`, "table.concat would build a string longer than 1048576 bytes"},
		"concat range": {`table.concat({}, "", 1, 1000000000)`, "table.concat would build a string longer than"},
		"format width": {`string.format("%999999999d", 1)`, "string.format: a width or precision over 99"},
		"format prec":  {`("%.1000f"):format(1)`, "string.format: a width or precision over 99"},
	} {
		if _, err := call(tt.body); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tt.want)
		}
	}
	got, err := call(`obj.metadata.annotations.seen = table.concat({"a", 1, "b"}, "-") .. string.format("|%5.2f|%-3d|%%|%s", 1.5, 7, "x")`)
	if err != nil {
		t.Fatalf("ordinary uses: %v", err)
	}
	if seen := got["metadata"].(map[string]any)["annotations"].(map[string]any)["seen"]; seen != "a-1-b| 1.50|7  |%|x" {
		t.Errorf("ordinary uses gave %q", seen)
	}
}

// reviseWithBody returns a call of ReviseReplica with body run before it sets the replicas
// (to 2) of sample().
func reviseWithBody(p *Pool) func(body string) (map[string]any, error) {
	return func(body string) (map[string]any, error) {
		return p.ReviseReplica(context.Background(), `
function ReviseReplica(obj, desiredReplica)
`+body+`
  obj.spec.replicas = desiredReplica
  return obj
end`, sample(), 2)
	}
}
