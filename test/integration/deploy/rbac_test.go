// SPDX-License-Identifier: Apache-2.0

package deploy_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
)

// neededRules is what the controller's code needs, and nothing more: a new permission must
// be added here on purpose, by someone who can say why.
var neededRules = []rbacv1.PolicyRule{
	// Resource templates of any kind: read and watch, never write.
	{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
	// Its own events on bindings and templates: core/v1, as Karmada's binding controller
	// records them (create, and patch to count a repeat).
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	// Bindings: read, and patch their finalizers.
	{APIGroups: []string{"work.karmada.io"}, Resources: []string{"clusterresourcebindings", "resourcebindings"},
		Verbs: []string{"get", "list", "patch", "watch"}},
	// The WorksSynced condition.
	{APIGroups: []string{"work.karmada.io"}, Resources: []string{"clusterresourcebindings/status", "resourcebindings/status"},
		Verbs: []string{"patch"}},
	// Resource interpreter customizations and webhooks (config.karmada.io): read and
	// watch, to revise replicas as they say.
	{APIGroups: []string{"config.karmada.io"}, Resources: []string{"resourceinterpretercustomizations", "resourceinterpreterwebhookconfigurations"},
		Verbs: []string{"get", "list", "watch"}},
	// Works: the controller's output.
	{APIGroups: []string{"work.karmada.io"}, Resources: []string{"works"},
		Verbs: []string{"create", "delete", "get", "list", "update", "watch"}},
	// Staged rollouts: the policies, read and watched; each binding's BindingRollout (a
	// ClusterResourceBinding's ClusterBindingRollout), created, patched to name the policy
	// that governs when that changes, its status written, deleted with its policy; the
	// template's revisions as ControllerRevisions, listed and read from the API server
	// (never cached), created, renumbered by patch, pruned.
	{APIGroups: []string{"rollouts.binding-controller.io"}, Resources: []string{"clusterrolloutpolicies", "rolloutpolicies"},
		Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"rollouts.binding-controller.io"}, Resources: []string{"bindingrollouts", "clusterbindingrollouts"},
		Verbs: []string{"create", "delete", "get", "list", "patch", "watch"}},
	{APIGroups: []string{"rollouts.binding-controller.io"}, Resources: []string{"bindingrollouts/status", "clusterbindingrollouts/status"},
		Verbs: []string{"update"}},
	{APIGroups: []string{"apps"}, Resources: []string{"controllerrevisions"},
		Verbs: []string{"create", "delete", "get", "list", "patch"}},
}

var _ = Describe("The generated ClusterRole", func() {
	It("grants exactly what the controller needs", func() {
		generated := &rbacv1.ClusterRole{}
		readYAML("config/rbac/role.yaml", generated)
		Expect(generated.Rules).To(ConsistOf(neededRules))
	})
})
