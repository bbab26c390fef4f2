// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
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
	for _, k := range []bindingAPI{resourceBinding, clusterResourceBinding} {
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
