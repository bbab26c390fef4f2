// SPDX-License-Identifier: Apache-2.0

// Package v1alpha2 contains the Go types of Karmada's work.karmada.io/v1alpha2 binding
// API (ResourceBinding, ClusterResourceBinding), wire-compatible with Karmada's
// published CRDs. v1alpha2 is the storage version of the bindings.
//
// The spec and status of the bindings are generated with
// x-kubernetes-preserve-unknown-fields, so that fields a newer Karmada adds at those
// levels are kept by our CRDs. Note that a typed Update of a binding still drops every
// field these Go types do not model; use patches (for example client.MergeFrom) to
// change bindings.
//
// +groupName=work.karmada.io
// +kubebuilder:object:generate=true
package v1alpha2
