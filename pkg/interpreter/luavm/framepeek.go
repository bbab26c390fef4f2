// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"fmt"
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua offers no instruction hook, but with a context set it calls the context's
// Done once before each instruction (mainLoopWithContext). The budget uses that call to
// see which instruction is about to run, so that it can count what a "..", a table
// constructor or a field store will allocate before it does: a loop of s = s .. s doubles
// a string with every turn, and no check between turns could stop it in time. The
// instruction lives in the state's current call frame, which gopher-lua does not export;
// its offsets are taken from the types by reflection when the package loads, so a
// gopher-lua whose layout differs stops the process at start (and the test that pins it
// fails) instead of reading the wrong memory.
var frameLayout = mustFrameLayout()

type layout struct {
	currentFrame uintptr // LState.currentFrame, a *callFrame
	fn           uintptr // callFrame.Fn, a *lua.LFunction
	pc           uintptr // callFrame.Pc, an int: the instruction after the one about to run
}

func mustFrameLayout() layout {
	l, err := frameLayoutOf(reflect.TypeOf(lua.LState{}))
	if err != nil {
		panic(fmt.Sprintf("luavm: this gopher-lua's call frames are not laid out as expected: %v", err))
	}
	return l
}

func frameLayoutOf(state reflect.Type) (layout, error) {
	var l layout
	cf, ok := state.FieldByName("currentFrame")
	if !ok || cf.Type.Kind() != reflect.Pointer || cf.Type.Elem().Kind() != reflect.Struct {
		return l, fmt.Errorf("LState has no currentFrame pointer to a struct")
	}
	l.currentFrame = cf.Offset
	frame := cf.Type.Elem()
	for _, f := range []struct {
		name string
		typ  reflect.Type
		off  *uintptr
	}{
		{"Fn", reflect.TypeOf((*lua.LFunction)(nil)), &l.fn},
		{"Pc", reflect.TypeOf(0), &l.pc},
	} {
		sf, ok := frame.FieldByName(f.name)
		if !ok || sf.Type != f.typ {
			return l, fmt.Errorf("callFrame has no field %s of type %s", f.name, f.typ)
		}
		*f.off = sf.Offset
	}
	return l, nil
}

// nextInstruction returns the instruction the state is about to run, as seen from its
// context's Done, and the function it belongs to; nil outside a Lua function.
func nextInstruction(l *lua.LState) (uint32, *lua.FunctionProto) {
	frame := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(l), frameLayout.currentFrame))
	if frame == nil {
		return 0, nil
	}
	fn := *(**lua.LFunction)(unsafe.Add(frame, frameLayout.fn))
	pc := *(*int)(unsafe.Add(frame, frameLayout.pc))
	if fn == nil || fn.IsG || fn.Proto == nil || pc < 1 || pc > len(fn.Proto.Code) {
		return 0, nil
	}
	return fn.Proto.Code[pc-1], fn.Proto
}

// registerOrConstant returns an instruction's RK operand: a constant of the function when
// its high bit is set, else a register.
func registerOrConstant(l *lua.LState, proto *lua.FunctionProto, rk int) lua.LValue {
	const isConstant = 1 << 8
	if rk&isConstant != 0 {
		if i := rk &^ isConstant; i < len(proto.Constants) {
			return proto.Constants[i]
		}
		return lua.LNil
	}
	return register(l, rk)
}

// register returns register r of the current frame: l.Get counts from the frame's base,
// and from 1.
func register(l *lua.LState, r int) lua.LValue {
	return l.Get(r + 1)
}

// Instruction fields, as gopher-lua encodes them (opcode.go).
func opcode(inst uint32) int { return int(inst >> 26) }
func argA(inst uint32) int   { return int(inst>>18) & 0xff }
func argB(inst uint32) int   { return int(inst & 0x1ff) }
func argC(inst uint32) int   { return int(inst>>9) & 0x1ff }
