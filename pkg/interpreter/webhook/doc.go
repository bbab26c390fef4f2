// SPDX-License-Identifier: Apache-2.0

// Package webhook is the resource interpreter's webhook step, as Karmada runs it: the
// first webhook of the ResourceInterpreterWebhookConfigurations (in the order of their
// configuration and webhook names) whose rules match a kind and operation is sent a
// ResourceInterpreterContext over HTTPS, and answers ReviseReplica with a JSON patch of
// the object.
package webhook
