// SPDX-License-Identifier: Apache-2.0

// Package restart_test restarts the controller-manager against a real kube-apiserver and
// etcd while the list of the Works is held back, as a fleet of 100,000 Works holds it for
// seconds: fresh changes must be served meanwhile, and nothing that needs every Work of a
// binding may act on the part of them known so far.
package restart_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/suite"
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
)

var (
	ctx   context.Context
	k8s   client.Client // uncached: what a user would see
	plane *suite.Plane
)

func TestRestart(t *testing.T) {
	suite.Run(t, "A restart while the Works are being listed",
		suite.Timeouts{Eventually: 20 * time.Second, Polling: 50 * time.Millisecond})
}

var _ = BeforeSuite(func() {
	plane = suite.StartPlane(suite.PlaneOptions{
		CRDs:      []string{envtestutil.KarmadaCRDDir()},
		Members:   []string{"member1", "member2"},
		Simulator: 50 * time.Millisecond,
	})
	ctx, k8s = plane.Ctx, plane.Client
})

// startManager starts a fresh controller-manager in-process on cfg; the returned function
// stops it.
func startManager(cfg *rest.Config) (stop func()) {
	opts := testkit.InProcessOptions()
	opts.SkipControllerNameValidation = true // a restart builds a second one
	return plane.RunManager(cfg, opts)
}

// listGate holds back every list and watch of all Works that selects no label: the
// informer's initial list and the ledger's paged one. A list of one binding's Works, by
// its permanent-id label, goes through.
type listGate struct {
	open chan struct{}
	held atomic.Int32
}

func newListGate() *listGate { return &listGate{open: make(chan struct{})} }

// config returns a copy of cfg whose requests pass through the gate.
func (g *listGate) config(cfg *rest.Config) *rest.Config {
	gated := rest.CopyConfig(cfg)
	gated.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/works") && req.URL.Query().Get("labelSelector") == "" {
				g.held.Add(1)
				select {
				case <-g.open:
				case <-req.Context().Done():
					return nil, req.Context().Err()
				}
			}
			return rt.RoundTrip(req)
		})
	})
	return gated
}

func (g *listGate) release() { close(g.open) }

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
