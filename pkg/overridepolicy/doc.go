// SPDX-License-Identifier: Apache-2.0

// Package overridepolicy applies Karmada OverridePolicies and ClusterOverridePolicies
// to a resource template for one member cluster, the way Karmada's override manager
// does, as pure functions: no client, no cache, no events.
//
// The caller lists the policies (from an informer cache, say) and hands them to Apply
// together with the template and the target Cluster; Apply returns the overridden copy
// and an Applied record whose Annotations are the ones Karmada writes on the Work
// (policy.karmada.io/applied-cluster-overrides and policy.karmada.io/applied-overrides).
//
// Semantics followed (Karmada's pkg/util/overridemanager and pkg/util/selector.go):
//
//   - A policy applies to a template when one of its resourceSelectors matches it, or
//     when it has no resourceSelectors at all (nil means all resources). A selector
//     matches on apiVersion and kind (exact strings), namespace when set, then name when
//     set (labelSelector is then ignored), else labelSelector when set, else everything.
//   - ClusterOverridePolicies are applied first, then, for namespaced templates only,
//     the OverridePolicies of the template's own namespace. Each group is chosen by the
//     object as it stands before the group is applied: OverridePolicies see the labels
//     the ClusterOverridePolicies left.
//   - Within each group policies are ordered by the implicit priority of their best
//     matching selector, lowest first (match-all, then label selector, then name), so
//     that the most specific policy is applied last and wins; ties by name.
//   - Every overrideRules entry whose targetCluster selects the cluster (nil selects all)
//     is applied, in order. A policy without overrideRules uses its deprecated top-level
//     targetCluster/overriders pair as its single rule.
//   - Within a rule: imageOverrider, commandOverrider, argsOverrider, labelsOverrider,
//     annotationsOverrider, fieldOverrider, plaintext — each list in order.
//   - The first overrider that cannot apply fails the whole Apply with an *Error naming
//     the policy, the overrider and the cluster.
package overridepolicy
