// SPDX-License-Identifier: Apache-2.0

// Package v1alpha1 contains the Go types of Karmada's policy.karmada.io/v1alpha1 API
// group that the binding controller reads: OverridePolicy and ClusterOverridePolicy,
// plus the scheduling/propagation types (Placement, Suspension, PurgeMode, ...) that the
// work.karmada.io bindings embed. The types are wire-compatible with Karmada's published
// CRDs (same group, version, kinds, plurals, scope and JSON field names).
//
// +groupName=policy.karmada.io
// +kubebuilder:object:generate=true
package v1alpha1
