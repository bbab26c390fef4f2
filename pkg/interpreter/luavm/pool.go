// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// DefaultTimeout is how long one script call may run: Karmada's limit.
const DefaultTimeout = time.Second

// ErrTimeout says a script ran past its time limit.
var ErrTimeout = errors.New("the script ran past its time limit")

// Pool runs scripts on at most Size Lua states at once. A state is reused only after a
// call that succeeded and changed nothing shared: a failed call (an error, a timeout) may
// leave it half-way through, so it is closed and a fresh one made when needed.
type Pool struct {
	timeout time.Duration
	slots   chan struct{}

	mu     sync.Mutex
	idle   []*state
	protos map[string]compiled
}

// maxCachedScripts bounds the compiled-script cache; customizations are few, and a full
// cache is simply dropped and refilled.
const maxCachedScripts = 512

// NewPool returns a pool of size states whose calls each run at most timeout (zero:
// DefaultTimeout).
func NewPool(size int, timeout time.Duration) *Pool {
	if size < 1 {
		size = 1
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Pool{timeout: timeout, slots: make(chan struct{}, size), protos: map[string]compiled{}}
}

// A state is a pooled Lua state, the goroutine its calls run on, and what its shared
// tables held when it was made. Calls run on a goroutine of the state's own so that a
// caller can leave a call that outlives its deadline; the goroutine lives as long as the
// state, so that its stack, grown by the first call, serves the next (a goroutine per call
// cost more than the call).
type state struct {
	l        *lua.LState
	work     chan func()
	pristine []pristineTable
	// added is set when a script adds a key to a shared table (their __newindex).
	added bool
}

type pristineTable struct {
	t       *lua.LTable
	entries map[string]lua.LValue
}

// sharedTables are the tables every call on a state reads through: the globals (a script
// reaches them as _G), the libraries and the kube module.
func sharedTables(l *lua.LState) []*lua.LTable {
	tables := []*lua.LTable{l.G.Global}
	for _, name := range []string{lua.StringLibName, lua.TabLibName, lua.MathLibName, lua.OsLibName} {
		if t, ok := l.G.Global.RawGetString(name).(*lua.LTable); ok {
			tables = append(tables, t)
		}
	}
	if t, ok := l.G.Registry.RawGetString(kubeRegistryKey).(*lua.LTable); ok {
		tables = append(tables, t)
	}
	return tables
}

// newPooledState makes a state and records its shared tables. Their metatables (out of
// scripts' reach: getmetatable is removed) note a key added; a key changed or removed is
// found by comparing with the record.
func newPooledState() (*state, error) {
	l, err := newState()
	if err != nil {
		return nil, err
	}
	s := &state{l: l, work: make(chan func())}
	go func() {
		for f := range s.work {
			f()
		}
	}()
	noteAdded := l.NewFunction(func(l *lua.LState) int {
		s.added = true
		l.CheckTable(1).RawSet(l.Get(2), l.Get(3))
		return 0
	})
	for _, t := range sharedTables(l) {
		entries := map[string]lua.LValue{}
		t.ForEach(func(k, v lua.LValue) {
			if key, ok := k.(lua.LString); ok {
				entries[string(key)] = v
			}
		})
		s.pristine = append(s.pristine, pristineTable{t: t, entries: entries})
		meta := l.CreateTable(0, 1)
		meta.RawSetString("__newindex", noteAdded)
		l.SetMetatable(t, meta)
	}
	return s, nil
}

// untouched tells whether the shared tables hold what they held when the state was made.
// A script that changed one (math.max = function() return 1000 end, _G.print = nil,
// string.split = …) leaves a state that must not serve another call: results would
// depend on which pooled state a call happened to draw. The check allocates nothing; only
// the call that changed something pays, for a fresh state.
func (s *state) untouched() bool {
	if s.added {
		return false
	}
	for _, p := range s.pristine {
		for k, v := range p.entries {
			if p.t.RawGetString(k) != v {
				return false
			}
		}
	}
	return true
}

// abandonAfter is how long past its deadline a call is waited for. Every step of a call
// is bounded (budget.go), so a call ends soon after its deadline; should one not, its
// caller and its pool slot go on without it, and its state is closed when it ends.
const abandonAfter = 200 * time.Millisecond

// ErrAbandoned says a call was left running past its deadline.
var ErrAbandoned = errors.New("the script did not stop at its time limit and was abandoned")

// callResult is what a call's goroutine hands back.
type callResult struct {
	v   any
	err error
}

// call runs script, then calls its global function fn with args (JSON-shaped Go values)
// and returns what convert makes of fn's single result. The call runs on a goroutine of
// its own, within its budget, so that its caller waits at most the time limit and a bit.
func (p *Pool) call(ctx context.Context, script, fn string, args []any, convert func(lua.LValue) (any, error)) (any, error) {
	proto, err := p.compile(script)
	if err != nil {
		return nil, err
	}
	if err := p.waitForSlot(ctx); err != nil {
		return nil, err
	}
	defer func() { <-p.slots }()
	s, err := p.take()
	if err != nil {
		return nil, err
	}
	b := newBudget(ctx, s.l, time.Now().Add(p.timeout))
	c := &callerInputs{}
	done := make(chan callResult, 1)
	s.work <- func() {
		v, err := run(b, s.l, proto, fn, args, c, convert)
		done <- callResult{v, p.settle(s, b, err)}
	}
	abandon := time.NewTimer(p.timeout + abandonAfter)
	defer abandon.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-abandon.C:
		c.leave()
		return nil, fmt.Errorf("%w (%s)", ErrAbandoned, p.timeout)
	}
}

// callerInputs guards what a call reads of its caller's values (the arguments, and the
// input object that convert consults): once the caller has left, an abandoned call must
// not read them while the caller may change them.
type callerInputs struct {
	mu   sync.Mutex
	left bool
}

// use runs f unless the caller has left.
func (c *callerInputs) use(f func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left {
		return ErrAbandoned
	}
	return f()
}

func (c *callerInputs) leave() {
	c.mu.Lock()
	c.left = true
	c.mu.Unlock()
}

// waitForSlot takes a slot, waiting at most one call's time: no call holds its slot
// longer.
func (p *Pool) waitForSlot(ctx context.Context) error {
	select {
	case p.slots <- struct{}{}:
		return nil
	default:
	}
	wait := time.NewTimer(p.timeout)
	defer wait.Stop()
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for a Lua state: %w", ctx.Err())
	case <-wait.C:
		return fmt.Errorf("%w: no Lua state was free within %s", ErrTimeout, p.timeout)
	}
}

// settle returns the state to the pool or closes it, and says what ended a failed call: a
// bound of the budget (the script's doing, met again on every run) or the deadline.
func (p *Pool) settle(s *state, b *budget, err error) error {
	s.l.RemoveContext()
	if err != nil {
		s.close()
		switch {
		case errors.Is(b.err, ErrBudget):
			return boundError{err: shorten(err)}
		case errors.Is(b.err, context.DeadlineExceeded):
			return fmt.Errorf("%w (%s)", ErrTimeout, p.timeout)
		}
		return shorten(err)
	}
	if !s.untouched() {
		s.close()
		return nil
	}
	p.give(s)
	return nil
}

// boundError is a call that went past a bound of its budget; its text is the script's
// error, which names the bound.
type boundError struct{ err error }

func (e boundError) Error() string   { return e.err.Error() }
func (e boundError) Unwrap() []error { return []error{e.err, ErrBudget} }

// maxErrorBytes bounds a script's error text: a script can raise an error of a MiB, and
// the error is kept and logged for every cluster it fails (events and the condition cut
// their own texts).
const maxErrorBytes = 1024

func shorten(err error) error {
	if msg := err.Error(); len(msg) > maxErrorBytes {
		return errors.New(msg[:maxErrorBytes] + "...")
	}
	return err
}

func run(b *budget, l *lua.LState, proto *lua.FunctionProto, fn string, args []any, c *callerInputs, convert func(lua.LValue) (any, error)) (any, error) {
	l.SetContext(b)
	// Each call gets its own global table, reading through to the libraries, so what
	// one script defines is not seen by the next script on this state.
	// NewTable would reserve room for 32 entries in each; a script defines a function or two.
	env := l.CreateTable(0, 4)
	meta := l.CreateTable(0, 1)
	meta.RawSetString("__index", l.G.Global)
	l.SetMetatable(env, meta)

	chunk := l.NewFunctionFromProto(proto)
	chunk.Env = env
	l.Push(chunk)
	if err := l.PCall(0, 0, nil); err != nil {
		return nil, fmt.Errorf("running the script: %w", err)
	}
	f := env.RawGetString(fn)
	if f.Type() != lua.LTFunction {
		return nil, fmt.Errorf("the script defines no function %s (found %s)", fn, f.Type())
	}
	largs := make([]lua.LValue, len(args))
	err := c.use(func() error {
		for i, a := range args {
			v, err := toLua(l, a)
			if err != nil {
				return fmt.Errorf("passing argument %d to %s: %w", i+1, fn, err)
			}
			largs[i] = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := l.CallByParam(lua.P{Fn: f, NRet: 1, Protect: true}, largs...); err != nil {
		return nil, fmt.Errorf("calling %s: %w", fn, err)
	}
	ret := l.Get(-1)
	l.Pop(l.GetTop())
	var v any
	err = c.use(func() error {
		var err error
		v, err = convert(ret)
		return err
	})
	return v, err
}

// compiled is a script's compiled form, or why it has none; failures are kept too, so a
// script that cannot compile is parsed once, not on every call.
type compiled struct {
	proto *lua.FunctionProto
	err   error
}

func (p *Pool) compile(script string) (*lua.FunctionProto, error) {
	p.mu.Lock()
	c, ok := p.protos[script]
	p.mu.Unlock()
	if ok {
		return c.proto, c.err
	}
	c.proto, c.err = compileScript(script)
	p.mu.Lock()
	if len(p.protos) >= maxCachedScripts {
		p.protos = map[string]compiled{}
	}
	p.protos[script] = c
	p.mu.Unlock()
	return c.proto, c.err
}

func compileScript(script string) (*lua.FunctionProto, error) {
	if len(script) > maxScriptBytes {
		return nil, fmt.Errorf("the script is %d bytes, longer than %d", len(script), maxScriptBytes)
	}
	chunk, err := parse.Parse(strings.NewReader(script), "script")
	if err != nil {
		return nil, fmt.Errorf("syntax error: %w", shorten(err))
	}
	if err := checkSyntaxDepth(chunk); err != nil {
		return nil, err
	}
	proto, err := lua.Compile(chunk, "script")
	if err != nil {
		return nil, fmt.Errorf("compiling the script: %w", shorten(err))
	}
	return proto, nil
}

// close closes the Lua state and ends its goroutine; it runs on that goroutine.
func (s *state) close() {
	s.l.Close()
	close(s.work)
}

func (p *Pool) take() (*state, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		l := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return l, nil
	}
	p.mu.Unlock()
	return newPooledState()
}

func (p *Pool) give(s *state) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle = append(p.idle, s)
}
