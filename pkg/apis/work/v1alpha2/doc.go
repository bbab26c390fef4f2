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
