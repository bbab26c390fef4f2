// SPDX-License-Identifier: Apache-2.0

package v1alpha1

// Kinds and resources (plurals) of this group.
const (
	ResourceKindOverridePolicy          = "OverridePolicy"
	ResourcePluralOverridePolicy        = "overridepolicies"
	ResourceKindClusterOverridePolicy   = "ClusterOverridePolicy"
	ResourcePluralClusterOverridePolicy = "clusteroverridepolicies"
)

// Annotations written on a Work (and its workload) recording which overrides were applied.
const (
	// AppliedOverridesAnnotation records the OverridePolicies applied to the workload
	// (a JSON list of {policyName, overriders}).
	AppliedOverridesAnnotation = "policy.karmada.io/applied-overrides"

	// AppliedClusterOverridesAnnotation records the ClusterOverridePolicies applied to
	// the workload (a JSON list of {policyName, overriders}).
	AppliedClusterOverridesAnnotation = "policy.karmada.io/applied-cluster-overrides"
)
