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

// Package v1alpha1 contains Go types for Karmada's cluster.karmada.io/v1alpha1 Cluster
// API, with Karmada's JSON field names. Karmada serves Cluster through its aggregated
// API server; this project ships a CRD for it only for local use and tests. Spec and
// status preserve unknown fields, so Cluster objects with fields not modelled here are
// kept whole by that CRD.
//
// +groupName=cluster.karmada.io
// +kubebuilder:object:generate=true
package v1alpha1
