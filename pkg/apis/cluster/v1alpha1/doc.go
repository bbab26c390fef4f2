// SPDX-License-Identifier: Apache-2.0

// Package v1alpha1 contains Go types for Karmada's cluster.karmada.io/v1alpha1 Cluster
// API, with Karmada's JSON field names. Karmada serves Cluster through its aggregated
// API server; this project ships a CRD for it only for local use and tests. Spec and
// status preserve unknown fields, so Cluster objects with fields not modelled here are
// kept whole by that CRD.
//
// +groupName=cluster.karmada.io
// +kubebuilder:object:generate=true
package v1alpha1
