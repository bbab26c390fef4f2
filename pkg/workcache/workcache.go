// SPDX-License-Identifier: Apache-2.0

// Package workcache keeps the Works and the resource templates in a cache of their own
// beside the manager's, so that the controllers start without waiting for them.
// controller-runtime starts no worker before every informer of its cache has made its
// initial list. At 100,000 Works that list is the longest by far (9–13 s on two cores), and
// 10,000 Deployments take 3 s more; a binding changed meanwhile waited for all of it. Split
// off, they are listed while the workers already run: the manager waits only for the rest
// (bindings, policies, Clusters), and the reconcilers ask whether what they read has
// synced (Synced) before trusting the cache with it.
//
// The split-off lists are sent once the manager's have synced. Sent together, the API
// server streamed the Works and the Deployments beside the bindings, and both processes,
// on two cores, spent that time decoding them: at 100,000 Works the bindings took 2.5–2.8 s
// to arrive, and a binding changed during a restart cannot be served before it is listed.
package workcache

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Cache is the manager's cache with one kind, and every object read as unstructured (the
// templates, of any kind), served apart: their reads, informers and indexes go to a cache
// of their own, which starts with the other but is not waited for.
type Cache struct {
	cache.Cache
	split  cache.Cache
	kind   schema.GroupKind
	scheme *runtime.Scheme
	// works is the form the split kind is watched in, whose informer WaitForWorks waits for.
	works client.Object
	// listsSent is closed once the manager's cache has synced: the split-off cache's
	// requests wait for it (heldBack).
	listsSent chan struct{}
}

// NewFunc returns the manager's NewCache: caches made with the options the manager
// passes, the kind of object apart. object is the form that kind is watched in (a
// metadata-only Work); WaitForWorks waits for its informer.
func NewFunc(object client.Object) cache.NewCacheFunc {
	return func(config *rest.Config, opts cache.Options) (cache.Cache, error) {
		main, err := cache.New(config, opts)
		if err != nil {
			return nil, err
		}
		listsSent := make(chan struct{})
		splitConfig := rest.CopyConfig(config)
		splitConfig.Wrap(func(next http.RoundTripper) http.RoundTripper { return heldBack{until: listsSent, next: next} })
		splitOpts := opts
		if splitOpts.HTTPClient, err = rest.HTTPClientFor(splitConfig); err != nil {
			return nil, err
		}
		split, err := cache.New(splitConfig, splitOpts)
		if err != nil {
			return nil, err
		}
		gvk, err := apiutil.GVKForObject(object, opts.Scheme)
		if err != nil {
			return nil, err
		}
		return &Cache{Cache: main, split: split, kind: gvk.GroupKind(), scheme: opts.Scheme, works: object, listsSent: listsSent}, nil
	}
}

// cacheFor returns the cache that serves obj.
func (c *Cache) cacheFor(obj runtime.Object) cache.Cache {
	if _, unstructured := obj.(runtime.Unstructured); unstructured {
		return c.split
	}
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		// Not a kind of the scheme: the manager's cache says so.
		return c.Cache
	}
	if meta.IsListType(obj) {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	if gvk.GroupKind() == c.kind {
		return c.split
	}
	return c.Cache
}

func (c *Cache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.cacheFor(obj).Get(ctx, key, obj, opts...)
}

func (c *Cache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.cacheFor(list).List(ctx, list, opts...)
}

func (c *Cache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	return c.cacheFor(obj).GetInformer(ctx, obj, opts...)
}

func (c *Cache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if gvk.GroupKind() == c.kind {
		return c.split.GetInformerForKind(ctx, gvk, opts...)
	}
	return c.Cache.GetInformerForKind(ctx, gvk, opts...)
}

func (c *Cache) RemoveInformer(ctx context.Context, obj client.Object) error {
	return c.cacheFor(obj).RemoveInformer(ctx, obj)
}

func (c *Cache) IndexField(ctx context.Context, obj client.Object, field string, extractValue client.IndexerFunc) error {
	return c.cacheFor(obj).IndexField(ctx, obj, field, extractValue)
}

// heldBack holds each request back until its channel is closed, or the request's context
// ends. Both caches start at once, so a read of either waits for its informer's sync as
// it always did; only the split-off lists start later.
type heldBack struct {
	until <-chan struct{}
	next  http.RoundTripper
}

func (h heldBack) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case <-h.until:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	return h.next.RoundTrip(req)
}

// Start runs both caches until ctx ends or one of them fails; the split-off cache's
// requests are sent once the manager's has synced.
func (c *Cache) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		if c.Cache.WaitForCacheSync(ctx) {
			close(c.listsSent)
		}
	}()
	done := make(chan error, 2)
	for _, each := range []cache.Cache{c.Cache, c.split} {
		go func() {
			err := each.Start(ctx)
			cancel()
			done <- err
		}()
	}
	return errors.Join(<-done, <-done)
}

// WaitForCacheSync waits for every informer but the split-off ones: the manager calls it
// before it starts the controllers.
func (c *Cache) WaitForCacheSync(ctx context.Context) bool {
	return c.Cache.WaitForCacheSync(ctx)
}

// Synced tells, without waiting, whether the informer of obj's kind has made its initial
// list; it starts that informer when there is none yet. Only the split-off objects can be
// unsynced once the manager runs its controllers.
func (c *Cache) Synced(obj client.Object) bool {
	informer, err := c.cacheFor(obj).GetInformer(context.Background(), obj, cache.BlockUntilSynced(false))
	return err == nil && informer.HasSynced()
}

// WaitForWorks waits until every split-off informer has synced, the Works' first, or ctx
// ends (false).
func (c *Cache) WaitForWorks(ctx context.Context) bool {
	if _, err := c.split.GetInformer(ctx, c.works, cache.BlockUntilSynced(false)); err != nil {
		return false
	}
	return c.split.WaitForCacheSync(ctx)
}
