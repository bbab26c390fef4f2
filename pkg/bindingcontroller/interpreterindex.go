// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
)

// Indexes that let a ResourceInterpreterCustomization or ResourceInterpreterWebhookConfiguration
// change re-sync exactly the bindings of the kinds it targets, and let a sync find the
// customizations of its template's kind.
const (
	// bindingByTemplateKindIndex holds kindKey of spec.resource.
	bindingByTemplateKindIndex = "binding.work.karmada.io/template-kind"
	// customizationByTargetIndex holds kindKey of spec.target.
	customizationByTargetIndex = "config.karmada.io/target"
)

// kindKey is how both indexes name a kind: group, version and kind, as Karmada matches a
// customization to a resource.
func kindKey(apiVersion, kind string) string {
	return schema.FromAPIVersionAndKind(apiVersion, kind).String()
}

// setupInterpreterIndexes registers the bindings' template-kind index and, when the API
// server serves them, the customizations' target index.
func setupInterpreterIndexes(ctx context.Context, indexer client.FieldIndexer, customizationsServed bool) error {
	for _, k := range []bindingAPI{resourceBinding, clusterResourceBinding} {
		specOf := k.specOf
		if err := indexer.IndexField(ctx, k.newObject(), bindingByTemplateKindIndex, func(obj client.Object) []string {
			ref := specOf(obj).Resource
			return []string{kindKey(ref.APIVersion, ref.Kind)}
		}); err != nil {
			return err
		}
	}
	if !customizationsServed {
		return nil
	}
	return indexer.IndexField(ctx, &configv1alpha1.ResourceInterpreterCustomization{}, customizationByTargetIndex, func(obj client.Object) []string {
		t := obj.(*configv1alpha1.ResourceInterpreterCustomization).Spec.Target
		return []string{kindKey(t.APIVersion, t.Kind)}
	})
}
