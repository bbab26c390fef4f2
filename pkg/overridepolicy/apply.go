// SPDX-License-Identifier: Apache-2.0

package overridepolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
)

// Policies are the override policies Apply chooses from: typically every
// ClusterOverridePolicy and the OverridePolicies of the template's namespace (others
// are ignored). Their order does not matter.
type Policies struct {
	Cluster    []policyv1alpha1.ClusterOverridePolicy
	Namespaced []policyv1alpha1.OverridePolicy
}

// AppliedPolicy is one applied rule of a policy, in the JSON form Karmada records: the
// policy's name (without namespace) and the overriders of the rule. A policy with
// several rules selecting the cluster appears once per rule.
type AppliedPolicy struct {
	PolicyName string                    `json:"policyName"`
	Overriders policyv1alpha1.Overriders `json:"overriders"`
}

// Applied records what Apply applied, in the order it was applied.
type Applied struct {
	// Cluster lists the ClusterOverridePolicy rules applied.
	Cluster []AppliedPolicy
	// Namespaced lists the OverridePolicy rules applied.
	Namespaced []AppliedPolicy
}

// Annotations returns the annotations Karmada writes on the Work to record a:
// policy.karmada.io/applied-cluster-overrides for the ClusterOverridePolicies and
// policy.karmada.io/applied-overrides for the OverridePolicies, each the JSON list of
// AppliedPolicy sorted by policy name (the rules of one policy keep their order). An
// empty list gives no annotation; the map is never nil.
func (a Applied) Annotations() (map[string]string, error) {
	annotations := map[string]string{}
	for key, items := range map[string][]AppliedPolicy{
		policyv1alpha1.AppliedClusterOverridesAnnotation: a.Cluster,
		policyv1alpha1.AppliedOverridesAnnotation:        a.Namespaced,
	} {
		if len(items) == 0 {
			continue
		}
		sorted := append([]AppliedPolicy(nil), items...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].PolicyName < sorted[j].PolicyName })
		raw, err := json.Marshal(sorted)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", key, err)
		}
		annotations[key] = string(raw)
	}
	return annotations, nil
}

// Error is an override that could not be applied.
type Error struct {
	// PolicyKind is ClusterOverridePolicy or OverridePolicy.
	PolicyKind string
	// PolicyNamespace is empty for a ClusterOverridePolicy.
	PolicyNamespace string
	PolicyName      string
	// Overrider locates the overrider in the policy's spec, e.g.
	// "overrideRules[0].imageOverrider[1]", "overrideRules[2].plaintext[0]",
	// "overrideRules[0].fieldOverrider[0].yaml[1]", or "overriders.plaintext[0]" for the
	// deprecated top-level form.
	Overrider string
	// Cluster is the member cluster the template was being overridden for.
	Cluster string
	Err     error
}

func (e *Error) Error() string {
	policy := e.PolicyName
	if e.PolicyNamespace != "" {
		policy = e.PolicyNamespace + "/" + e.PolicyName
	}
	return fmt.Sprintf("%s %s, %s, cluster %s: %v", e.PolicyKind, policy, e.Overrider, e.Cluster, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Apply returns a copy of template overridden for cluster by the policies that select
// it, and the record of what was applied. template is not modified; the result is
// always a new object, equal to template when nothing applies.
//
// ClusterOverridePolicies are applied first; then, when the template is namespaced, the
// OverridePolicies of its namespace. Within each group, policies go from the least to
// the most specific match (a policy without selectors or with a selector matching the
// whole kind, then label selectors, then names), ties by name; see the package
// documentation for the order within a policy.
//
// On error the result is nil and the error is an *Error.
func Apply(template *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, policies Policies) (*unstructured.Unstructured, Applied, error) {
	obj := template.DeepCopy()
	applied, err := ApplyTo(obj, cluster, policies)
	if err != nil {
		return nil, Applied{}, err
	}
	return obj, applied, nil
}

// ApplyTo is Apply on obj itself, for a caller that holds its own copy already (render
// copies the template once per cluster to set its replicas): obj is overridden in place.
// On error obj may be partly overridden and must be dropped.
func ApplyTo(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, policies Policies) (Applied, error) {
	var applied Applied

	clusterPolicies := make([]candidate, 0, len(policies.Cluster))
	for i := range policies.Cluster {
		p := &policies.Cluster[i]
		clusterPolicies = append(clusterPolicies, candidate{
			kind: policyv1alpha1.ResourceKindClusterOverridePolicy, name: p.Name, spec: &p.Spec,
		})
	}
	var err error
	if applied.Cluster, err = applyGroup(obj, cluster, clusterPolicies); err != nil {
		return Applied{}, err
	}

	// As in Karmada, OverridePolicies are chosen by the object as the
	// ClusterOverridePolicies left it (a label one of them adds can select an
	// OverridePolicy).
	if ns := obj.GetNamespace(); ns != "" {
		namespaced := make([]candidate, 0, len(policies.Namespaced))
		for i := range policies.Namespaced {
			p := &policies.Namespaced[i]
			if p.Namespace != ns {
				continue
			}
			namespaced = append(namespaced, candidate{
				kind: policyv1alpha1.ResourceKindOverridePolicy, namespace: p.Namespace, name: p.Name, spec: &p.Spec,
			})
		}
		if applied.Namespaced, err = applyGroup(obj, cluster, namespaced); err != nil {
			return Applied{}, err
		}
	}
	return applied, nil
}

type candidate struct {
	kind, namespace, name string
	spec                  *policyv1alpha1.OverrideSpec
	priority              priority
}

// applyGroup applies to obj the policies of one group that select it. All of them are
// chosen and ordered by obj as it is before the first is applied.
func applyGroup(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, policies []candidate) ([]AppliedPolicy, error) {
	selected := policies[:0:0]
	for _, p := range policies {
		if p.priority = selectorsPriority(p.spec.ResourceSelectors, obj); p.priority > priorityMismatch {
			selected = append(selected, p)
		}
	}
	sort.SliceStable(selected, func(i, j int) bool {
		if selected[i].priority != selected[j].priority {
			return selected[i].priority < selected[j].priority
		}
		return selected[i].name < selected[j].name
	})

	var applied []AppliedPolicy
	for _, p := range selected {
		rules, prefix := p.spec.OverrideRules, "overrideRules"
		if len(rules) == 0 {
			//nolint:staticcheck // the deprecated form is still honoured, as Karmada does.
			rules, prefix = []policyv1alpha1.RuleWithCluster{{TargetCluster: p.spec.TargetCluster, Overriders: p.spec.Overriders}}, "overriders"
		}
		for i := range rules {
			if !TargetsCluster(rules[i].TargetCluster, cluster) {
				continue
			}
			where := prefix
			if prefix == "overrideRules" {
				where = fmt.Sprintf("overrideRules[%d]", i)
			}
			if err := applyOverriders(obj, &rules[i].Overriders, where); err != nil {
				var located *Error
				errors.As(err, &located)
				located.PolicyKind, located.PolicyNamespace, located.PolicyName = p.kind, p.namespace, p.name
				located.Cluster = cluster.Name
				return nil, located
			}
			applied = append(applied, AppliedPolicy{PolicyName: p.name, Overriders: *rules[i].Overriders.DeepCopy()})
		}
	}
	return applied, nil
}

// applyOverriders applies one rule's overriders in Karmada's order. An error is an
// *Error with only Overrider and Err set.
func applyOverriders(obj *unstructured.Unstructured, o *policyv1alpha1.Overriders, where string) error {
	fail := func(field string, i int, err error) error {
		loc := where + "." + field
		if i >= 0 {
			loc += fmt.Sprintf("[%d]", i)
		}
		var sub *subError
		if errors.As(err, &sub) {
			loc += sub.where
			err = sub.err
		}
		return &Error{Overrider: loc, Err: err}
	}
	for i := range o.ImageOverrider {
		if err := applyImageOverrider(obj, &o.ImageOverrider[i]); err != nil {
			return fail("imageOverrider", i, err)
		}
	}
	for i := range o.CommandOverrider {
		if err := applyCommandArgsOverrider(obj, "command", &o.CommandOverrider[i]); err != nil {
			return fail("commandOverrider", i, err)
		}
	}
	for i := range o.ArgsOverrider {
		if err := applyCommandArgsOverrider(obj, "args", &o.ArgsOverrider[i]); err != nil {
			return fail("argsOverrider", i, err)
		}
	}
	for i := range o.LabelsOverrider {
		if err := applyLabelAnnotationOverrider(obj, "labels", &o.LabelsOverrider[i]); err != nil {
			return fail("labelsOverrider", i, err)
		}
	}
	for i := range o.AnnotationsOverrider {
		if err := applyLabelAnnotationOverrider(obj, "annotations", &o.AnnotationsOverrider[i]); err != nil {
			return fail("annotationsOverrider", i, err)
		}
	}
	for i := range o.FieldOverrider {
		if err := applyFieldOverrider(obj, &o.FieldOverrider[i]); err != nil {
			return fail("fieldOverrider", i, err)
		}
	}
	if err := applyPlaintext(obj, o.Plaintext); err != nil {
		return fail("plaintext", -1, err)
	}
	return nil
}
