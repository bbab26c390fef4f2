// SPDX-License-Identifier: Apache-2.0

// Package rolloutpolicy decides, without reading anything, which rollout policy governs a
// template and how a binding's clusters fall into its stages.
package rolloutpolicy

import (
	"cmp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/overridepolicy"
)

// Kinds of policy.
const (
	KindRolloutPolicy        = "RolloutPolicy"
	KindClusterRolloutPolicy = "ClusterRolloutPolicy"
)

// Policy is a RolloutPolicy or a ClusterRolloutPolicy.
type Policy struct {
	rolloutsv1alpha1.PolicyReference
	Spec *rolloutsv1alpha1.RolloutPolicySpec
}

// Select returns the policy that governs template, nil when none selects it. A
// RolloutPolicy selects only templates of its own namespace. When several select it, one
// governs, so that a template never rolls out two ways at once: a RolloutPolicy before a
// ClusterRolloutPolicy (the narrower scope, as Karmada's PropagationPolicy before its
// ClusterPropagationPolicy), then the most specific selector (a name before a label
// selector before a whole kind, as override policies are ordered), then the name that
// sorts first.
func Select(template *unstructured.Unstructured, namespaced []rolloutsv1alpha1.RolloutPolicy,
	clusterWide []rolloutsv1alpha1.ClusterRolloutPolicy) *Policy {
	var candidates []Policy
	best := 0
	consider := func(p Policy) {
		s := overridepolicy.Specificity(p.Spec.ResourceSelectors, template)
		switch {
		case s == 0 || s < best:
		case s > best:
			best, candidates = s, []Policy{p}
		default:
			candidates = append(candidates, p)
		}
	}
	for i := range namespaced {
		p := &namespaced[i]
		if p.Namespace == template.GetNamespace() {
			consider(Policy{PolicyReference: rolloutsv1alpha1.PolicyReference{Kind: KindRolloutPolicy, Namespace: p.Namespace, Name: p.Name}, Spec: &p.Spec})
		}
	}
	if len(candidates) == 0 {
		for i := range clusterWide {
			p := &clusterWide[i]
			consider(Policy{PolicyReference: rolloutsv1alpha1.PolicyReference{Kind: KindClusterRolloutPolicy, Name: p.Name}, Spec: &p.Spec})
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	winner := slices.MinFunc(candidates, func(a, b Policy) int { return cmp.Compare(a.Name, b.Name) })
	return &winner
}

// UnstagedName names the last stage, of the clusters no stage of the policy selects.
const UnstagedName = "unstaged"

// Stage is one stage of a binding's rollout, with the binding's clusters that belong to it.
type Stage struct {
	Name            string
	Clusters        []string
	MaxConcurrency  int
	MinSuccessTime  metav1.Duration
	RequireApproval bool
}

// Stages sorts the binding's clusters into the policy's stages, in the policy's order: a
// cluster belongs to the first stage that selects it, by name or by its Cluster object's
// labels (clusters names the Cluster objects known; a cluster without one is selected by
// name only). Clusters no stage selects form a last stage, UnstagedName, with no soak and
// no gate. A stage with no cluster of this binding is left out. Clusters keep the
// binding's order within a stage.
func Stages(spec *rolloutsv1alpha1.RolloutPolicySpec, targets []string, clusters map[string]*clusterv1alpha1.Cluster) []Stage {
	stages := make([]Stage, len(spec.Stages)+1)
	for i, s := range spec.Stages {
		stages[i] = Stage{Name: s.Name, RequireApproval: s.RequireApproval}
		if s.MinSuccessTime != nil {
			stages[i].MinSuccessTime = *s.MinSuccessTime
		}
	}
	stages[len(spec.Stages)] = Stage{Name: UnstagedName}
	for _, cluster := range targets {
		i := slices.IndexFunc(spec.Stages, func(s rolloutsv1alpha1.RolloutStage) bool {
			return selects(s.Clusters, cluster, clusters[cluster])
		})
		if i < 0 {
			i = len(spec.Stages)
		}
		stages[i].Clusters = append(stages[i].Clusters, cluster)
	}
	out := stages[:0]
	for i, s := range stages {
		if len(s.Clusters) == 0 {
			continue
		}
		var limit *intstr.IntOrString
		if i < len(spec.Stages) {
			limit = spec.Stages[i].MaxConcurrency
		}
		s.MaxConcurrency = Concurrency(limit, len(s.Clusters))
		out = append(out, s)
	}
	return out
}

func selects(sc rolloutsv1alpha1.StageClusters, name string, cluster *clusterv1alpha1.Cluster) bool {
	if slices.Contains(sc.Names, name) {
		return true
	}
	if sc.LabelSelector == nil || cluster == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sc.LabelSelector)
	return err == nil && s.Matches(labels.Set(cluster.Labels))
}

// Concurrency is how many of a stage's n clusters update at once: limit as a number, or
// as a percentage of n rounded up; at least 1, at most n; all n without a limit (or with
// one that does not parse).
func Concurrency(limit *intstr.IntOrString, n int) int {
	if limit == nil || n == 0 {
		return n
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(limit, n, true)
	if err != nil {
		return n
	}
	return max(1, min(v, n))
}
