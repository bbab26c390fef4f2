// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/interpreter/webhook"
)

// bindingsSelectedBy maps an override policy to the bindings of this reconciler's kind whose
// templates it may select. On an update it is called for the old and the new policy, so a
// template the policy stops selecting is re-synced too.
func (r *Reconciler) bindingsSelectedBy(ctx context.Context, obj client.Object) []reconcile.Request {
	var selectors []policyv1alpha1.ResourceSelector
	switch p := obj.(type) {
	case *policyv1alpha1.OverridePolicy:
		selectors = p.Spec.ResourceSelectors
	case *policyv1alpha1.ClusterOverridePolicy:
		selectors = p.Spec.ResourceSelectors
	default:
		return nil
	}
	return r.bindingsIndexed(ctx, bindingByTemplateIndex, policyIndexKeys(obj.GetNamespace(), selectors))
}

// bindingsTargeting maps a Cluster to the bindings of this reconciler's kind that target it.
func (r *Reconciler) bindingsTargeting(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.bindingsIndexed(ctx, bindingByClusterIndex, []string{obj.GetName()})
}

func (r *Reconciler) bindingsIndexed(ctx context.Context, index string, values []string) []reconcile.Request {
	k := bindingAPIOf(r.Kind)
	seen := sets.New[types.NamespacedName]()
	var requests []reconcile.Request
	for _, v := range values {
		list := k.newList()
		if err := r.Client.List(ctx, list, client.MatchingFields{index: v}); err != nil {
			// The cache is the index; a failure here is a programming error, not load.
			continue
		}
		for _, key := range k.keysOf(list) {
			if !seen.Has(key) {
				seen.Insert(key)
				requests = append(requests, reconcile.Request{NamespacedName: key})
			}
		}
	}
	return requests
}

// bindingsOwning maps a Work to the binding of this reconciler's kind that owns it.
func (r *Reconciler) bindingsOwning(_ context.Context, obj client.Object) []reconcile.Request {
	k, key, ok := bindingOfWork(obj)
	if !ok || k != r.Kind {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

func (r *Reconciler) bindingsRevisedByWebhooks(ctx context.Context, obj client.Object) []reconcile.Request {
	c, ok := obj.(*configv1alpha1.ResourceInterpreterWebhookConfiguration)
	if !ok {
		return nil
	}
	const op = configv1alpha1.InterpreterOperationReviseReplica
	kinds, anyKind := webhook.Kinds(c, op)
	if anyKind {
		// A "*" in a rule matches kinds no index lookup can enumerate: match every
		// cached binding's template kind instead. Configurations change rarely.
		return r.bindingsWhere(ctx, func(ref workv1alpha2.ObjectReference) bool {
			return webhook.Handles(c, schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind), op)
		})
	}
	keys := make([]string, 0, len(kinds))
	for _, gvk := range kinds {
		keys = append(keys, gvk.String())
	}
	return r.bindingsIndexed(ctx, bindingByTemplateKindIndex, keys)
}

// bindingsWhere returns the cached bindings of this reconciler's kind whose template
// reference passes match.
func (r *Reconciler) bindingsWhere(ctx context.Context, match func(workv1alpha2.ObjectReference) bool) []reconcile.Request {
	k := bindingAPIOf(r.Kind)
	list := k.newList()
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var requests []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		if match(k.specOf(obj).Resource) {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
		return nil
	})
	return requests
}

func (r *Reconciler) bindingsInterpretedBy(ctx context.Context, obj client.Object) []reconcile.Request {
	c, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization)
	if !ok {
		return nil
	}
	return r.bindingsIndexed(ctx, bindingByTemplateKindIndex, []string{kindKey(c.Spec.Target.APIVersion, c.Spec.Target.Kind)})
}
