package bindingcontroller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/overridepolicy"
	"github.com/binding-controller/binding-controller/pkg/render"
)

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
