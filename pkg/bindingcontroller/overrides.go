package bindingcontroller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/overridepolicy"
	"github.com/binding-controller/binding-controller/pkg/render"
)

// Indexes of bindings, so that a policy or Cluster change re-syncs exactly the bindings
// it concerns instead of every binding.
const (
	// bindingByTemplateIndex holds templateIndexValues of spec.resource.
	bindingByTemplateIndex = "binding.work.karmada.io/template"
	// bindingByClusterIndex holds the names of the clusters the binding targets.
	bindingByClusterIndex = "binding.work.karmada.io/cluster"
)

func templateRefOfBinding(obj client.Object, spec *workv1alpha2.ResourceBindingSpec) templateRef {
	ref := templateRefOfResource(spec.Resource)
	if ref.Namespace == "" {
		// A ResourceBinding's template lives in the binding's namespace.
		ref.Namespace = obj.GetNamespace()
	}
	return ref
}

func indexBindings(ctx context.Context, indexer client.FieldIndexer) error {
	for _, k := range []kind{resourceBinding, clusterResourceBinding} {
		specOf := k.specOf
		if err := indexer.IndexField(ctx, k.newObject(), bindingByTemplateIndex, func(obj client.Object) []string {
			return templateIndexValues(templateRefOfBinding(obj, specOf(obj)))
		}); err != nil {
			return err
		}
		if err := indexer.IndexField(ctx, k.newObject(), bindingByClusterIndex, func(obj client.Object) []string {
			var clusters []string
			for _, t := range render.Targets(specOf(obj)) {
				clusters = append(clusters, t.Cluster)
			}
			return clusters
		}); err != nil {
			return err
		}
	}
	return nil
}

// overridesFor gathers, from the cache, the policies that may apply to template and the
// Cluster objects of the targets. Kinds the API server does not serve are skipped.
func (r *Reconciler) overridesFor(ctx context.Context, template *unstructured.Unstructured, targets []render.Target) (
	overridepolicy.Policies, map[string]*clusterv1alpha1.Cluster, error) {
	var policies overridepolicy.Policies
	clusters := map[string]*clusterv1alpha1.Cluster{}
	if r.PoliciesServed {
		cops := &policyv1alpha1.ClusterOverridePolicyList{}
		if err := r.Client.List(ctx, cops); err != nil {
			return policies, nil, fmt.Errorf("listing ClusterOverridePolicies: %w", err)
		}
		policies.Cluster = cops.Items
		if template.GetNamespace() != "" {
			ops := &policyv1alpha1.OverridePolicyList{}
			if err := r.Client.List(ctx, ops, client.InNamespace(template.GetNamespace())); err != nil {
				return policies, nil, fmt.Errorf("listing OverridePolicies in %s: %w", template.GetNamespace(), err)
			}
			policies.Namespaced = ops.Items
		}
	}
	if r.ClustersServed {
		for _, t := range targets {
			c := &clusterv1alpha1.Cluster{}
			err := r.Client.Get(ctx, types.NamespacedName{Name: t.Cluster}, c)
			switch {
			case apierrors.IsNotFound(err):
				// Known by name only: name-based targeting still works.
			case err != nil:
				return policies, nil, fmt.Errorf("reading Cluster %s: %w", t.Cluster, err)
			default:
				clusters[t.Cluster] = c
			}
		}
	}
	return policies, clusters, nil
}

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
	k := kindOf(r.Kind)
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
