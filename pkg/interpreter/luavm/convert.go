// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// maxDepth bounds the nesting of a value crossing between Go and Lua; a deeper Lua value
// is most likely a table that contains itself.
const maxDepth = 100

// toLua converts a JSON-shaped Go value (what unstructured objects hold) to Lua.
func toLua(l *lua.LState, v any) (lua.LValue, error) {
	return toLuaDepth(l, v, 0)
}

func toLuaDepth(l *lua.LState, v any, depth int) (lua.LValue, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return lua.LNil, nil
	case bool:
		return lua.LBool(x), nil
	case string:
		return lua.LString(x), nil
	case int64:
		return lua.LNumber(x), nil
	case int:
		return lua.LNumber(x), nil
	case int32:
		return lua.LNumber(x), nil
	case float64:
		return lua.LNumber(x), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, err
		}
		return lua.LNumber(f), nil
	case map[string]any:
		t := l.CreateTable(0, len(x))
		for k, e := range x {
			lv, err := toLuaDepth(l, e, depth+1)
			if err != nil {
				return nil, err
			}
			t.RawSetString(k, lv)
		}
		return t, nil
	case []any:
		t := l.CreateTable(len(x), 0)
		for _, e := range x {
			lv, err := toLuaDepth(l, e, depth+1)
			if err != nil {
				return nil, err
			}
			t.Append(lv)
		}
		return t, nil
	}
	return nil, fmt.Errorf("cannot pass a Go %T to Lua", v)
}

// shapes says which shape an empty table had in the input: a Lua table does not say
// whether an empty table is an empty object or an empty array; like Karmada, the
// conversion back asks the input, by path with array indices left out. The input is
// searched only when the result has an empty table, which most objects have few of.
type shapes struct {
	refs []any
	// values counts the values converted back from Lua, against maxResultValues.
	values int
}

// maxResultValues bounds the values of an object a script returns. A table may hold the
// same table many times, and each place is a value of its own in the object:
// a = {} for i = 1, 60 do a = {a, a} end returns 2^60 of them from 120 instructions. An
// object of a million values is several MiB of JSON, past what the API server stores.
const maxResultValues = 1 << 20

func newShapes(refs ...any) *shapes { return &shapes{refs: refs} }

// emptyObjectAt says whether the input had an empty object at path (not the top level).
func (s *shapes) emptyObjectAt(path []string) bool {
	if len(path) == 0 {
		return false
	}
	for _, r := range s.refs {
		if anyAt(r, path, isEmptyObject) {
			return true
		}
	}
	return false
}

// emptyArrayAt says whether the input had an empty array at path.
func (s *shapes) emptyArrayAt(path []string) bool {
	for _, r := range s.refs {
		if anyAt(r, path, isEmptyArray) {
			return true
		}
	}
	return false
}

func isEmptyObject(v any) bool { m, ok := v.(map[string]any); return ok && len(m) == 0 }
func isEmptyArray(v any) bool  { a, ok := v.([]any); return ok && len(a) == 0 }

// anyAt says whether match holds for a value of v at path, where an array's elements
// are at the array's own path.
func anyAt(v any, path []string, match func(any) bool) bool {
	switch x := v.(type) {
	case map[string]any:
		if len(path) == 0 {
			return match(x)
		}
		e, ok := x[path[0]]
		return ok && anyAt(e, path[1:], match)
	case []any:
		if len(path) == 0 && match(x) {
			return true
		}
		for _, e := range x {
			if anyAt(e, path, match) {
				return true
			}
		}
		return false
	}
	return len(path) == 0 && match(v)
}

// omit marks an empty table whose shape the input does not know: it is left out of the
// result (Karmada drops such fields too).
type omit struct{}

// fromLua converts a Lua value to a JSON-shaped Go value. Whole numbers become int64.
func fromLua(v lua.LValue, s *shapes) (any, error) {
	// One path buffer for the whole walk: a table's path is read only while its own
	// entries are converted, so siblings may reuse the slot.
	path := make([]string, 0, maxDepth+1)
	out, err := fromLuaAt(v, s, path, 0)
	if err != nil {
		return nil, err
	}
	if _, ok := out.(omit); ok {
		return map[string]any{}, nil
	}
	return out, nil
}

func fromLuaAt(v lua.LValue, s *shapes, path []string, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested deeper than %d levels (does a table contain itself?)", maxDepth)
	}
	if s.values++; s.values > maxResultValues {
		return nil, fmt.Errorf("the result holds more than %d values", maxResultValues)
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LString:
		return string(x), nil
	case lua.LNumber:
		return number(float64(x))
	case *lua.LTable:
		return tableFromLua(x, s, path, depth)
	}
	return nil, fmt.Errorf("at %s: a Lua %s has no JSON form", displayPath(path), v.Type())
}

func number(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("number %v has no JSON form", f)
	}
	if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return int64(f), nil
	}
	return f, nil
}

// tableFromLua converts a table: an array when its keys are exactly 1..n, else an
// object (numeric keys written as numbers), else, when empty, what the input had there.
func tableFromLua(t *lua.LTable, s *shapes, path []string, depth int) (any, error) {
	n := t.Len()
	if n > 0 {
		keys := 0
		t.ForEach(func(lua.LValue, lua.LValue) { keys++ })
		if keys == n {
			arr := make([]any, 0, n)
			for i := 1; i <= n; i++ {
				e, err := fromLuaAt(t.RawGetInt(i), s, path, depth+1)
				if err != nil {
					return nil, err
				}
				if _, ok := e.(omit); !ok {
					arr = append(arr, e)
				}
			}
			return arr, nil
		}
	}
	// No array part (most tables: objects) or more keys than it: an object, read in one
	// pass. A table with no keys at all is an empty table, shaped by the input.
	var obj map[string]any
	var err error
	t.ForEach(func(k, e lua.LValue) {
		if err != nil {
			return
		}
		if obj == nil {
			obj = make(map[string]any, 8)
		}
		var key string
		switch kk := k.(type) {
		case lua.LString:
			key = string(kk)
		case lua.LNumber:
			key = strconv.FormatFloat(float64(kk), 'f', -1, 64)
		default:
			err = fmt.Errorf("at %s: a Lua %s cannot be an object key", displayPath(path), k.Type())
			return
		}
		var ge any
		ge, err = fromLuaAt(e, s, append(path, key), depth+1)
		if err == nil {
			if _, ok := ge.(omit); !ok {
				obj[key] = ge
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if obj != nil {
		return obj, nil
	}
	switch {
	case s.emptyObjectAt(path):
		return map[string]any{}, nil
	case s.emptyArrayAt(path):
		return []any{}, nil
	}
	return omit{}, nil
}

func displayPath(path []string) string {
	if len(path) == 0 {
		return "the top level"
	}
	return "." + strings.Join(path, ".")
}

// sortedStrings returns the set's members in order, for results a script can rely on.
func sortedStrings(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
