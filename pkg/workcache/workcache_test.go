// SPDX-License-Identifier: Apache-2.0

package workcache

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

func metadata(kind string) runtime.Object {
	gvk := workv1alpha1.GroupVersion.WithKind(kind)
	if kind == "WorkList" {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(gvk)
		return l
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// Every form of a Work, one object or a list, typed or metadata only, and every template
// (read as unstructured) goes to the split-off cache; the bindings to theirs; everything
// else to the manager's, which is the only one waited for.
func TestWorksAreServedApart(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := workv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := workv1alpha2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	main, bindings, split := &informertest.FakeInformers{}, &informertest.FakeInformers{}, &informertest.FakeInformers{}
	c := &Cache{Cache: main, bindings: bindings, split: split, kind: schema.GroupKind{Group: workv1alpha1.GroupVersion.Group, Kind: "Work"}, scheme: scheme,
		bindingKinds: []schema.GroupKind{workv1alpha2.GroupVersion.WithKind("ResourceBinding").GroupKind(), workv1alpha2.GroupVersion.WithKind("ClusterResourceBinding").GroupKind()}}
	for _, tc := range []struct {
		name string
		obj  runtime.Object
		want any
	}{
		{"a Work's metadata", metadata("Work"), split},
		{"a list of Works' metadata", metadata("WorkList"), split},
		{"a typed Work", &workv1alpha1.Work{}, split},
		{"a typed list of Works", &workv1alpha1.WorkList{}, split},
		{"a template read as unstructured", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}, split},
		{"a list of templates", &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList"}}, split},
		{"a ResourceBinding", &workv1alpha2.ResourceBinding{}, bindings},
		{"a list of ResourceBindings", &workv1alpha2.ResourceBindingList{}, bindings},
		{"a list of ClusterResourceBindings", &workv1alpha2.ClusterResourceBindingList{}, bindings},
		{"a Deployment", &appsv1.Deployment{}, main},
		{"a list of Deployments", &appsv1.DeploymentList{}, main},
	} {
		if got := c.cacheFor(tc.obj); got != tc.want {
			t.Errorf("%s: served by the wrong cache", tc.name)
		}
	}
}

// A request of the split-off cache waits until the manager's cache has synced; one whose
// context ends meanwhile never reaches the API server.
func TestSplitOffRequestsWaitForTheManagersSync(t *testing.T) {
	var reached atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	defer server.Close()
	open := make(chan struct{})
	held := &http.Client{Transport: heldBack{until: open, next: http.DefaultTransport}}

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, server.URL, nil)
	errs := make(chan error, 1)
	go func() {
		_, err := held.Do(req) //nolint:bodyclose // never answered
		errs <- err
	}()
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) || reached.Load() != 0 {
		t.Fatalf("request ended before the sync: %v, %d reached the server; want it held back and canceled", err, reached.Load())
	}

	close(open)
	resp, err := held.Get(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if reached.Load() != 1 {
		t.Fatalf("%d requests reached the server after the sync, want 1", reached.Load())
	}
}

// syncGate is a manager's cache whose sync ends when the test says so.
type syncGate struct {
	cache.Cache
	asked, synced chan struct{}
}

func (g *syncGate) Start(ctx context.Context) error { <-ctx.Done(); return nil }

func (g *syncGate) WaitForCacheSync(ctx context.Context) bool {
	close(g.asked)
	select {
	case <-g.synced:
		return true
	case <-ctx.Done():
		return false
	}
}

// Start lets the split-off requests through once the manager's cache and the bindings'
// have synced, not before either.
func TestSplitOffListsAreSentOnceTheManagersCacheAndTheBindingsHaveSynced(t *testing.T) {
	main := &syncGate{asked: make(chan struct{}), synced: make(chan struct{})}
	bindings := &syncGate{asked: make(chan struct{}), synced: make(chan struct{})}
	c := &Cache{Cache: main, bindings: bindings, split: &syncGate{}, listsSent: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = c.Start(ctx) }()
	for _, step := range []struct {
		name string
		gate *syncGate
	}{{"the manager's cache", main}, {"the bindings' cache", bindings}} {
		select {
		case <-step.gate.asked:
		case <-time.After(time.Minute):
			t.Fatalf("Start never waited for %s", step.name)
		}
		select {
		case <-c.listsSent:
			t.Fatalf("split-off lists sent before %s synced", step.name)
		default:
		}
		close(step.gate.synced)
	}
	select {
	case <-c.listsSent:
	case <-time.After(time.Minute):
		t.Fatal("split-off lists never sent after both caches synced")
	}
}
