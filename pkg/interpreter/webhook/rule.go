// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
)

// wildcard in a rule's list matches any value.
const wildcard = "*"

// Matches tells whether rule covers operation on kind gvk, as Karmada's matcher does:
// each of operations, apiGroups, apiVersions and kinds must hold the value or "*".
func Matches(rule configv1alpha1.RuleWithOperations, gvk schema.GroupVersionKind, operation configv1alpha1.InterpreterOperation) bool {
	return slices.ContainsFunc(rule.Operations, func(op configv1alpha1.InterpreterOperation) bool {
		return op == configv1alpha1.InterpreterOperationAll || op == operation
	}) &&
		exactOrWildcard(gvk.Group, rule.APIGroups) &&
		exactOrWildcard(gvk.Version, rule.APIVersions) &&
		exactOrWildcard(gvk.Kind, rule.Kinds)
}

func exactOrWildcard(value string, items []string) bool {
	return slices.Contains(items, wildcard) || slices.Contains(items, value)
}

// Hook is one webhook of a configuration.
type Hook struct {
	Configuration string
	*configv1alpha1.ResourceInterpreterWebhook
}

// uid is how Karmada names and orders a webhook: configuration/webhook.
func (h Hook) uid() string { return h.Configuration + "/" + h.Name }

// handles tells whether one of the hook's rules covers operation on gvk.
func (h Hook) handles(gvk schema.GroupVersionKind, operation configv1alpha1.InterpreterOperation) bool {
	return slices.ContainsFunc(h.Rules, func(r configv1alpha1.RuleWithOperations) bool { return Matches(r, gvk, operation) })
}

// FirstHook returns the webhook that handles operation on gvk, as Karmada picks it: of all
// the configurations' webhooks whose rules match, the first by configuration/webhook name.
// configs is not modified and the hook points into it.
func FirstHook(configs []configv1alpha1.ResourceInterpreterWebhookConfiguration, gvk schema.GroupVersionKind,
	operation configv1alpha1.InterpreterOperation) (Hook, bool) {
	var matching []Hook
	for i := range configs {
		for j := range configs[i].Webhooks {
			h := Hook{Configuration: configs[i].Name, ResourceInterpreterWebhook: &configs[i].Webhooks[j]}
			if h.handles(gvk, operation) {
				matching = append(matching, h)
			}
		}
	}
	if len(matching) == 0 {
		return Hook{}, false
	}
	sort.SliceStable(matching, func(a, b int) bool { return matching[a].uid() < matching[b].uid() })
	return matching[0], true
}

// Kinds are the template kinds whose operation a configuration's webhooks may handle,
// for re-syncing their bindings when it changes: the kinds its rules name one by one,
// and whether some rule takes any group, version or kind ("*"), which no list of kinds
// can say.
func Kinds(config *configv1alpha1.ResourceInterpreterWebhookConfiguration, operation configv1alpha1.InterpreterOperation) (kinds []schema.GroupVersionKind, anyKind bool) {
	for _, h := range config.Webhooks {
		for _, r := range h.Rules {
			if !slices.Contains(r.Operations, operation) && !slices.Contains(r.Operations, configv1alpha1.InterpreterOperationAll) {
				continue
			}
			if slices.Contains(r.APIGroups, wildcard) || slices.Contains(r.APIVersions, wildcard) || slices.Contains(r.Kinds, wildcard) {
				anyKind = true
				continue
			}
			for _, g := range r.APIGroups {
				for _, v := range r.APIVersions {
					for _, k := range r.Kinds {
						kinds = append(kinds, schema.GroupVersionKind{Group: g, Version: v, Kind: k})
					}
				}
			}
		}
	}
	return kinds, anyKind
}

// Handles tells whether any webhook of config handles operation on gvk.
func Handles(config *configv1alpha1.ResourceInterpreterWebhookConfiguration, gvk schema.GroupVersionKind, operation configv1alpha1.InterpreterOperation) bool {
	for i := range config.Webhooks {
		if (Hook{ResourceInterpreterWebhook: &config.Webhooks[i]}).handles(gvk, operation) {
			return true
		}
	}
	return false
}
