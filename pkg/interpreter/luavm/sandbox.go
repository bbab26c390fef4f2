// SPDX-License-Identifier: Apache-2.0

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

// newState returns a Lua state with only the sandbox's libraries.
func newState() (*lua.LState, error) {
	l := lua.NewState(lua.Options{
		SkipOpenLibs:    true,
		CallStackSize:   256,
		RegistrySize:    1024 * 4,
		RegistryMaxSize: 1024 * 256,
		// gopher-lua grows a state's registry (its value stack) by this much at a time,
		// copying it whole: by its default, 32, pushing 100,000 values copied GiBs.
		RegistryGrowStep:    4096,
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
	openStringFunctions(l)
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
