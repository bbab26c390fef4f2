// SPDX-License-Identifier: Apache-2.0

// Package v1alpha1 contains Go types for Karmada's config.karmada.io/v1alpha1 API: the
// ResourceInterpreterCustomization (Lua scripts that teach Karmada about a kind) and the
// ResourceInterpreterWebhookConfiguration (webhooks that do the same), with Karmada's
// JSON field names, so the objects Karmada users already have are read as they are.
//
// +groupName=config.karmada.io
// +kubebuilder:object:generate=true
package v1alpha1
