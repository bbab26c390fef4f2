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
	idle   []*lua.LState
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
	l, err := p.take()
	if err != nil {
		return err
	}
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
	p.give(l)
	return nil
}

func run(ctx context.Context, l *lua.LState, proto *lua.FunctionProto, fn string, args []any, convert func(lua.LValue) error) error {
	l.SetContext(ctx)
	// Each call gets its own global table, reading through to the base library, and its
	// own copies of the other libraries, so what one script defines or changes is not
	// seen by the next script on this state.
	env := l.CreateTable(0, 8)
	meta := l.CreateTable(0, 1)
	meta.RawSetString("__index", l.G.Global)
	l.SetMetatable(env, meta)
	isolate(l, env)

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

func (p *Pool) take() (*lua.LState, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		l := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return l, nil
	}
	p.mu.Unlock()
	return newState()
}

func (p *Pool) give(l *lua.LState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle = append(p.idle, l)
}
