// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Karmada runs customizations on gopher-lua's own string library, so the sandbox's pattern
// functions must give the same results wherever gopher-lua's finish: a script must write
// the same Work under either controller.

// parityCalls are evaluated with s, p and r set.
var parityCalls = []string{
	`return string.find(s, p)`,
	`return string.find(s, p, 2)`,
	`return string.find(s, p, -2)`,
	`return string.find(s, p, 1, true)`,
	`return string.match(s, p)`,
	`return string.match(s, p, 3)`,
	`return string.gsub(s, p, r)`,
	`return string.gsub(s, p, r, 1)`,
	`return string.gsub(s, p, function(a, b) return b or a end)`,
	`return string.gsub(s, p, {a = "A", b = false})`,
	`local out = {} for a, b in string.gmatch(s, p) do out[#out + 1] = tostring(a) .. "/" .. tostring(b) end return table.concat(out, ",")`,
}

// outcome runs code on l and returns its results or "error".
func outcome(l *lua.LState, code, s, p, r string) string {
	l.SetGlobal("s", lua.LString(s))
	l.SetGlobal("p", lua.LString(p))
	l.SetGlobal("r", lua.LString(r))
	top := l.GetTop()
	if err := l.DoString(code); err != nil {
		return "error"
	}
	var b strings.Builder
	for i := top + 1; i <= l.GetTop(); i++ {
		v := l.Get(i)
		fmt.Fprintf(&b, "%s:%s ", v.Type(), v.String())
	}
	l.SetTop(top)
	return b.String()
}

// tame tells whether gopher-lua's matcher finishes quickly on a case: few quantifiers on a
// short subject.
func tame(s, p string) bool {
	return len(s) <= 24 && len(p) <= 12 && strings.Count(p, "*")+strings.Count(p, "-")+strings.Count(p, "+") <= 3
}

func checkParity(t *testing.T, ref, ours *lua.LState, s, p, r string) {
	t.Helper()
	if !tame(s, p) {
		return
	}
	for _, code := range parityCalls {
		ours.SetContext(newBudget(context.Background(), ours, time.Now().Add(time.Minute)))
		want, got := outcome(ref, code, s, p, r), outcome(ours, code, s, p, r)
		if want != got {
			t.Errorf("s=%q p=%q r=%q: %s\n gopher-lua: %s\n sandbox:    %s", s, p, r, code, want, got)
		}
	}
}

func parityStates(t testing.TB) (ref, ours *lua.LState) {
	ref = lua.NewState()
	ours, err := newState()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close(); ours.Close() })
	return ref, ours
}

var parityCases = []struct{ s, p, r string }{
	{"hello world", "o", "0"},
	{"hello world", "(o)", "[%1]"},
	{"hello world", "l+", "L"},
	{"hello world", "l*", "-"},
	{"hello world", "l-", "-"},
	{"hello world", "l?o", "%0%0"},
	{"hello world", "^h", "H"},
	{"hello world", "d$", "D"},
	{"hello world", "^", "x"},
	{"hello world", "$", "x"},
	{"hello world", "", "x"},
	{"hello world", "%w+", "<%0>"},
	{"key=value, k2=v2", "(%w+)=(%w+)", "%2=%1"},
	{"a.b.c", "%.", "/"},
	{"a.b.c", ".", "%%"},
	{"f(a(b)c)d", "%b()", "X"},
	{"THE (quick) fox", "%f[%a]%a+", "W"},
	{"abc", "()b()", "%1-%2"},
	{"aaa", "(a)%1", "x"},
	{"abc", "[a-b]+", "x"},
	{"a]b", "[]]", "x"},
	{"a^b", "[%^]", "x"},
	{"a-b", "[a-]", "x"},
	{"a-b", "[^a-]", "x"},
	{"x", "%", "x"},
	{"x", "[a", "x"},
	{"x", "(", "x"},
	{"x", ")", "x"},
	{"x", "%1", "x"},
	{"x", "%b", "x"},
	{"x", "%f", "x"},
	{"abc", "b", "%9"},
	{"abc", "b", "%z"},
	{"abc", "b", "%"},
	{"a\x00b", "%z", "0"},
	{"  trim me  ", "^%s*(.-)%s*$", "%1"},
	{"1.5Gi", "^(%d+%.?%d*)(%a*)$", "%2%1"},
	{"nvidia.com/gpu", "^([^/]+)/(.+)$", "%2"},
	{"abc", "a*", "-"},
	{"", "a*", "-"},
	{"", "", "-"},
	{"abc", ".-", "-"},
}

func TestPatternFunctionsAgreeWithGopherLua(t *testing.T) {
	ref, ours := parityStates(t)
	for _, c := range parityCases {
		checkParity(t, ref, ours, c.s, c.p, c.r)
	}
}

func FuzzPatternFunctionsAgreeWithGopherLua(f *testing.F) {
	for _, c := range parityCases {
		f.Add(c.s, c.p, c.r)
	}
	ref, ours := parityStates(f)
	f.Fuzz(func(t *testing.T, s, p, r string) {
		checkParity(t, ref, ours, s, p, r)
	})
}
