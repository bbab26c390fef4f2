// SPDX-License-Identifier: Apache-2.0

// Package v1alpha1 contains the Go types of Karmada's work.karmada.io/v1alpha1 Work API,
// wire-compatible with Karmada's published CRD. A Work carries the rendered workload of
// one binding for one member cluster, in that cluster's execution namespace.
//
// +groupName=work.karmada.io
// +kubebuilder:object:generate=true
package v1alpha1
