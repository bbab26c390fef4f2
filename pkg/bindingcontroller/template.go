// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"errors"
	"fmt"
	"time"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/cacheable"
	"github.com/binding-controller/binding-controller/pkg/cachecompact"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// templateCacheSyncTimeout bounds how long a read waits for the cache of a template kind
// it reads for the first time. A kind the cache can never list is refused before that
// (cacheable.Kinds); this is the last guard, so that a list that hangs for another
// reason costs a worker this long and a retry, not the worker.
const templateCacheSyncTimeout = 30 * time.Second

// fetchTemplate reads the resource template the binding names, of whatever kind, from the
// cache. The cache is believed only when it holds the incarnation (UID) and at least the
// version (resourceVersion) the binding was made from; otherwise the API server is asked.
// Karmada's detector writes the template's resourceVersion into the binding when the
// template changes, and the binding's event may reach this process before the template's
// does: rendering the cached copy then would write the old template and call it synced.
func (r *Reconciler) fetchTemplate(ctx context.Context, s *scope) (*unstructured.Unstructured, error) {
	ref := s.binding.Spec.Resource
	if ref.APIVersion == "" || ref.Kind == "" || ref.Name == "" {
		return nil, &inputError{fmt.Errorf("%s names no resource template: spec.resource needs apiVersion, kind and name", s)}
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, &inputError{fmt.Errorf("%s: spec.resource.apiVersion %q: %w", s, ref.APIVersion, err)}
	}
	gvk := gv.WithKind(ref.Kind)
	mapping, err := r.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, &inputError{fmt.Errorf("%s: the API server does not serve %s", s, gvk)}
	}
	if err != nil {
		return nil, err
	}
	var refusal *cacheable.Refusal
	if err := r.TemplateKinds.Check(ctx, mapping); errors.As(err, &refusal) {
		return nil, &inputError{fmt.Errorf("%s: resource template %s: %w", s, gvk, err)}
	} else if err != nil {
		return nil, err
	}
	key := types.NamespacedName{Name: ref.Name}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		key.Namespace = ref.Namespace
		if key.Namespace == "" {
			key.Namespace = s.obj.GetNamespace()
		}
	}

	template := &unstructured.Unstructured{}
	template.SetGroupVersionKind(gvk)
	if r.CacheSynced != nil && !r.CacheSynced(template) {
		// Its kind's cache is still listing after a start: a fresh change does not wait.
		return r.liveTemplate(ctx, gvk, key)
	}
	cacheCtx, cancel := context.WithTimeout(ctx, templateCacheSyncTimeout)
	err = r.Client.Get(cacheCtx, key, template)
	cancel()
	if err == nil && cacheHolds(template, ref) {
		return template, cachecompact.Expand(template)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		if ctx.Err() == nil && cacheCtx.Err() != nil {
			return nil, fmt.Errorf("the cache of %s did not sync within %s: %w", gvk, templateCacheSyncTimeout, err)
		}
		return nil, err
	}
	return r.liveTemplate(ctx, gvk, key)
}

// liveTemplate reads a template from the API server.
func (r *Reconciler) liveTemplate(ctx context.Context, gvk schema.GroupVersionKind, key types.NamespacedName) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	if err := r.APIReader.Get(ctx, key, live); err != nil {
		return nil, err
	}
	return live, nil
}

// cacheHolds tells whether a cached template is the incarnation the binding names, at
// the version the binding was made from or later. Resource versions compare as numbers
// (KEP-5504); one that does not is believed only when equal.
func cacheHolds(cached *unstructured.Unstructured, ref workv1alpha2.ObjectReference) bool {
	if ref.UID != "" && cached.GetUID() != ref.UID {
		return false
	}
	if ref.ResourceVersion == "" || ref.ResourceVersion == cached.GetResourceVersion() {
		return true
	}
	cmp, err := resourceversion.CompareResourceVersion(cached.GetResourceVersion(), ref.ResourceVersion)
	return err == nil && cmp >= 0
}

// templateCacheWarmer starts the cache of every template kind the cached bindings name as
// soon as the bindings are cached, alongside the Works' cache. Template caches are
// otherwise started by the first sync that reads a template of their kind: after a
// restart with 10,000 Deployments behind 100,000 Works, the re-verifications would read
// them live one by one. The workers do not wait for these caches (workcache): until its
// kind's cache has synced, a template is read from the API server. A kind the warmer
// misses is started by its first read.
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
