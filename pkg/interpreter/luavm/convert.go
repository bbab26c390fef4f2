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

// shapes records where the input held empty objects and empty arrays. A Lua table does not
// say which of the two an empty table is; like Karmada, the conversion back asks the
// input, by path with array indices left out.
type shapes struct {
	emptyObjects map[string]bool
	emptyArrays  map[string]bool
}

func newShapes(refs ...any) *shapes {
	s := &shapes{emptyObjects: map[string]bool{}, emptyArrays: map[string]bool{}}
	for _, r := range refs {
		s.record(r, nil)
	}
	return s
}

func (s *shapes) record(v any, path []string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 && len(path) > 0 {
			s.emptyObjects[joinPath(path)] = true
		}
		for k, e := range x {
			s.record(e, append(path, k))
		}
	case []any:
		if len(x) == 0 {
			s.emptyArrays[joinPath(path)] = true
		}
		for _, e := range x {
			s.record(e, path)
		}
	}
}

func joinPath(path []string) string { return strings.Join(path, "\x00") }

// omit marks an empty table whose shape the input does not know: it is left out of the
// result (Karmada drops such fields too).
type omit struct{}

// fromLua converts a Lua value to a JSON-shaped Go value. Whole numbers become int64.
func fromLua(v lua.LValue, s *shapes) (any, error) {
	out, err := fromLuaAt(v, s, nil, 0)
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

func tableFromLua(t *lua.LTable, s *shapes, path []string, depth int) (any, error) {
	n := t.Len()
	keys := 0
	t.ForEach(func(lua.LValue, lua.LValue) { keys++ })
	switch {
	case keys == 0:
		p := joinPath(path)
		switch {
		case s.emptyObjects[p]:
			return map[string]any{}, nil
		case s.emptyArrays[p]:
			return []any{}, nil
		}
		return omit{}, nil
	case keys == n:
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
	obj := make(map[string]any, keys)
	var err error
	t.ForEach(func(k, e lua.LValue) {
		if err != nil {
			return
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
	return obj, err
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
