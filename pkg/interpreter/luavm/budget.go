// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"context"
	"errors"
	"fmt"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// A call's budget. Each bound is far past what a customization that rewrites an object
// needs (Karmada's bundled scripts and their own test cases run inside them, and so do
// the ordinary loops of TestOrdinaryLoopsStayInsideTheBounds), and each is counted the same way on every run, so a call that exceeds one exceeds it
// again on retry: ErrBudget is the script's fault, not the machine's.
const (
	// maxInstructions: ten million take about 0.16 s here, so the 1 s deadline is
	// reached only on a machine too busy to run them.
	maxInstructions = 10_000_000
	// maxSteps bounds the work of library functions that run in Go, over all of a
	// call's find, match, gmatch, gsub (a step of the pattern matcher; a plain find, one
	// per 64 bytes searched), table.sort (a comparison), string.byte, unpack,
	// table.insert and table.remove (a value pushed or moved), "#" of a table with holes
	// (the highest index the call stored in it), and kube functions (fifty per value of a
	// pod template):
	// ".-.-.-b" over 400 characters needs about 10^7 steps per start position. Ten
	// million steps take about 0.1 s here.
	maxSteps = 10_000_000
	// maxCallMemory bounds the bytes of strings and tables a call builds.
	maxCallMemory = 64 << 20
	// maxStringLen bounds any one string a call builds, by "..", string.rep, gsub,
	// format or table.concat.
	maxStringLen = 1 << 20
	// checkClockEvery is how many instructions pass between looks at the clock (a
	// look costs about 30 ns).
	checkClockEvery = 256
	// What a table costs against maxCallMemory: a new table, and each field stored.
	tableBytes = 64
	fieldBytes = 16
)

// ErrBudget says a script went past one of its call's bounds.
var ErrBudget = errors.New("the script went past its bounds")

// budget is the context a call's Lua state runs with. gopher-lua asks its Done before every
// instruction; the budget counts the instruction there and, for the instructions that
// allocate, what they will allocate, and ends the call by answering with a closed channel.
// Library functions reach it through l.Context() and charge what they build. Only the
// call's own goroutine touches it.
type budget struct {
	context.Context
	l            *lua.LState
	deadline     time.Time
	instructions int
	steps        int
	memory       int
	err          error
	// arrays is the highest integer key charged per table (chargeIndex); holes, the
	// tables whose arrays may hold nils.
	arrays map[*lua.LTable]int
	holes  map[*lua.LTable]bool
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// newBudget returns the budget of a call on l that ends at deadline or with ctx. The
// deadline is the budget's own, looked at every checkClockEvery instructions and by the
// library's long-running functions, not a context's:
// a context.WithTimeout per call cost a timer.
func newBudget(ctx context.Context, l *lua.LState, deadline time.Time) *budget {
	return &budget{Context: ctx, l: l, deadline: deadline}
}

func (b *budget) Deadline() (time.Time, bool) { return b.deadline, true }

// pastDeadline ends the call at its deadline or its caller's end.
func (b *budget) pastDeadline() bool {
	if time.Now().After(b.deadline) {
		b.exceed(context.DeadlineExceeded)
		return true
	}
	if err := b.Context.Err(); err != nil {
		b.exceed(err)
		return true
	}
	return false
}

func (b *budget) Done() <-chan struct{} {
	if b.err != nil {
		return closed
	}
	b.instructions++
	if b.instructions%checkClockEvery == 0 && b.pastDeadline() {
		return closed
	}
	if b.instructions > maxInstructions {
		b.exceed(budgetError("it ran more than %d instructions", maxInstructions))
		return closed
	}
	if inst, proto := nextInstruction(b.l); proto != nil {
		if err := b.chargeInstruction(inst, proto); err != nil {
			b.exceed(err)
			return closed
		}
	}
	return nil
}

func (b *budget) Err() error {
	if b.err != nil {
		return b.err
	}
	return b.Context.Err()
}

func (b *budget) exceed(err error) {
	if b.err == nil {
		b.err = err
	}
}

// chargeInstruction charges what an instruction is about to allocate.
func (b *budget) chargeInstruction(inst uint32, proto *lua.FunctionProto) error {
	switch opcode(inst) {
	case lua.OP_CONCAT:
		n := 0
		for r := argB(inst); r <= argC(inst); r++ {
			switch v := register(b.l, r).(type) {
			case lua.LString:
				n += len(v)
			case lua.LNumber:
				n += 24
			}
		}
		if n > maxStringLen {
			return budgetError("\"..\" would build a string of %d bytes, longer than %d", n, maxStringLen)
		}
		return b.charge(n)
	case lua.OP_NEWTABLE:
		return b.charge(tableBytes + (argB(inst)+argC(inst))*fieldBytes)
	case lua.OP_SETTABLE:
		if t, ok := register(b.l, argA(inst)).(*lua.LTable); ok {
			if registerOrConstant(b.l, proto, argC(inst)) == lua.LNil {
				b.noteHole(t)
			}
			return b.chargeIndex(t, registerOrConstant(b.l, proto, argB(inst)))
		}
		return b.charge(fieldBytes)
	case lua.OP_SETTABLEKS, lua.OP_SETGLOBAL:
		return b.charge(fieldBytes)
	case lua.OP_SETLIST:
		return b.charge(argB(inst) * fieldBytes)
	case lua.OP_CLOSURE:
		return b.charge(tableBytes)
	case lua.OP_LEN:
		// gopher-lua finds a table's length by scanning back over the nils at the end of
		// its array: for a table with holes, charge the highest index this call stored,
		// the most a scan can cover of what it built. Appending with t[#t + 1] makes no
		// holes and costs nothing here.
		if t, ok := register(b.l, argB(inst)).(*lua.LTable); ok && b.holes[t] {
			return b.chargeSteps(b.arrays[t])
		}
	}
	return nil
}

// chargeSteps counts n steps of library work.
func (b *budget) chargeSteps(n int) error {
	if b.steps += n; b.steps > maxSteps {
		return budgetError("pattern matching, sorting and the library's other work in Go took more than %d steps", maxSteps)
	}
	return nil
}

// chargeIndex charges storing t[key]. gopher-lua keeps integer keys up to 2^26 in an
// array that it fills with nils up to the key: t[60000000] = 1 makes a GiB in one store.
// Each table's highest index charged is remembered, so that filling an array in order
// costs a field per element, as it allocates.
func (b *budget) chargeIndex(t *lua.LTable, key lua.LValue) error {
	n, ok := key.(lua.LNumber)
	if !ok || n < 1 || n >= lua.LNumber(lua.MaxArrayIndex) || n != lua.LNumber(int(n)) {
		return b.charge(fieldBytes)
	}
	if b.arrays == nil {
		b.arrays = map[*lua.LTable]int{}
	}
	charged := b.arrays[t]
	if int(n) <= charged {
		return b.charge(fieldBytes)
	}
	if int(n) > charged+1 {
		b.noteHole(t)
	}
	b.arrays[t] = int(n)
	return b.charge((int(n) - charged) * fieldBytes)
}

// noteHole remembers that t's array may hold nils (chargeInstruction's OP_LEN).
func (b *budget) noteHole(t *lua.LTable) {
	if b.holes == nil {
		b.holes = map[*lua.LTable]bool{}
	}
	b.holes[t] = true
}

// charge counts n bytes built against the call's memory.
func (b *budget) charge(n int) error {
	b.memory += n
	if b.memory > maxCallMemory {
		return budgetError("it built more than %d MiB of strings and tables", maxCallMemory>>20)
	}
	return nil
}

// budgetOf returns the budget of the call running on l, or nil outside a call.
func budgetOf(l *lua.LState) *budget {
	b, _ := l.Context().(*budget)
	return b
}

// chargeSteps charges n steps of a library function that works in Go, raising the error
// in l past the call's steps or deadline.
func chargeSteps(l *lua.LState, fn string, n int) {
	b := budgetOf(l)
	if b == nil {
		return
	}
	if err := b.chargeSteps(n); err != nil {
		b.exceed(err)
	} else {
		b.pastDeadline()
	}
	if b.err != nil {
		l.RaiseError("%s: %v", fn, b.err)
	}
}

// chargeString charges a string a library function is about to build, raising the
// error in l when it is too long or past the call's memory.
func chargeString(l *lua.LState, fn string, n int) {
	if n > maxStringLen {
		l.RaiseError("%s would build a string of %d bytes, longer than %d", fn, n, maxStringLen)
	}
	if b := budgetOf(l); b != nil {
		if err := b.charge(n); err != nil {
			b.exceed(err)
			l.RaiseError("%s: %v", fn, err)
		}
	}
}

func budgetError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBudget}, args...)...)
}
