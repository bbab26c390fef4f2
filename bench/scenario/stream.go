// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// bindingsStream is how long the API server takes to hand every ResourceBinding to a
// client that asks as an informer asks at its start (a watch sending the initial events,
// ended by a bookmark), on the idle plane, with nothing else running: no controller can
// see a change made during its restart before that stream has ended. Read: each event
// only read; Decoded: each decoded into a ResourceBinding, as an informer does. A few
// rounds of each, alternated.
type bindingsStream struct {
	Bindings int             `json:"bindings"`
	Bytes    int64           `json:"bytes"`
	Read     []time.Duration `json:"readNs"`
	Decoded  []time.Duration `json:"decodedNs"`
}

// streamRounds is how many times each way is timed.
const streamRounds = 3

// initialEventsPath asks for every ResourceBinding as a client-go informer does at its
// start (the WatchListClient request).
const initialEventsPath = "/apis/work.karmada.io/v1alpha2/resourcebindings?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"

// streamBindings times the bindings' initial stream on e's idle plane.
func (e *env) streamBindings(ctx context.Context) (*bindingsStream, error) {
	if err := wait.PlaneIdle(ctx, "bindings stream"); err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(e.plane.Admin)
	if err != nil {
		return nil, err
	}
	url := strings.TrimSuffix(e.plane.Admin.Host, "/") + initialEventsPath
	bs := &bindingsStream{}
	for range streamRounds {
		for _, decode := range []bool{false, true} {
			n, size, took, err := timeInitialEvents(ctx, hc, url, decode)
			if err != nil {
				return nil, err
			}
			bs.Bindings, bs.Bytes = n, size
			if decode {
				bs.Decoded = append(bs.Decoded, took)
			} else {
				bs.Read = append(bs.Read, took)
			}
		}
	}
	session.Logf("bindings stream: %d bindings, %s: read in %s, decoded in %s (medians of %d)", bs.Bindings,
		report.Bytes(int(bs.Bytes)), report.Dur(median(bs.Read)), report.Dur(median(bs.Decoded)), streamRounds)
	return bs, nil
}

// timeInitialEvents sends the request at url and reads its events until the bookmark that
// ends the initial ones; it says how many objects came, their bytes, and the time from
// the request sent to that bookmark.
func timeInitialEvents(ctx context.Context, hc *http.Client, url string, decode bool) (int, int64, time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the watch
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, 0, err
	}
	req.Header.Set("Accept", "application/json")
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return 0, 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, 0, fmt.Errorf("streaming the bindings: %s", resp.Status)
	}
	n, size, err := readInitialEvents(resp.Body, decode)
	return n, size, time.Since(start), err
}

// bindingDecoder decodes a binding as an informer's client does, from JSON.
var bindingDecoder = serializer.NewCodecFactory(envtestutil.Scheme()).UniversalDeserializer()

// readInitialEvents reads a watch's newline-delimited JSON events up to the bookmark
// that ends the initial ones, decoding each object into a ResourceBinding when decode.
func readInitialEvents(body io.Reader, decode bool) (int, int64, error) {
	r := bufio.NewReaderSize(body, 1<<16)
	n, size := 0, int64(0)
	for {
		line, err := r.ReadBytes('\n')
		size += int64(len(line))
		if err != nil {
			return n, size, fmt.Errorf("after %d bindings, before the initial events' end: %w", n, err)
		}
		if bytes.HasPrefix(line, []byte(`{"type":"BOOKMARK"`)) {
			if bytes.Contains(line, []byte(`"k8s.io/initial-events-end":"true"`)) {
				return n, size, nil
			}
			continue
		}
		n++
		if !decode {
			continue
		}
		var ev metav1.WatchEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return n, size, err
		}
		rb := &workv1alpha2.ResourceBinding{}
		if _, _, err := bindingDecoder.Decode(ev.Object.Raw, nil, rb); err != nil {
			return n, size, err
		}
		if rb.Name == "" {
			return n, size, errors.New("a binding without a name")
		}
	}
}

// median of ds; zero for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ns := make([]float64, len(ds))
	for i, d := range ds {
		ns[i] = float64(d)
	}
	return time.Duration(report.Median(ns))
}
