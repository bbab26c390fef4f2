// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"math/bits"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The string functions that match patterns are the sandbox's own (pattern.go); those that
// build strings charge what they build to the call's budget before they build it.

// Pattern bounds. gopher-lua's pattern parser recursed once per nested "(": a pattern of
// millions of them, built by concatenation, overflowed the Go stack, a fatal error no
// recover catches. The matcher here recurses once per pattern item at most, so the length
// bounds its depth. Lua itself allows 32 captures (LUA_MAXCAPTURES); Karmada's bundled
// scripts use patterns of a few dozen bytes.
const (
	maxPatternLen      = 4096
	maxPatternCaptures = 32
)

func openStringFunctions(l *lua.LState) {
	str := l.GetGlobal(lua.StringLibName).(*lua.LTable)
	str.RawSetString("dump", l.NewFunction(notAvailable("string.dump")))
	str.RawSetString("find", l.NewFunction(find))
	str.RawSetString("match", l.NewFunction(match))
	str.RawSetString("gmatch", l.NewFunction(gmatch))
	str.RawSetString("gsub", l.NewFunction(gsub))
	str.RawSetString("rep", l.NewFunction(rep))
	for _, name := range []string{"upper", "lower", "reverse"} {
		str.RawSetString(name, chargeArgument(l, "string."+name, str.RawGetString(name).(*lua.LFunction)))
	}
	str.RawSetString("format", guardFormat(l, str.RawGetString("format").(*lua.LFunction)))
	tab := l.GetGlobal(lua.TabLibName).(*lua.LTable)
	tab.RawSetString("concat", guardConcat(l, tab.RawGetString("concat").(*lua.LFunction)))
	tab.RawSetString("sort", chargeSort(l, tab.RawGetString("sort").(*lua.LFunction)))
	tab.RawSetString("insert", chargeInsert(l, tab.RawGetString("insert").(*lua.LFunction)))
	tab.RawSetString("remove", chargeRemove(l, tab.RawGetString("remove").(*lua.LFunction)))
	str.RawSetString("byte", chargeResults(l, "string.byte", str.RawGetString("byte").(*lua.LFunction), func(l *lua.LState) int {
		n := len(l.CheckString(1))
		i, j := startIndex(l.OptInt(2, 1), n), l.OptInt(3, l.OptInt(2, 1))
		if j < 0 {
			j += n + 1
		}
		return min(j, n) - i
	}))
	l.SetGlobal("unpack", chargeResults(l, "unpack", l.GetGlobal("unpack").(*lua.LFunction), func(l *lua.LState) int {
		t := l.CheckTable(1)
		return l.OptInt(3, t.Len()) - l.OptInt(2, 1) + 1
	}))
	os := l.GetGlobal(lua.OsLibName).(*lua.LTable)
	os.RawSetString("date", guardDate(l, os.RawGetString("date").(*lua.LFunction)))
}

// maxResults bounds the values string.byte and unpack push, as Lua does (LUAI_MAXCSTACK):
// gopher-lua allowed a quarter of a million, and pushing them took seconds.
const maxResults = 8000

// chargeResults wraps a function that pushes count(l) results, at most maxResults,
// charging a step and a field's bytes for each before it runs: string.byte of a MiB
// pushed a million numbers from one instruction.
func chargeResults(l *lua.LState, name string, f *lua.LFunction, count func(*lua.LState) int) *lua.LFunction {
	return l.NewFunction(func(l *lua.LState) int {
		n := count(l)
		if n > maxResults {
			l.RaiseError("%s: too many results (%d, at most %d)", name, n, maxResults)
		}
		if n > 0 {
			chargeSteps(l, name, n)
			if b := budgetOf(l); b != nil {
				if err := b.charge(n * fieldBytes); err != nil {
					b.exceed(err)
					l.RaiseError("%s: %v", name, err)
				}
			}
		}
		return callThrough(l, f)
	})
}

// chargeRemove charges table.remove(t, pos) a step for each value it moves down; without
// a position it takes the last value and moves none.
func chargeRemove(l *lua.LState, f *lua.LFunction) *lua.LFunction {
	return l.NewFunction(func(l *lua.LState) int {
		if l.GetTop() >= 2 {
			chargeSteps(l, "table.remove", l.CheckTable(1).Len()-l.CheckInt(2))
		}
		return callThrough(l, f)
	})
}

// maxDateFormat bounds os.date's format: each "%c" in it becomes twenty bytes.
const maxDateFormat = 1024

func guardDate(l *lua.LState, f *lua.LFunction) *lua.LFunction {
	return l.NewFunction(func(l *lua.LState) int {
		if format := l.OptString(1, ""); len(format) > maxDateFormat {
			l.RaiseError("os.date: a format of %d bytes is longer than %d", len(format), maxDateFormat)
		}
		n := callThrough(l, f)
		if s, ok := l.Get(-1).(lua.LString); ok {
			chargeString(l, "os.date", len(s))
		}
		return n
	})
}

// chargeInsert charges table.insert(t, pos, v) as the store t[pos] it may become, and a
// step for each value it moves.
func chargeInsert(l *lua.LState, f *lua.LFunction) *lua.LFunction {
	return l.NewFunction(func(l *lua.LState) int {
		if b := budgetOf(l); b != nil && l.GetTop() >= 3 {
			t := l.CheckTable(1)
			if err := b.chargeIndex(t, l.Get(2)); err != nil {
				b.exceed(err)
				l.RaiseError("table.insert: %v", err)
			}
			chargeSteps(l, "table.insert", t.Len()-l.CheckInt(2))
		}
		return callThrough(l, f)
	})
}

// chargeSort charges a sort's comparisons, n·log2(n), to the call's steps before it runs:
// without a comparison function they run in Go, out of the instruction count.
func chargeSort(l *lua.LState, f *lua.LFunction) *lua.LFunction {
	return l.NewFunction(func(l *lua.LState) int {
		n := l.CheckTable(1).Len()
		chargeSteps(l, "table.sort", n*bits.Len(uint(n)))
		return callThrough(l, f)
	})
}

// checkPattern fails the call of string.<fn> for a pattern past the bounds.
func checkPattern(l *lua.LState, fn, pattern string) {
	if len(pattern) > maxPatternLen {
		l.RaiseError("string.%s: a pattern of %d bytes is longer than %d", fn, len(pattern), maxPatternLen)
	}
	if n := patternCaptures(pattern); n > maxPatternCaptures {
		l.RaiseError("string.%s: a pattern of %d captures has more than %d", fn, n, maxPatternCaptures)
	}
}

// runMatcher runs f, turning a pattern error or the end of the call's budget into a Lua
// error of string.<fn>. Lua errors raised inside f (by a replacement function) pass
// through.
func runMatcher(l *lua.LState, fn string, f func() *matcher) {
	failed := ""
	func() {
		defer func() {
			if r := recover(); r != nil {
				msg, ok := r.(patternError)
				if !ok {
					panic(r)
				}
				failed = string(msg)
			}
		}()
		if m := f(); m != nil {
			m.flushSteps()
		}
	}()
	if failed != "" {
		l.RaiseError("string.%s: %s", fn, failed)
	}
}

// startIndex turns a 1-based, possibly negative init into an offset in s, as gopher-lua
// does for string.find: not clamped to the string's end.
func startIndex(init, n int) int {
	if init != 0 {
		init--
	}
	if init < 0 {
		init += n + 1
	}
	if init < 0 {
		return 0
	}
	return init
}

// captureAt returns the capture in slots i and i+1 of a match of src.
func captureAt(src string, c *captures, i int) lua.LValue {
	if c.isPosition[i] {
		return lua.LNumber(c.at[i])
	}
	from, to := c.at[i], c.at[i+1]
	if from > to || to > len(src) {
		failPattern("unfinished capture")
	}
	return lua.LString(src[from:to])
}

// pushCaptures pushes a match's captures, or the whole match when it has none (and whole
// is set), and returns how many.
func pushCaptures(l *lua.LState, src string, f *found, whole bool) int {
	if f.caps.count() <= 2 {
		if !whole {
			return 0
		}
		l.Push(lua.LString(src[f.start:f.end]))
		return 1
	}
	n := 0
	for i := 2; i < f.caps.count(); i += 2 {
		l.Push(captureAt(src, f.caps, i))
		n++
	}
	return n
}

// first returns the first match of pat in src from offset, if any.
func first(l *lua.LState, fn, src, pat string, offset int) (f found, ok bool) {
	var m *matcher
	runMatcher(l, fn, func() *matcher {
		m = newMatcher(budgetOf(l), src, pat)
		return m
	})
	return firstOf(l, fn, m, offset)
}

// firstOf returns m's first match from offset, if any.
func firstOf(l *lua.LState, fn string, m *matcher, offset int) (f found, ok bool) {
	runMatcher(l, fn, func() *matcher {
		m.budget = budgetOf(l)
		m.find(offset, 1, func(x found) bool { f, ok = x, true; return false })
		return m
	})
	return f, ok
}

func find(l *lua.LState) int {
	src := l.CheckString(1)
	pat := l.CheckString(2)
	if len(pat) == 0 {
		l.Push(lua.LNumber(1))
		l.Push(lua.LNumber(0))
		return 2
	}
	init := startIndex(l.OptInt(3, 1), len(src))
	if l.GetTop() == 4 && lua.LVAsBool(l.Get(4)) {
		if init > len(src) {
			l.RaiseError("string.find: init %d is past the string's end", init+1)
		}
		chargeSteps(l, "string.find", len(src[init:])/64)
		i := strings.Index(src[init:], pat)
		if i < 0 {
			l.Push(lua.LNil)
			return 1
		}
		l.Push(lua.LNumber(init + i + 1))
		l.Push(lua.LNumber(init + i + len(pat)))
		return 2
	}
	checkPattern(l, "find", pat)
	f, ok := first(l, "find", src, pat, init)
	if !ok {
		l.Push(lua.LNil)
		return 1
	}
	l.Push(lua.LNumber(f.start + 1))
	l.Push(lua.LNumber(f.end))
	var n int
	runMatcher(l, "find", func() *matcher { n = pushCaptures(l, src, &f, false); return nil })
	return 2 + n
}

// match returns no value at all when nothing matches, as gopher-lua's does.
func match(l *lua.LState) int {
	src := l.CheckString(1)
	pat := l.CheckString(2)
	offset := l.OptInt(3, 1)
	if offset < 0 {
		offset += len(src) + 1
	}
	if offset--; offset < 0 {
		offset = 0
	}
	checkPattern(l, "match", pat)
	f, ok := first(l, "match", src, pat, offset)
	if !ok {
		return 0
	}
	var n int
	runMatcher(l, "match", func() *matcher { n = pushCaptures(l, src, &f, true); return nil })
	return n
}

func gmatch(l *lua.LState) int {
	src := l.CheckString(1)
	pat := l.CheckString(2)
	checkPattern(l, "gmatch", pat)
	var m *matcher
	runMatcher(l, "gmatch", func() *matcher { m = newMatcher(budgetOf(l), src, pat); return nil })
	next, done := 0, false
	l.Push(l.NewFunction(func(l *lua.LState) int {
		if done {
			return 0
		}
		f, ok := firstOf(l, "gmatch", m, next)
		if !ok || len(pat) > 0 && pat[0] == '^' {
			done = true
		}
		if !ok {
			return 0
		}
		if next = f.start + 1; next < f.end {
			next = f.end
		}
		var n int
		runMatcher(l, "gmatch", func() *matcher { n = pushCaptures(l, src, &f, true); return nil })
		return n
	}))
	return 1
}

func gsub(l *lua.LState) int {
	src := l.CheckString(1)
	pat := l.CheckString(2)
	l.CheckTypes(3, lua.LTString, lua.LTTable, lua.LTFunction)
	repl := l.Get(3)
	limit := l.OptInt(4, -1)
	checkPattern(l, "gsub", pat)
	var out strings.Builder
	// What gsub builds is charged as it is built: a call that fails half-way has still
	// built it.
	write := func(s string) {
		if out.Len()+len(s) > maxStringLen {
			l.RaiseError("string.gsub would build a string longer than %d bytes", maxStringLen)
		}
		chargeString(l, "string.gsub", len(s))
		out.WriteString(s)
	}
	n, prev := 0, 0
	runMatcher(l, "gsub", func() *matcher {
		m := newMatcher(budgetOf(l), src, pat)
		m.find(0, limit, func(f found) bool {
			n++
			write(src[prev:f.start])
			write(replacement(l, src, &f, repl))
			prev = f.end
			return true
		})
		return m
	})
	if n == 0 {
		l.Push(lua.LString(src))
		l.Push(lua.LNumber(0))
		return 2
	}
	write(src[prev:])
	l.Push(lua.LString(out.String()))
	l.Push(lua.LNumber(n))
	return 2
}

// replacement returns what gsub puts in place of a match, as gopher-lua's gsub does: a
// table or function's false or nil keeps the match, and a value that is neither string
// nor number replaces it with nothing. It runs inside runMatcher.
func replacement(l *lua.LState, src string, f *found, repl lua.LValue) string {
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LString:
		// Expanding reads the whole replacement for every match: about a step per four
		// bytes.
		chargeSteps(l, "string.gsub", len(r)/4)
		return expandReplacement(src, f, string(r))
	case *lua.LTable:
		key := lua.LValue(lua.LString(src[f.start:f.end]))
		if f.caps.count() > 2 {
			key = captureAt(src, f.caps, 2)
		}
		v = l.GetTable(r, key)
	case *lua.LFunction:
		top := l.GetTop()
		l.Push(r)
		l.Call(pushCaptures(l, src, f, true), 1)
		v = l.Get(-1)
		l.SetTop(top)
	}
	if lua.LVIsFalse(v) {
		return src[f.start:f.end]
	}
	return lua.LVAsString(v)
}

// expandReplacement expands a gsub replacement string: "%%" is "%", "%0" the match, "%1"
// to "%9" its captures ("%1" the match when there are none), "%" before anything else
// stays as written.
func expandReplacement(src string, f *found, repl string) string {
	if strings.IndexByte(repl, '%') < 0 {
		return repl
	}
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '%' || i == len(repl)-1 {
			b.WriteByte(c)
			continue
		}
		i++
		switch d := repl[i]; {
		case d == '%':
			b.WriteByte('%')
		case isDigit(int(d)):
			slot := 2 * int(d-'0')
			if slot > 2 && slot >= f.caps.count() {
				failPattern("invalid capture index")
			}
			if slot >= f.caps.count() {
				slot = 0
			}
			v := captureAt(src, f.caps, slot)
			b.WriteString(lua.LVAsString(v))
		default:
			b.WriteByte('%')
			b.WriteByte(d)
		}
		if b.Len() > maxStringLen {
			failPattern("gsub would build a string longer than %d bytes", maxStringLen)
		}
	}
	return b.String()
}

func rep(l *lua.LState) int {
	s := l.CheckString(1)
	n := l.CheckInt(2)
	if n <= 0 || len(s) == 0 {
		l.Push(lua.LString(""))
		return 1
	}
	if n > maxStringLen/len(s) {
		l.RaiseError("string.rep would build a string longer than %d bytes", maxStringLen)
	}
	chargeString(l, "string.rep", len(s)*n)
	l.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// chargeArgument wraps a function that builds a string as long as its first argument.
func chargeArgument(l *lua.LState, name string, f *lua.LFunction) *lua.LFunction {
	return l.NewFunction(func(l *lua.LState) int {
		chargeString(l, name, len(l.CheckString(1)))
		return callThrough(l, f)
	})
}

// callThrough calls f with the calling function's arguments and returns its results.
func callThrough(l *lua.LState, f *lua.LFunction) int {
	top := l.GetTop()
	l.Push(f)
	for i := 1; i <= top; i++ {
		l.Push(l.Get(i))
	}
	l.Call(top, lua.MultRet)
	return l.GetTop() - top
}

// guardFormat refuses a width or precision over 99, as Lua does: gopher-lua hands them to
// Go's fmt, so "%999999999d" would build a string of a GiB. What the arguments can add is
// charged before the string is built.
func guardFormat(l *lua.LState, f *lua.LFunction) *lua.LFunction {
	return l.NewFunction(func(l *lua.LState) int {
		format := l.CheckString(1)
		specs := 0
		for i := 0; i < len(format); i++ {
			if format[i] != '%' {
				continue
			}
			specs++
			digits := 0
			for i++; i < len(format) && strings.IndexByte("-+ #0123456789.", format[i]) >= 0; i++ {
				if format[i] >= '0' && format[i] <= '9' {
					digits++
					if digits > 2 {
						l.RaiseError("string.format: a width or precision over 99 in %q", format)
						return 0
					}
				} else {
					digits = 0
				}
			}
		}
		n := len(format) + 99*specs
		for i := 2; i <= l.GetTop(); i++ {
			if s, ok := l.Get(i).(lua.LString); ok {
				// %q may double a string's bytes.
				n += 2 * len(s)
			}
		}
		chargeString(l, "string.format", n)
		return callThrough(l, f)
	})
}

// guardConcat refuses to build a string over maxStringLen: table.concat of a thousand
// 1 MiB strings grew the heap by a GiB in one call.
func guardConcat(l *lua.LState, f *lua.LFunction) *lua.LFunction {
	return l.NewFunction(func(l *lua.LState) int {
		t := l.CheckTable(1)
		sep := l.OptString(2, "")
		first := l.OptInt(3, 1)
		last := l.OptInt(4, t.Len())
		total := 0
		for i := first; i <= last; i++ {
			if s, ok := t.RawGetInt(i).(lua.LString); ok {
				total += len(s)
			} else {
				total += 24 // a number's digits at most
			}
			if i > first {
				total += len(sep)
			}
			if total > maxStringLen {
				l.RaiseError("table.concat would build a string longer than %d bytes", maxStringLen)
				return 0
			}
		}
		chargeString(l, "table.concat", total)
		return callThrough(l, f)
	})
}

// patternCaptures counts the captures a Lua pattern opens: "(" that is neither escaped
// ("%(") nor inside a set ("[(]").
func patternCaptures(pattern string) int {
	n := 0
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '%':
			i++
		case '[':
			// A set runs to the next "]" that is not its first character or escaped.
			i++
			if i < len(pattern) && pattern[i] == '^' {
				i++
			}
			if i < len(pattern) && pattern[i] == ']' {
				i++
			}
			for i < len(pattern) && pattern[i] != ']' {
				if pattern[i] == '%' {
					i++
				}
				i++
			}
		case '(':
			n++
		}
	}
	return n
}
