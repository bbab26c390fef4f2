// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/cacheable"
	"github.com/binding-controller/binding-controller/pkg/cachecompact"
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
