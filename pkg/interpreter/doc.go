// SPDX-License-Identifier: Apache-2.0

// Package interpreter is the resource interpreter's ReviseReplica, as Karmada runs it: the
// replicas a member cluster gets are written into its copy of the resource template by
// the first hook that handles the kind, in Karmada's order:
//
//  1. a ResourceInterpreterCustomization (declarative Lua) for the kind;
//  2. a ResourceInterpreterWebhookConfiguration webhook whose rules match it;
//  3. the customizations Karmada bundles for third-party kinds (package thirdparty);
//  4. the native rules for Kubernetes kinds, which package render applies itself.
//
// Scripts run in the sandbox of package luavm. A failure concerns one cluster's copy and
// is returned as an *Error that names the operation, the hook and the cluster.
package interpreter
