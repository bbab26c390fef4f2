// SPDX-License-Identifier: Apache-2.0

// Package restart_test restarts the controller-manager against a real kube-apiserver and
// etcd while the lists of the Works and of the templates, and then of the bindings too,
// are held back, as a fleet of 100,000 Works holds them for seconds: fresh changes must be
// served meanwhile, and nothing that needs every Work of a binding may act on the part of
// them known so far.
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
	suite.Run(t, "A restart while the Works and templates are being listed",
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

// listGate holds back every list and watch of all Works or all Deployments (the
// templates) that selects no label: the informers' initial lists and the ledger's paged
// one. A list of one binding's Works by its permanent-id label goes through, and so does
// the one-item list that tells whether a template kind can be cached at all.
type listGate struct {
	open chan struct{}
	// bindings: the bindings' initial list is held back too, every list and watch of all
	// ResourceBindings but a watch from a given resourceVersion without initial events and
	// the one-item list that tells which resourceVersion that is.
	bindings bool
	// heldWorks, heldTemplates and heldBindings count the requests held back.
	heldWorks, heldTemplates, heldBindings atomic.Int32
}

func newListGate() *listGate { return &listGate{open: make(chan struct{})} }

// config returns a copy of cfg whose requests pass through the gate.
func (g *listGate) config(cfg *rest.Config) *rest.Config {
	gated := rest.CopyConfig(cfg)
	gated.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			q := req.URL.Query()
			works, templates := strings.HasSuffix(req.URL.Path, "/works"), strings.HasSuffix(req.URL.Path, "/deployments")
			bindings := g.bindings && strings.HasSuffix(req.URL.Path, "/resourcebindings") &&
				(q.Get("watch") != "true" || q.Get("sendInitialEvents") == "true" || q.Get("resourceVersion") == "")
			if req.Method == http.MethodGet && (works || templates || bindings) && q.Get("labelSelector") == "" && q.Get("limit") != "1" {
				switch {
				case works:
					g.heldWorks.Add(1)
				case templates:
					g.heldTemplates.Add(1)
				default:
					g.heldBindings.Add(1)
				}
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
