// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/overridepolicy"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// Event reasons of override policies, as Karmada's override manager records them on the
// resource template.
const (
	ReasonApplyOverridePolicySucceed = "ApplyOverridePolicySucceed"
	ReasonApplyOverridePolicyFailed  = "ApplyOverridePolicyFailed"
)

// recordOverrideEvents tells the template's owner, per target cluster, which override
// policies shaped its Work. Karmada records these on every sync; here a success is
// recorded only when the Work it shaped was written (created or updated), so that a
// resync of unchanged Works raises no stream of identical events. A policy that failed to
// apply is recorded on every sync that hits it: such a cluster is not retried until the
// binding or a policy changes, so this cannot repeat on its own.
//
// rendered holds, per target (the order of results), the annotations of the Work
// rendered for it (nil when rendering failed).
func (r *Reconciler) recordOverrideEvents(template *unstructured.Unstructured, rendered []map[string]string, results []workapply.Result) {
	if r.Recorder == nil || template == nil {
		return
	}
	for i, result := range results {
		var failed *overridepolicy.Error
		switch {
		case errors.As(result.Err, &failed):
			r.Recorder.Eventf(template, corev1.EventTypeWarning, ReasonApplyOverridePolicyFailed,
				"Apply %s for cluster(%s) failed.", policyNamed(failed.PolicyKind, failed.PolicyNamespace, failed.PolicyName), failed.Cluster)
		case result.Outcome == workapply.Created || result.Outcome == workapply.Updated:
			if i >= len(rendered) {
				continue
			}
			for _, p := range appliedPolicies(rendered[i], template.GetNamespace()) {
				r.Recorder.Eventf(template, corev1.EventTypeNormal, ReasonApplyOverridePolicySucceed,
					"Apply %s for cluster(%s) succeed.", p, result.Cluster)
			}
		}
	}
}

// appliedPolicies names, as the events do, every policy rule a rendered Work's
// annotations record as applied: ClusterOverridePolicies first, then OverridePolicies
// (which live in the template's namespace), each in the annotation's order. A rule is
// named once per rule, as Karmada records one event per applied rule.
func appliedPolicies(annotations map[string]string, templateNamespace string) []string {
	var named []string
	for _, group := range []struct{ annotation, kind, namespace string }{
		{policyv1alpha1.AppliedClusterOverridesAnnotation, policyv1alpha1.ResourceKindClusterOverridePolicy, ""},
		{policyv1alpha1.AppliedOverridesAnnotation, policyv1alpha1.ResourceKindOverridePolicy, templateNamespace},
	} {
		raw, ok := annotations[group.annotation]
		if !ok {
			continue
		}
		var applied []overridepolicy.AppliedPolicy
		if err := json.Unmarshal([]byte(raw), &applied); err != nil {
			// We wrote it a moment ago from the same type; it cannot fail to decode.
			continue
		}
		for _, p := range applied {
			named = append(named, policyNamed(group.kind, group.namespace, p.PolicyName))
		}
	}
	return named
}

// policyNamed is how Karmada's override events name a policy: "override policy(ns/name)"
// or "cluster override policy(name)".
func policyNamed(kind, namespace, name string) string {
	if kind == policyv1alpha1.ResourceKindClusterOverridePolicy {
		return fmt.Sprintf("cluster override policy(%s)", name)
	}
	return fmt.Sprintf("override policy(%s/%s)", namespace, name)
}
