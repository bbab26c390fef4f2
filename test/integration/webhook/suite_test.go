// SPDX-License-Identifier: Apache-2.0

// Package webhook_test runs the binding controller in-process against a real
// kube-apiserver and etcd with karmada-webhook's Work mutation in front of it
// (internal/testenv/workwebhook), as on a real Karmada control plane: every Work written gets a
// permanent ID, copied into its manifests. It proves the controller's Works are then as
// cheap to keep as without the webhook: a resync or a restart writes nothing.
package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/suite"
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
)

var (
	ctx     context.Context
	plane   *suite.Plane
	k8s     client.Client // uncached: what a user would see
	sim     *executionsim.Simulator
	logs    = &testkit.SyncBuffer{}
	sent    = &requestCounter{}
	stopMgr func()
)

// members have execution namespaces from the start.
var members = []string{"member1", "member2", "member3", "member4", "member5"}

func TestBehindKarmadaWebhook(t *testing.T) {
	suite.Run(t, "Binding controller behind karmada-webhook's Work mutation",
		suite.Timeouts{Eventually: 30 * time.Second, Polling: 50 * time.Millisecond})
}

var _ = BeforeSuite(func() {
	plane = suite.StartPlane(suite.PlaneOptions{
		CRDs: []string{envtestutil.KarmadaCRDDir(),
			filepath.Join(envtestutil.ProjectCRDDir(), "cluster.karmada.io_clusters.yaml")},
		KarmadaWorkWebhook: true,
		Members:            members,
		Simulator:          50 * time.Millisecond,
		Log:                io.MultiWriter(GinkgoWriter, logs),
	})
	ctx, k8s, sim = plane.Ctx, plane.Client, plane.Sim
	// The controller's own namespace, where it keeps its Work ledger checkpoint.
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-system"}})).To(Succeed())
	startManager()
	// Cleanups run last-registered first: the controller stops before the API server.
	DeferCleanup(func() { stopMgr() })
})

// startManager starts a fresh controller-manager in-process, its requests counted.
func startManager() {
	opts := testkit.InProcessOptions()
	opts.RateLimiter.MaxDelay = 2 * time.Second
	opts.SkipControllerNameValidation = true // restartManager builds a second one
	// These specs restart from the Work ledger's checkpoint, whatever the default.
	opts.WorkLedgerCheckpointInterval = 30 * time.Second
	counted := rest.CopyConfig(plane.Config)
	counted.WrapTransport = sent.wrap
	stopMgr = plane.RunManager(counted, opts)
}

// restartManager stops the manager and starts a fresh one: nothing in memory survives.
func restartManager() {
	stopMgr()
	startManager()
}

// requestCounter counts the manager's requests to the API server as they leave it, by
// method and by what they concern: "GET work" reads one Work, "GET works" lists or
// watches them, "PUT work" updates one, "POST event" records an event. "LIST whole works"
// counts, apart, the lists of Works with their manifests (not as metadata, as the
// informer lists them): those of the ledger's priming.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		c.mu.Lock()
		if c.n == nil {
			c.n = map[string]int{}
		}
		c.n[req.Method+" "+concerns(req.URL.Path)]++
		if req.Method == http.MethodGet && concerns(req.URL.Path) == "works" && req.URL.Query().Get("watch") != "true" &&
			!strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata") {
			c.n["LIST whole works"]++
		}
		c.n["all"]++
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

func concerns(path string) string {
	switch {
	case strings.HasPrefix(path, "/apis/work.karmada.io/v1alpha1/") && strings.HasSuffix(path, "/works"):
		return "works"
	case strings.HasPrefix(path, "/apis/work.karmada.io/v1alpha1/") && strings.Contains(path, "/works/"):
		return "work"
	case strings.HasSuffix(path, "/events") || strings.Contains(path, "/events/"):
		return "event"
	}
	return "other"
}

// snapshot returns a copy of the counts so far.
func (c *requestCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

func (c *requestCounter) total() int { return c.snapshot()["all"] }

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// counter sums a counter of the in-process metrics registry, over the samples whose
// labels hold want.
func counter(name string, want map[string]string) float64 {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	samples:
		for _, m := range f.GetMetric() {
			for k, v := range want {
				found := false
				for _, l := range m.GetLabel() {
					if l.GetName() == k && l.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue samples
				}
			}
			total += m.GetCounter().GetValue()
		}
	}
	return total
}

// workWrites is binding_controller_work_writes_total of one operation.
func workWrites(op string) float64 {
	return counter("binding_controller_work_writes_total", map[string]string{"operation": op})
}

// reconciles counts the ResourceBinding reconciles finished so far, by every manager.
func reconciles() float64 {
	return counter("controller_runtime_reconcile_total", map[string]string{"controller": "resourcebinding"})
}

// settled waits until the manager has stopped sending requests and returns the counts.
func settled() map[string]int {
	_, err := testkit.Settled(sent.total, 2*time.Second, 2*time.Minute)
	Expect(err).NotTo(HaveOccurred())
	return sent.snapshot()
}

func delta(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

var nsCounter int

func newNamespace() string {
	nsCounter++
	name := fmt.Sprintf("wh-%d-%d", GinkgoParallelProcess(), nsCounter)
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}
