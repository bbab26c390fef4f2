// SPDX-License-Identifier: Apache-2.0

package workcache

import (
	"io"
	"net/http"
	"sync"
	"time"
)

// FreshSyncs counts the syncs of fresh changes running while the split-off caches make
// their initial lists. Those lists (100,000 Works' metadata, 10,000 Deployments) keep
// both the API server and this process busy for seconds on two cores, and a sync made
// meanwhile waited on both: its reads and writes answered slowly, its own CPU shared with
// the decoding. While a fresh sync runs, the lists' streams are not read (yielding): the
// API server stops sending once the connection's window is full, and both sides leave the
// machine to the sync. The lists still make progress: they yield for at most
// yieldAllowance plus half of the time since they were sent.
type FreshSyncs struct {
	mu      sync.Mutex
	running int
	// idle is closed while no fresh sync runs.
	idle chan struct{}
}

// NewFreshSyncs returns a FreshSyncs with none running.
func NewFreshSyncs() *FreshSyncs {
	f := &FreshSyncs{idle: make(chan struct{})}
	close(f.idle)
	return f
}

// Begin counts a fresh sync as running until end is called; end may be called more than
// once.
func (f *FreshSyncs) Begin() (end func()) {
	f.mu.Lock()
	if f.running == 0 {
		f.idle = make(chan struct{})
	}
	f.running++
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			if f.running--; f.running == 0 {
				close(f.idle)
			}
			f.mu.Unlock()
		})
	}
}

// Running is how many fresh syncs run now.
func (f *FreshSyncs) Running() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running
}

// whenIdle is closed once no fresh sync runs.
func (f *FreshSyncs) whenIdle() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.idle
}

// yieldAllowance is how long the initial lists may yield before they have run that long
// themselves: the first syncs after a start (the changes made while the controller was
// down, or while it listed the bindings) come exactly when the lists are sent.
const yieldAllowance = time.Second

// yielder holds the split-off caches' reads back while fresh syncs run, within the
// lists' budget, until listed is closed: the initial lists are in, and the watches that
// follow carry single changes, which nothing holds back.
type yielder struct {
	fresh  *FreshSyncs
	listed <-chan struct{}
	// sent is when the lists were sent: the budget grows from then.
	sent      func() time.Time
	allowance time.Duration

	mu      sync.Mutex
	yielded time.Duration
}

// wait returns once no fresh sync runs, the lists are in, or the budget is spent.
func (y *yielder) wait() {
	select {
	case <-y.listed:
		return
	default:
	}
	idle := y.fresh.whenIdle()
	select {
	case <-idle:
		return
	default:
	}
	budget := y.budget()
	if budget <= 0 {
		return
	}
	t := time.NewTimer(budget)
	defer t.Stop()
	began := time.Now()
	select {
	case <-idle:
	case <-y.listed:
	case <-t.C:
	}
	y.mu.Lock()
	y.yielded += time.Since(began)
	y.mu.Unlock()
}

func (y *yielder) budget() time.Duration {
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.allowance + time.Since(y.sent())/2 - y.yielded
}

// yielding wraps the split-off cache's transport: every response body it returns waits
// (yielder.wait) before each read.
type yielding struct {
	y    *yielder
	next http.RoundTripper
}

func (t yielding) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = &yieldingBody{ReadCloser: resp.Body, y: t.y}
	}
	return resp, err
}

type yieldingBody struct {
	io.ReadCloser
	y *yielder
}

func (b *yieldingBody) Read(p []byte) (int, error) {
	b.y.wait()
	return b.ReadCloser.Read(p)
}
