// SPDX-License-Identifier: Apache-2.0

// Package workcache keeps the bindings, and the Works and the resource templates, in
// caches of their own beside the manager's, so that the controllers start without waiting
// for them. controller-runtime starts no worker (and no leader election) before every
// informer of its cache has made its initial list. At 100,000 Works that list is the
// longest by far (9–13 s on two cores), and 10,000 Deployments take 3 s more; a binding
// changed meanwhile waited for all of it. Split off, they are listed while the workers
// already run: the manager waits only for the rest (policies, Clusters, interpreter
// configurations), and the reconcilers ask whether what they read has synced (Synced)
// before trusting the cache with it.
//
// The bindings come first: the Works' and templates' lists are sent once the bindings and
// the manager's kinds have synced. Sent together, the API server streamed the Works and
// the Deployments beside the bindings, and both processes, on two cores, spent that time
// decoding them: at 100,000 Works the bindings took 2.5–2.8 s to arrive. The bindings
// still take 1.5–3 s at 10,000 bindings; the workers serve the changes made meanwhile,
// reading each changed binding from the API server (bindingcontroller's
// changesWhileListing).
package workcache

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Cache is the manager's cache with the bindings' kinds served apart, and one more kind
// (the Works) with every object read as unstructured (the templates, of any kind) apart
// again: their reads, informers and indexes go to caches of their own, which start with
// the manager's but are not waited for.
type Cache struct {
	cache.Cache
	// bindings serves bindingKinds; its lists are sent at once.
	bindings     cache.Cache
	bindingKinds []schema.GroupKind
	split        cache.Cache
	kind         schema.GroupKind
	scheme       *runtime.Scheme
	// works is the form the split kind is watched in, whose informer WaitForWorks waits for.
	works client.Object
	// listsSent is closed once the manager's cache and the bindings' have synced: the
	// split-off cache's requests wait for it (heldBack).
	listsSent chan struct{}
}

// NewFunc returns the manager's NewCache: caches made with the options the manager
// passes, the kinds of bindings apart and the kind of object apart again. object is the
// form that kind is watched in (a metadata-only Work); WaitForWorks waits for its
// informer.
func NewFunc(object client.Object, bindings ...client.Object) cache.NewCacheFunc {
	return func(config *rest.Config, opts cache.Options) (cache.Cache, error) {
		main, err := cache.New(config, opts)
		if err != nil {
			return nil, err
		}
		bindingCache, err := cache.New(config, opts)
		if err != nil {
			return nil, err
		}
		var bindingKinds []schema.GroupKind
		for _, b := range bindings {
			gvk, err := apiutil.GVKForObject(b, opts.Scheme)
			if err != nil {
				return nil, err
			}
			bindingKinds = append(bindingKinds, gvk.GroupKind())
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
		return &Cache{Cache: main, bindings: bindingCache, bindingKinds: bindingKinds, split: split, kind: gvk.GroupKind(),
			scheme: opts.Scheme, works: object, listsSent: listsSent}, nil
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
	return c.cacheForKind(gvk.GroupKind())
}

func (c *Cache) cacheForKind(gk schema.GroupKind) cache.Cache {
	if gk == c.kind {
		return c.split
	}
	if slices.Contains(c.bindingKinds, gk) {
		return c.bindings
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
	return c.cacheForKind(gvk.GroupKind()).GetInformerForKind(ctx, gvk, opts...)
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

// Start runs the three caches until ctx ends or one of them fails; the Works' and
// templates' requests are sent once the manager's cache and the bindings' have synced.
func (c *Cache) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		if c.Cache.WaitForCacheSync(ctx) && c.bindings.WaitForCacheSync(ctx) {
			close(c.listsSent)
		}
	}()
	caches := []cache.Cache{c.Cache, c.bindings, c.split}
	done := make(chan error, len(caches))
	for _, each := range caches {
		go func() {
			err := each.Start(ctx)
			cancel()
			done <- err
		}()
	}
	var errs []error
	for range caches {
		errs = append(errs, <-done)
	}
	return errors.Join(errs...)
}

// WaitForCacheSync waits for every informer but the split-off ones, the bindings' among
// them: the manager calls it before it starts the controllers.
func (c *Cache) WaitForCacheSync(ctx context.Context) bool {
	return c.Cache.WaitForCacheSync(ctx)
}

// Synced tells, without waiting, whether the informer of obj's kind has made its initial
// list; it starts that informer when there is none yet. Only the split-off objects, the
// bindings among them, can be unsynced once the manager runs its controllers.
func (c *Cache) Synced(obj client.Object) bool {
	informer, err := c.cacheFor(obj).GetInformer(context.Background(), obj, cache.BlockUntilSynced(false))
	return err == nil && informer.HasSynced()
}

// WaitForWorks waits until every split-off informer has synced, the bindings' and the
// Works' among them, or ctx ends (false).
func (c *Cache) WaitForWorks(ctx context.Context) bool {
	if _, err := c.split.GetInformer(ctx, c.works, cache.BlockUntilSynced(false)); err != nil {
		return false
	}
	return c.bindings.WaitForCacheSync(ctx) && c.split.WaitForCacheSync(ctx)
}
