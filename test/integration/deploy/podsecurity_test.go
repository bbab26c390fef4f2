// SPDX-License-Identifier: Apache-2.0

package deploy_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// The manager must run in a namespace that enforces the Pod Security "restricted" profile,
// checked with the same library the API server's admission plugin uses.
var _ = Describe("The manager Deployment under Pod Security", func() {
	evaluate := func(spec *corev1.PodSpec) policy.AggregateCheckResult {
		evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
		Expect(err).NotTo(HaveOccurred())
		d := deploymentOf("config/default")
		return policy.AggregateCheckResults(evaluator.EvaluatePod(
			psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()},
			&d.Spec.Template.ObjectMeta, spec))
	}

	for _, dir := range []string{"config/default", "config/local"} {
		It("passes the restricted profile in "+dir, func() {
			d := deploymentOf(dir)
			result := evaluate(&d.Spec.Template.Spec)
			Expect(result.Allowed).To(BeTrue(), "%s: %s", result.ForbiddenReason(), result.ForbiddenDetail())
		})
	}

	It("would fail it if the container could escalate privileges (the check can fail)", func() {
		d := deploymentOf("config/default")
		spec := d.Spec.Template.Spec.DeepCopy()
		escalate := true
		spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = &escalate
		Expect(evaluate(spec).Allowed).To(BeFalse())
	})
})
