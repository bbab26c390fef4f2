/*
Copyright 2026 The binding-controller Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

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
