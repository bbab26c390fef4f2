// SPDX-License-Identifier: Apache-2.0

package workcache

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recordingBody says, at each read, whether the fresh sync had ended by then.
type recordingBody struct {
	io.Reader
	ended   *atomic.Bool
	readEnd chan bool
}

func (b *recordingBody) Read(p []byte) (int, error) {
	b.readEnd <- b.ended.Load()
	return b.Reader.Read(p)
}

func (b *recordingBody) Close() error { return nil }

type bodyTransport struct{ body io.ReadCloser }

func (t bodyTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: t.body}, nil
}

// readThrough sends one request through a yielding transport over body and reads its
// response body whole in the background.
func readThrough(t *testing.T, y *yielder, body io.ReadCloser) <-chan string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://api/apis/work.karmada.io/v1alpha1/works?watch=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := yielding{y: y, next: bodyTransport{body}}.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(resp.Body)
		out <- string(b)
	}()
	return out
}

func newRecordingBody(ended *atomic.Bool) *recordingBody {
	return &recordingBody{Reader: strings.NewReader("initial events"), ended: ended, readEnd: make(chan bool, 16)}
}

// While a fresh sync runs, the initial lists' stream is not read: the read that was
// waiting comes only once the sync has ended.
func TestTheInitialListsWaitForAFreshSync(t *testing.T) {
	fresh := NewFreshSyncs()
	y := &yielder{fresh: fresh, listed: make(chan struct{}), allowance: time.Hour, sent: time.Now}
	var ended atomic.Bool
	body := newRecordingBody(&ended)
	end := fresh.Begin()
	out := readThrough(t, y, body)
	ended.Store(true)
	end()
	if endedFirst := <-body.readEnd; !endedFirst {
		t.Error("the stream was read while a fresh sync ran")
	}
	if got := <-out; got != "initial events" {
		t.Errorf("read %q, want the whole stream", got)
	}
	end() // a second end changes nothing: none runs, and reads go on at once
	if _, open := <-fresh.whenIdle(); open || fresh.Running() != 0 {
		t.Errorf("after a second end: %d running", fresh.Running())
	}
}

// The lists never wait once they are in, nor beyond their budget: a sync that never ends
// does not stop them.
func TestTheInitialListsYieldWithinLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		listed bool
		budget time.Duration
	}{
		{"the initial lists are in", true, time.Hour},
		{"the budget is spent", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fresh := NewFreshSyncs()
			listed := make(chan struct{})
			if tc.listed {
				close(listed)
			}
			y := &yielder{fresh: fresh, listed: listed, allowance: tc.budget, sent: time.Now}
			fresh.Begin() // never ends
			var ended atomic.Bool
			body := newRecordingBody(&ended)
			if got := <-readThrough(t, y, body); got != "initial events" {
				t.Errorf("read %q, want the whole stream", got)
			}
		})
	}
}

// Yielding spends the budget: with an allowance of a moment, a stream held by a sync
// that never ends is read after that moment.
func TestYieldingSpendsTheBudget(t *testing.T) {
	fresh := NewFreshSyncs()
	sent := time.Now()
	y := &yielder{fresh: fresh, listed: make(chan struct{}), allowance: 50 * time.Millisecond, sent: func() time.Time { return sent }}
	fresh.Begin()
	var ended atomic.Bool
	if got := <-readThrough(t, y, newRecordingBody(&ended)); got != "initial events" {
		t.Errorf("read %q, want the whole stream", got)
	}
	y.mu.Lock()
	defer y.mu.Unlock()
	if y.yielded < 50*time.Millisecond {
		t.Errorf("yielded %s; want at least the allowance", y.yielded)
	}
}
