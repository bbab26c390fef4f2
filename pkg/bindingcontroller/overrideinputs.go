// SPDX-License-Identifier: Apache-2.0

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
// Cluster objects of the targets; a target with no Cluster object is in absent, with the
// error reading it gave. Kinds the API server does not serve are skipped: without the
// Cluster kind, a cluster is known by its name only.
func (r *Reconciler) overridesFor(ctx context.Context, template *unstructured.Unstructured, targets []render.Target) (
	policies overridepolicy.Policies, clusters map[string]*clusterv1alpha1.Cluster, absent map[string]error, err error) {
	clusters, absent = map[string]*clusterv1alpha1.Cluster{}, map[string]error{}
	if r.Served.OverridePolicies {
		cops := &policyv1alpha1.ClusterOverridePolicyList{}
		if err := r.Client.List(ctx, cops); err != nil {
			return policies, nil, nil, fmt.Errorf("listing ClusterOverridePolicies: %w", err)
		}
		policies.Cluster = cops.Items
		if template.GetNamespace() != "" {
			ops := &policyv1alpha1.OverridePolicyList{}
			if err := r.Client.List(ctx, ops, client.InNamespace(template.GetNamespace())); err != nil {
				return policies, nil, nil, fmt.Errorf("listing OverridePolicies in %s: %w", template.GetNamespace(), err)
			}
			policies.Namespaced = ops.Items
		}
	}
	if r.Served.Clusters {
		for _, t := range targets {
			c := &clusterv1alpha1.Cluster{}
			err := r.Client.Get(ctx, types.NamespacedName{Name: t.Cluster}, c)
			switch {
			case apierrors.IsNotFound(err):
				// Karmada's override manager reads the Cluster first and writes no Work
				// without it; the Cluster's creation re-syncs the binding (watches).
				absent[t.Cluster] = &ClusterNotFoundError{Cluster: t.Cluster, Err: err}
			case err != nil:
				return policies, nil, nil, fmt.Errorf("reading Cluster %s: %w", t.Cluster, err)
			default:
				clusters[t.Cluster] = c
			}
		}
	}
	return policies, clusters, absent, nil
}

// ReasonClusterNotFound is the failure reason of a target cluster that has no Cluster object.
const ReasonClusterNotFound = "ClusterNotFound"

// ClusterNotFoundError says a target cluster has no Cluster object, so no Work is written
// for it, as in Karmada: a cluster that left the federation (or never joined) gets no
// workload. The Cluster's creation re-syncs the binding, so it is not retried meanwhile.
type ClusterNotFoundError struct {
	Cluster string
	Err     error
}

func (e *ClusterNotFoundError) Error() string         { return e.Err.Error() }
func (e *ClusterNotFoundError) Unwrap() error         { return e.Err }
func (e *ClusterNotFoundError) FailureReason() string { return ReasonClusterNotFound }
