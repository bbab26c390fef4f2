package luavm

import (
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	lua "github.com/yuin/gopher-lua"
	"golang.org/x/time/rate"
)

// removedBaseFunctions are the base library functions a script may not call: they load
// code from strings or files, reach around the sandbox's tables, or touch the collector.
// Each is replaced by a function that fails naming itself, so a script that uses one gets
// a clear error instead of "attempt to call a nil value".
var removedBaseFunctions = []string{
	"load", "loadstring", "dofile", "loadfile",
	"getfenv", "setfenv",
	"rawget", "rawset", "rawequal",
	"getmetatable", "setmetatable",
	"collectgarbage", "module", "newproxy",
	"_printregs",
}

// maxStringLen bounds strings built by string.rep, so one call cannot take the process's
// memory before the call's deadline stops it.
const maxStringLen = 1 << 20

// newState returns a Lua state with only the sandbox's libraries.
func newState() (*lua.LState, error) {
	l := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       256,
		RegistrySize:        1024 * 4,
		RegistryMaxSize:     1024 * 256,
		MinimizeStackMemory: true,
	})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.OsLibName, lua.OpenOs},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			l.Close()
			return nil, fmt.Errorf("opening Lua library %q: %w", lib.name, err)
		}
	}
	for _, name := range removedBaseFunctions {
		l.SetGlobal(name, l.NewFunction(notAvailable(name)))
	}
	l.SetGlobal("print", l.NewFunction(printToLog))
	restrictOs(l)
	restrictString(l)
	kube := newKubeModule(l)
	// Also kept where no script reaches, for the check that no call changed it (untouched).
	l.G.Registry.RawSetString(kubeRegistryKey, kube)
	l.SetGlobal("require", l.NewFunction(func(l *lua.LState) int {
		name := l.CheckString(1)
		if name != kubeModuleName {
			l.RaiseError("module %q is not available in the interpreter sandbox; only %q is", name, kubeModuleName)
			return 0
		}
		l.Push(kube)
		return 1
	}))
	return l, nil
}

// printLimit bounds what scripts' print calls log, all scripts together: a script that
// prints in a loop must not flood the controller's log.
var printLimit = rate.NewLimiter(rate.Limit(10), 20)

// maxPrintBytes bounds one logged print.
const maxPrintBytes = 512

// printToLog sends a script's print to the controller's log at debug level (V(4)) instead
// of its stdout, at most 10 lines a second with bursts of 20, each cut at 512 bytes.
// Karmada's sandbox prints to stdout, unbounded; a script that prints still runs.
func printToLog(l *lua.LState) int {
	ctx := l.Context()
	if ctx == nil {
		return 0
	}
	logger := logr.FromContextOrDiscard(ctx).V(4)
	if !logger.Enabled() || !printLimit.Allow() {
		return 0
	}
	var b strings.Builder
	for i := 1; i <= l.GetTop() && b.Len() < maxPrintBytes; i++ {
		if i > 1 {
			b.WriteByte('\t')
		}
		b.WriteString(l.ToStringMeta(l.Get(i)).String())
	}
	text := b.String()
	if len(text) > maxPrintBytes {
		text = text[:maxPrintBytes] + "..."
	}
	logger.Info("Lua print", "text", text)
	return 0
}

const kubeRegistryKey = "binding-controller/kube"

func notAvailable(name string) lua.LGFunction {
	return func(l *lua.LState) int {
		l.RaiseError("%s is not available in the interpreter sandbox", name)
		return 0
	}
}

// restrictOs keeps os.time and os.date: the rest of os runs programs, reads the
// environment, and removes or renames files.
func restrictOs(l *lua.LState) {
	full := l.GetGlobal(lua.OsLibName).(*lua.LTable)
	safe := l.NewTable()
	for _, name := range []string{"time", "date"} {
		safe.RawSetString(name, full.RawGetString(name))
	}
	l.SetGlobal(lua.OsLibName, safe)
}

// restrictString bounds string.rep and drops string.dump.
func restrictString(l *lua.LState) {
	str := l.GetGlobal(lua.StringLibName).(*lua.LTable)
	str.RawSetString("dump", l.NewFunction(notAvailable("string.dump")))
	rep := str.RawGetString("rep").(*lua.LFunction)
	str.RawSetString("rep", l.NewFunction(func(l *lua.LState) int {
		s := l.CheckString(1)
		n := l.CheckInt(2)
		if n > 0 && len(s) > 0 && n > maxStringLen/len(s) {
			l.RaiseError("string.rep would build a string longer than %d bytes", maxStringLen)
			return 0
		}
		top := l.GetTop()
		l.Push(rep)
		for i := 1; i <= top; i++ {
			l.Push(l.Get(i))
		}
		l.Call(top, 1)
		return 1
	}))
	for _, name := range []string{"find", "match", "gmatch", "gsub"} {
		str.RawSetString(name, guardPattern(l, name, str.RawGetString(name).(*lua.LFunction)))
	}
	str.RawSetString("format", guardFormat(l, str.RawGetString("format").(*lua.LFunction)))
	tab := l.GetGlobal(lua.TabLibName).(*lua.LTable)
	tab.RawSetString("concat", guardConcat(l, tab.RawGetString("concat").(*lua.LFunction)))
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
// Go's fmt, so "%999999999d" would build a string of a GiB.
func guardFormat(l *lua.LState, f *lua.LFunction) *lua.LFunction {
	return l.NewFunction(func(l *lua.LState) int {
		format := l.CheckString(1)
		for i := 0; i < len(format); i++ {
			if format[i] != '%' {
				continue
			}
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
		return callThrough(l, f)
	})
}

// Pattern bounds. gopher-lua's pattern parser recurses once per nested "(": a pattern of
// millions of them, built by concatenation, overflowed the Go stack, a fatal error no
// recover catches, and the restarted controller met the same binding and died again.
// Lua itself allows 32 captures (LUA_MAXCAPTURES); Karmada's bundled scripts use patterns
// of a few dozen bytes.
const (
	maxPatternLen      = 4096
	maxPatternCaptures = 32
)

// guardPattern wraps string.<name> so that a pattern past the bounds fails the call with
// a clear error before gopher-lua parses it. find with plain set takes no pattern.
func guardPattern(l *lua.LState, name string, f *lua.LFunction) *lua.LFunction {
	return l.NewFunction(func(l *lua.LState) int {
		pattern := l.CheckString(2)
		plain := name == "find" && lua.LVAsBool(l.Get(4))
		if !plain {
			if len(pattern) > maxPatternLen {
				l.RaiseError("string.%s: a pattern of %d bytes is longer than %d", name, len(pattern), maxPatternLen)
				return 0
			}
			if n := patternCaptures(pattern); n > maxPatternCaptures {
				l.RaiseError("string.%s: a pattern of %d captures has more than %d", name, n, maxPatternCaptures)
				return 0
			}
		}
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
