// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
)

const revise = configv1alpha1.InterpreterOperationReviseReplica

func rule(ops []configv1alpha1.InterpreterOperation, groups, versions, kinds []string) configv1alpha1.RuleWithOperations {
	return configv1alpha1.RuleWithOperations{Operations: ops, Rule: configv1alpha1.Rule{APIGroups: groups, APIVersions: versions, Kinds: kinds}}
}

func TestRuleMatching(t *testing.T) {
	queue := schema.GroupVersionKind{Group: "queues.example.io", Version: "v1", Kind: "Queue"}
	pod := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	ops := func(o ...configv1alpha1.InterpreterOperation) []configv1alpha1.InterpreterOperation { return o }
	s := func(v ...string) []string { return v }
	for _, c := range []struct {
		name string
		rule configv1alpha1.RuleWithOperations
		gvk  schema.GroupVersionKind
		want bool
	}{
		{"exact", rule(ops(revise), s("queues.example.io"), s("v1"), s("Queue")), queue, true},
		{"operation *", rule(ops("*"), s("queues.example.io"), s("v1"), s("Queue")), queue, true},
		{"another operation", rule(ops(configv1alpha1.InterpreterOperationInterpretReplica), s("queues.example.io"), s("v1"), s("Queue")), queue, false},
		{"no operations", rule(nil, s("*"), s("*"), s("*")), queue, false},
		{"all wildcards", rule(ops(revise), s("*"), s("*"), s("*")), queue, true},
		{"group *", rule(ops(revise), s("*"), s("v1"), s("Queue")), queue, true},
		{"version *", rule(ops(revise), s("queues.example.io"), s("*"), s("Queue")), queue, true},
		{"kind *", rule(ops(revise), s("queues.example.io"), s("v1"), s("*")), queue, true},
		{"one of several", rule(ops(configv1alpha1.InterpreterOperationRetain, revise), s("apps", "queues.example.io"), s("v1beta1", "v1"), s("Deployment", "Queue")), queue, true},
		{"other group", rule(ops(revise), s("example.io"), s("v1"), s("Queue")), queue, false},
		{"other version", rule(ops(revise), s("queues.example.io"), s("v2"), s("Queue")), queue, false},
		{"other kind", rule(ops(revise), s("queues.example.io"), s("v1"), s("Queues")), queue, false},
		// Kinds match case-sensitively, as Karmada's matcher compares them.
		{"kind case", rule(ops(revise), s("queues.example.io"), s("v1"), s("queue")), queue, false},
		{"empty group list", rule(ops(revise), nil, s("v1"), s("Pod")), pod, false},
		{"core group", rule(ops(revise), s(""), s("v1"), s("Pod")), pod, true},
		{"core group is no wildcard", rule(ops(revise), s(""), s("v1"), s("Queue")), queue, false},
	} {
		if got := Matches(c.rule, c.gvk, revise); got != c.want {
			t.Errorf("%s: Matches = %v, want %v", c.name, got, c.want)
		}
	}
}

func config(name string, hooks ...configv1alpha1.ResourceInterpreterWebhook) configv1alpha1.ResourceInterpreterWebhookConfiguration {
	return configv1alpha1.ResourceInterpreterWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: hooks}
}

func hook(name string, rules ...configv1alpha1.RuleWithOperations) configv1alpha1.ResourceInterpreterWebhook {
	return configv1alpha1.ResourceInterpreterWebhook{Name: name, Rules: rules, InterpreterContextVersions: []string{"v1alpha1"}}
}

// Of all matching webhooks Karmada calls the first by configuration/webhook name, whatever
// order the configurations are listed in.
func TestTheFirstMatchingWebhookByConfigurationAndWebhookNameIsCalled(t *testing.T) {
	queue := schema.GroupVersionKind{Group: "queues.example.io", Version: "v1", Kind: "Queue"}
	all := rule([]configv1alpha1.InterpreterOperation{"*"}, []string{"*"}, []string{"*"}, []string{"*"})
	exact := rule([]configv1alpha1.InterpreterOperation{revise}, []string{"queues.example.io"}, []string{"v1"}, []string{"Queue"})
	other := rule([]configv1alpha1.InterpreterOperation{revise}, []string{"apps"}, []string{"v1"}, []string{"Deployment"})
	configs := []configv1alpha1.ResourceInterpreterWebhookConfiguration{
		config("zz", hook("a", all)),
		config("b", hook("z-exact", exact), hook("m-deployments", other), hook("n-any", all)),
		config("a", hook("deployments", other)),
	}
	h, ok := FirstHook(configs, queue, revise)
	if !ok || h.Configuration != "b" || h.Name != "n-any" {
		t.Fatalf("first hook %s/%s (%v), want b/n-any", h.Configuration, h.Name, ok)
	}
	if _, ok := FirstHook(configs[2:], queue, revise); ok {
		t.Errorf("a hook for Deployments handles Queues")
	}
}

func TestKindsAConfigurationRevises(t *testing.T) {
	exact := rule([]configv1alpha1.InterpreterOperation{revise}, []string{"queues.example.io", "example.io"}, []string{"v1"}, []string{"Queue"})
	status := rule([]configv1alpha1.InterpreterOperation{configv1alpha1.InterpreterOperationInterpretStatus}, []string{"apps"}, []string{"v1"}, []string{"*"})
	c := config("c", hook("h", exact, status))
	kinds, anyKind := Kinds(&c, revise)
	want := []schema.GroupVersionKind{{Group: "queues.example.io", Version: "v1", Kind: "Queue"}, {Group: "example.io", Version: "v1", Kind: "Queue"}}
	if diff := cmp.Diff(want, kinds); diff != "" || anyKind {
		t.Errorf("kinds (-want +got):\n%s\nanyKind %v, want false (the wildcard rule is for another operation)", diff, anyKind)
	}
	wild := config("w", hook("h", rule([]configv1alpha1.InterpreterOperation{"*"}, []string{"apps"}, []string{"*"}, []string{"Deployment"})))
	if _, anyKind := Kinds(&wild, revise); !anyKind {
		t.Errorf("a rule with version * does not say it takes any kind")
	}
	if !Handles(&wild, schema.GroupVersionKind{Group: "apps", Version: "v2", Kind: "Deployment"}, revise) {
		t.Errorf("Handles misses a kind the wildcard rule matches")
	}
}
