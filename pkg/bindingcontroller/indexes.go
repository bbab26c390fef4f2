// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"slices"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/render"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// workByBindingIndex indexes Works by the binding their annotations name. Annotations, not
// the permanent-id label, so that a recreated binding still finds the Works its previous
// incarnation left behind.
const workByBindingIndex = "binding.work.karmada.io/owner"

func bindingIndexValue(k render.BindingKind, namespace, name string) string {
	return string(k) + "/" + types.NamespacedName{Namespace: namespace, Name: name}.String()
}

// bindingOfWork returns the binding a Work's annotations name, and false for a Work that
// names none (not ours).
func bindingOfWork(obj client.Object) (render.BindingKind, types.NamespacedName, bool) {
	a := obj.GetAnnotations()
	if name, ok := a[workv1alpha2.ClusterResourceBindingNameAnnotation]; ok && name != "" {
		return render.ClusterResourceBindingKind, types.NamespacedName{Name: name}, true
	}
	namespace, okNS := a[workv1alpha2.ResourceBindingNamespaceAnnotation]
	name, okName := a[workv1alpha2.ResourceBindingNameAnnotation]
	if okNS && okName && name != "" {
		return render.ResourceBindingKind, types.NamespacedName{Namespace: namespace, Name: name}, true
	}
	return "", types.NamespacedName{}, false
}

func indexWorkByBinding(obj client.Object) []string {
	k, key, ok := bindingOfWork(obj)
	if !ok {
		return nil
	}
	return []string{bindingIndexValue(k, key.Namespace, key.Name)}
}

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

// Finding the bindings a policy change affects, without fetching templates.
//
// A binding's spec.resource names its template (apiVersion, kind, namespace, name) but
// not the template's labels, so an index can only narrow a policy down to the bindings
// it may select: a selector with a name is exact, one with a labelSelector (or with
// neither) stands for every template of its kind in its namespace. That superset is
// what is wanted: re-syncing a binding the policy turns out not to select is harmless.
//
// Keys have the form "<apiVersion>/<kind>/<namespace>/<name>", where namespace and name
// may be the wildcard "*", and apiVersion and kind may both be "*" (all kinds); a
// cluster-scoped template has an empty namespace ("rbac.authorization.k8s.io/v1/ClusterRole//admin").
//
// Usage with a controller-runtime field index:
//
//	// index every binding under templateIndexValues(templateRefOfResource(b.Spec.Resource));
//	// on a change of a policy (for an update, of its old and of its new version):
//	for _, key := range policyIndexKeys(policy.Namespace, policy.Spec.ResourceSelectors) {
//		list the bindings whose index holds key, and enqueue them
//	}
//
// ClusterOverridePolicies are looked up in the ResourceBinding and the
// ClusterResourceBinding index, OverridePolicies in the ResourceBinding index only.
// selectsTemplate answers the same question for one template without an index.

// wildcard stands for any namespace, any name, or (as apiVersion and kind) any kind.
const wildcard = "*"

// templateRef identifies a resource template as a binding's spec.resource does.
type templateRef struct {
	APIVersion string
	Kind       string
	Namespace  string // empty for cluster-scoped templates
	Name       string
}

// templateRefOfTemplate returns the templateRef of a template object.
func templateRefOfTemplate(template *unstructured.Unstructured) templateRef {
	return templateRef{
		APIVersion: template.GetAPIVersion(), Kind: template.GetKind(),
		Namespace: template.GetNamespace(), Name: template.GetName(),
	}
}

// templateRefOfResource returns the templateRef of a binding's spec.resource.
func templateRefOfResource(resource workv1alpha2.ObjectReference) templateRef {
	return templateRef{
		APIVersion: resource.APIVersion, Kind: resource.Kind,
		Namespace: resource.Namespace, Name: resource.Name,
	}
}

func templateIndexKey(apiVersion, kind, namespace, name string) string {
	return apiVersion + "/" + kind + "/" + namespace + "/" + name
}

// templateIndexValues returns the index values of a binding whose template is ref: the
// exact key and its wildcard variants, so that it is found by every key policyIndexKeys may
// produce for a policy that could select it:
//
//	apps/v1/Deployment/default/nginx   selector naming it
//	apps/v1/Deployment/default/*       selector on its kind in its namespace (label selector or none)
//	apps/v1/Deployment/*/nginx         ClusterOverridePolicy selector naming it in any namespace
//	apps/v1/Deployment/*/*             ClusterOverridePolicy selector on its kind in any namespace
//	*/*/default/*                      OverridePolicy of its namespace without selectors (namespaced templates only)
//	*/*/*/*                            ClusterOverridePolicy without selectors
func templateIndexValues(ref templateRef) []string {
	values := []string{
		templateIndexKey(ref.APIVersion, ref.Kind, ref.Namespace, ref.Name),
		templateIndexKey(ref.APIVersion, ref.Kind, ref.Namespace, wildcard),
		templateIndexKey(ref.APIVersion, ref.Kind, wildcard, ref.Name),
		templateIndexKey(ref.APIVersion, ref.Kind, wildcard, wildcard),
	}
	if ref.Namespace != "" {
		values = append(values, templateIndexKey(wildcard, wildcard, ref.Namespace, wildcard))
	}
	return append(values, templateIndexKey(wildcard, wildcard, wildcard, wildcard))
}

// policyIndexKeys returns the sorted, distinct index keys of the templates a policy with these
// resourceSelectors may select. policyNamespace is the namespace of an OverridePolicy —
// its selectors without a namespace mean that namespace, and selectors naming another
// namespace select nothing — or empty for a ClusterOverridePolicy, whose selectors
// without a namespace mean every namespace (and cluster-scoped templates).
//
// A selector with a name gives the exact key; one without gives the kind's wildcard key
// in its namespace. No selectors at all (every resource) gives "*/*/<namespace>/*" for
// an OverridePolicy and "*/*/*/*" for a ClusterOverridePolicy.
func policyIndexKeys(policyNamespace string, selectors []policyv1alpha1.ResourceSelector) []string {
	if len(selectors) == 0 {
		namespace := policyNamespace
		if namespace == "" {
			namespace = wildcard
		}
		return []string{templateIndexKey(wildcard, wildcard, namespace, wildcard)}
	}
	keys := make([]string, 0, len(selectors))
	for i := range selectors {
		rs := &selectors[i]
		namespace, ok := selectorNamespace(policyNamespace, rs)
		if !ok {
			continue
		}
		name := rs.Name
		if name == "" {
			name = wildcard
		}
		keys = append(keys, templateIndexKey(rs.APIVersion, rs.Kind, namespace, name))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// selectorNamespace is the namespace a selector effectively names, wildcard for any,
// and false when the selector can select nothing.
func selectorNamespace(policyNamespace string, rs *policyv1alpha1.ResourceSelector) (string, bool) {
	switch {
	case policyNamespace == "" && rs.Namespace == "":
		return wildcard, true
	case policyNamespace == "":
		return rs.Namespace, true
	case rs.Namespace == "" || rs.Namespace == policyNamespace:
		return policyNamespace, true
	default:
		return "", false
	}
}

// selectsTemplate reports whether a policy of policyNamespace (empty for a
// ClusterOverridePolicy) with these resourceSelectors may select the template ref,
// judging by apiVersion, kind, namespace and name only: a selector with a labelSelector
// counts as selecting every template of its kind and namespace. It is true exactly when
// policyIndexKeys(policyNamespace, selectors) and templateIndexValues(ref) share a key; when
// it is false, the policy certainly does not apply to the template.
func selectsTemplate(policyNamespace string, selectors []policyv1alpha1.ResourceSelector, ref templateRef) bool {
	if policyNamespace != "" && ref.Namespace != policyNamespace {
		return false
	}
	if len(selectors) == 0 {
		return true
	}
	for i := range selectors {
		rs := &selectors[i]
		if rs.APIVersion != ref.APIVersion || rs.Kind != ref.Kind {
			continue
		}
		namespace, ok := selectorNamespace(policyNamespace, rs)
		if !ok || (namespace != wildcard && namespace != ref.Namespace) {
			continue
		}
		if rs.Name == "" || rs.Name == ref.Name {
			return true
		}
	}
	return false
}
