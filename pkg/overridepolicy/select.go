// SPDX-License-Identifier: Apache-2.0

package overridepolicy

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
)

// Cluster fields a ClusterAffinity's fieldSelector may name.
const (
	ProviderField = "provider"
	RegionField   = "region"
	ZoneField     = "zone"
)

// priority is how specifically a selector (or the best of a list of selectors) matches
// a template. Policies are applied from the least to the most specific.
type priority int

const (
	priorityMismatch priority = iota
	priorityMatchAll
	priorityMatchLabelSelector
	priorityMatchName
)

// Matches reports whether an override policy with these resourceSelectors applies to
// template. As in Karmada, an empty list selects every resource ("nil means matching
// all resources"); otherwise one matching selector is enough.
//
// A selector matches when apiVersion and kind are equal to the template's, its
// namespace (when set) is the template's, and then: its name (when set) is the
// template's name — labelSelector is then ignored —, else its labelSelector (when set)
// matches the template's labels, else it matches all such resources. An invalid
// labelSelector matches nothing.
//
// Matches does not know the policy's namespace: an OverridePolicy only ever applies to
// templates of its own namespace, which Apply checks separately.
func Matches(selectors []policyv1alpha1.ResourceSelector, template *unstructured.Unstructured) bool {
	return selectorsPriority(selectors, template) > priorityMismatch
}

// Specificity is how specifically selectors match template: 0 when they do not match,
// then higher for a match of every resource of the kind, of a label selector, of a name
// (Karmada's implicit priority). Rollout policies use it to pick one policy among
// several that select a template.
func Specificity(selectors []policyv1alpha1.ResourceSelector, template *unstructured.Unstructured) int {
	return int(selectorsPriority(selectors, template))
}

// selectorsPriority is the highest priority among selectors, priorityMatchAll for an
// empty list.
func selectorsPriority(selectors []policyv1alpha1.ResourceSelector, template *unstructured.Unstructured) priority {
	if len(selectors) == 0 {
		return priorityMatchAll
	}
	best := priorityMismatch
	for i := range selectors {
		if p := selectorPriority(&selectors[i], template); p > best {
			best = p
		}
	}
	return best
}

func selectorPriority(rs *policyv1alpha1.ResourceSelector, template *unstructured.Unstructured) priority {
	if rs.APIVersion != template.GetAPIVersion() || rs.Kind != template.GetKind() ||
		(rs.Namespace != "" && rs.Namespace != template.GetNamespace()) {
		return priorityMismatch
	}
	if rs.Name != "" {
		if rs.Name == template.GetName() {
			return priorityMatchName
		}
		return priorityMismatch
	}
	if rs.LabelSelector == nil {
		return priorityMatchAll
	}
	s, err := metav1.LabelSelectorAsSelector(rs.LabelSelector)
	if err != nil || !s.Matches(labels.Set(template.GetLabels())) {
		return priorityMismatch
	}
	return priorityMatchLabelSelector
}

// TargetsCluster reports whether affinity selects cluster. A nil affinity selects every
// cluster. Otherwise every constraint given must hold:
//
//   - exclude: the cluster is not listed;
//   - labelSelector: it matches the cluster's labels (an invalid selector matches none);
//   - fieldSelector: every matchExpression holds, keys "provider" and "region" against
//     spec.provider/spec.region (an empty field counts as absent) with the operators
//     In, NotIn, Exists, DoesNotExist, Gt and Lt, and key "zone" against the cluster's
//     zones (spec.zones, or spec.zone when zones is empty): In needs every zone listed,
//     NotIn none of them, Exists at least one zone, DoesNotExist none. An invalid
//     expression matches no cluster;
//   - clusterNames: when non-empty, the cluster is listed.
func TargetsCluster(affinity *policyv1alpha1.ClusterAffinity, cluster *clusterv1alpha1.Cluster) bool {
	if affinity == nil {
		return true
	}
	if slices.Contains(affinity.ExcludeClusters, cluster.Name) {
		return false
	}
	if affinity.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(affinity.LabelSelector)
		if err != nil || !s.Matches(labels.Set(cluster.Labels)) {
			return false
		}
	}
	if affinity.FieldSelector != nil && !fieldsMatch(affinity.FieldSelector.MatchExpressions, cluster) {
		return false
	}
	return len(affinity.ClusterNames) == 0 || slices.Contains(affinity.ClusterNames, cluster.Name)
}

func fieldsMatch(expressions []corev1.NodeSelectorRequirement, cluster *clusterv1alpha1.Cluster) bool {
	fields := labels.Set{}
	if cluster.Spec.Provider != "" {
		fields[ProviderField] = cluster.Spec.Provider
	}
	if cluster.Spec.Region != "" {
		fields[RegionField] = cluster.Spec.Region
	}
	selector := labels.NewSelector()
	for i := range expressions {
		expr := &expressions[i]
		if expr.Key == ZoneField {
			if !zonesMatch(expr, clusterZones(cluster)) {
				return false
			}
			continue
		}
		op, ok := fieldOperators[expr.Operator]
		if !ok {
			return false
		}
		r, err := labels.NewRequirement(expr.Key, op, expr.Values)
		if err != nil {
			return false
		}
		selector = selector.Add(*r)
	}
	return selector.Matches(fields)
}

var fieldOperators = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}

// clusterZones are the zones a cluster spans: spec.zones, or the deprecated spec.zone.
func clusterZones(cluster *clusterv1alpha1.Cluster) []string {
	if len(cluster.Spec.Zones) > 0 {
		return cluster.Spec.Zones
	}
	if cluster.Spec.Zone != "" {
		return []string{cluster.Spec.Zone}
	}
	return nil
}

func zonesMatch(expr *corev1.NodeSelectorRequirement, zones []string) bool {
	switch expr.Operator {
	case corev1.NodeSelectorOpIn:
		if len(zones) == 0 {
			return false
		}
		for _, z := range zones {
			if !slices.Contains(expr.Values, z) {
				return false
			}
		}
		return true
	case corev1.NodeSelectorOpNotIn:
		for _, z := range zones {
			if slices.Contains(expr.Values, z) {
				return false
			}
		}
		return true
	case corev1.NodeSelectorOpExists:
		return len(zones) > 0
	case corev1.NodeSelectorOpDoesNotExist:
		return len(zones) == 0
	default:
		return false
	}
}
