// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/pkg/cacheable"
)

// templateCacheWarmer starts the cache of every template kind the cached bindings name as
// soon as the bindings are cached, alongside the Works' cache. Template caches are
// otherwise started by the first sync that reads a template of their kind: after a
// restart with 10,000 Deployments behind 100,000 Works, that first read, and every fresh
// change behind it, waited seconds for the Deployments to list once the workers had
// started. It runs with the manager's caches (GetCache), so that the workers start once
// these caches too have synced; a kind it misses is started by its first read, as before.
type templateCacheWarmer struct {
	cache    cache.Cache
	mapper   meta.RESTMapper
	kinds    *cacheable.Kinds
	bindings []bindingAPI
	log      logr.Logger
}

// GetCache puts the warmer in the manager's cache group.
func (w *templateCacheWarmer) GetCache() cache.Cache { return w.cache }

// Start returns once it has started the template caches; they run with the manager's.
func (w *templateCacheWarmer) Start(ctx context.Context) error {
	gvks := sets.New[schema.GroupVersionKind]()
	for _, k := range w.bindings {
		informer, err := w.cache.GetInformer(ctx, k.newObject(), cache.BlockUntilSynced(false))
		if err != nil {
			w.log.Error(err, "Not warming template caches: the bindings' cache did not start")
			return nil
		}
		if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
			return informer.HasSynced(), nil
		}); err != nil {
			return nil
		}
		list := k.newList()
		if err := w.cache.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			w.log.Error(err, "Not warming template caches: listing cached bindings")
			return nil
		}
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			ref := k.specOf(o.(client.Object)).Resource
			if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && ref.Kind != "" {
				gvks.Insert(gv.WithKind(ref.Kind))
			}
			return nil
		})
	}
	started := 0
	for gvk := range gvks {
		mapping, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil || w.kinds.Check(ctx, mapping) != nil {
			continue // the sync of a binding that names it says why
		}
		template := &unstructured.Unstructured{}
		template.SetGroupVersionKind(gvk)
		if _, err := w.cache.GetInformer(ctx, template, cache.BlockUntilSynced(false)); err == nil {
			started++
		}
	}
	w.log.Info("Started the caches of the template kinds the bindings name", "kinds", started)
	return nil
}
