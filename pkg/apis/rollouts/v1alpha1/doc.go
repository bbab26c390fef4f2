// SPDX-License-Identifier: Apache-2.0

// Package v1alpha1 is the project's own API group, rollouts.binding-controller.io: the
// opt-in staged rollout of a template change across a binding's clusters.
//
//   - RolloutPolicy (namespaced) and ClusterRolloutPolicy select templates as override
//     policies do and say how their changes roll out: stages of clusters in order, each
//     gated on the health of the one before, with a failure budget and an optional
//     rollback.
//   - BindingRollout (namespaced, for a ResourceBinding) and ClusterBindingRollout (for a
//     ClusterResourceBinding) hold one binding's rollout: its revision, stage, phase and
//     each cluster's live revision. They are the rollout's state in the API server, so a
//     restart or a failover resumes where it was, and `kubectl get` shows them.
//
// Karmada's own types are untouched: a binding under no policy syncs exactly as before.
//
// +groupName=rollouts.binding-controller.io
// +kubebuilder:object:generate=true
package v1alpha1
