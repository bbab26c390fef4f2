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
// call that succeeded: a failed call (an error, a timeout) may leave it half-way through,
// so it is closed and a fresh one made when needed.
type Pool struct {
	timeout time.Duration
	slots   chan struct{}

	mu     sync.Mutex
	idle   []*state
	protos map[string]*lua.FunctionProto
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
	return &Pool{timeout: timeout, slots: make(chan struct{}, size), protos: map[string]*lua.FunctionProto{}}
}

// A state is a pooled Lua state and what its shared tables held when it was made.
type state struct {
	l        *lua.LState
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
	s := &state{l: l}
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

// Call runs script, then calls its global function fn with args (JSON-shaped Go values)
// and returns fn's single result, still a Lua value, to convert, which is called with the
// state before it goes back to the pool.
func (p *Pool) call(ctx context.Context, script, fn string, args []any, convert func(lua.LValue) error) error {
	proto, err := p.compile(script)
	if err != nil {
		return err
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting for a Lua state: %w", ctx.Err())
	}
	defer func() { <-p.slots }()
	s, err := p.take()
	if err != nil {
		return err
	}
	l := s.l
	callCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	err = run(callCtx, l, proto, fn, args, convert)
	if err != nil {
		if errors.Is(callCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("%w (%s)", ErrTimeout, p.timeout)
		}
		l.Close()
		return err
	}
	l.RemoveContext()
	if !s.untouched() {
		l.Close()
		return nil
	}
	p.give(s)
	return nil
}

func run(ctx context.Context, l *lua.LState, proto *lua.FunctionProto, fn string, args []any, convert func(lua.LValue) error) error {
	l.SetContext(ctx)
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
		return fmt.Errorf("running the script: %w", err)
	}
	f := env.RawGetString(fn)
	if f.Type() != lua.LTFunction {
		return fmt.Errorf("the script defines no function %s (found %s)", fn, f.Type())
	}
	largs := make([]lua.LValue, len(args))
	for i, a := range args {
		v, err := toLua(l, a)
		if err != nil {
			return fmt.Errorf("passing argument %d to %s: %w", i+1, fn, err)
		}
		largs[i] = v
	}
	if err := l.CallByParam(lua.P{Fn: f, NRet: 1, Protect: true}, largs...); err != nil {
		return fmt.Errorf("calling %s: %w", fn, err)
	}
	ret := l.Get(-1)
	l.Pop(l.GetTop())
	return convert(ret)
}

func (p *Pool) compile(script string) (*lua.FunctionProto, error) {
	p.mu.Lock()
	proto, ok := p.protos[script]
	p.mu.Unlock()
	if ok {
		return proto, nil
	}
	chunk, err := parse.Parse(strings.NewReader(script), "script")
	if err != nil {
		return nil, fmt.Errorf("syntax error: %w", err)
	}
	proto, err = lua.Compile(chunk, "script")
	if err != nil {
		return nil, fmt.Errorf("compiling the script: %w", err)
	}
	p.mu.Lock()
	if len(p.protos) >= maxCachedScripts {
		p.protos = map[string]*lua.FunctionProto{}
	}
	p.protos[script] = proto
	p.mu.Unlock()
	return proto, nil
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
