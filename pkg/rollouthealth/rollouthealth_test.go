// SPDX-License-Identifier: Apache-2.0

package rollouthealth

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

// work is a Work as Karmada's execution side leaves it: applied (or not), with the
// Deployment's reflected status and health.
func work(applied metav1.ConditionStatus, health workv1alpha1.ResourceHealth, status string) *workv1alpha1.Work {
	w := &workv1alpha1.Work{}
	if applied != "" {
		w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: applied, Reason: "AppliedFailed",
			Message: "admission webhook denied the request"}}
	}
	if health != "" || status != "" {
		ms := workv1alpha1.ManifestStatus{
			Identifier: workv1alpha1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"},
			Health:     health,
		}
		if status != "" {
			ms.Status = &runtime.RawExtension{Raw: []byte(status)}
		}
		w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{ms}
	}
	return w
}

// deleted is w held terminating by the execution controller's finalizer, as the Work of
// an unreachable cluster stays.
func deleted(w *workv1alpha1.Work) *workv1alpha1.Work {
	w.Namespace, w.Name = "karmada-es-member1", "web-687f7fb96f"
	w.DeletionTimestamp = &metav1.Time{}
	w.Finalizers = []string{workv1alpha1.ExecutionControllerFinalizer}
	return w
}

// A Deployment's status as Karmada reflects it: the member's generation and observed
// generation, and the template generation its manifest was rendered with.
const (
	observedRevision5  = `{"generation":2,"resourceTemplateGeneration":5,"replicas":3,"readyReplicas":3,"observedGeneration":2}`
	previousRevision4  = `{"generation":1,"resourceTemplateGeneration":4,"replicas":3,"readyReplicas":3,"observedGeneration":1}`
	notObservedYet5    = `{"generation":2,"resourceTemplateGeneration":5,"replicas":3,"readyReplicas":3,"observedGeneration":1}`
	reflectedAsIsNoGen = `{"phase":"Running"}`
)

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name       string
		work       *workv1alpha1.Work
		want       Verdict
		wantReason string
	}{
		{"nothing written back yet", work("", "", ""), Pending, "not applied yet"},
		{"apply failed: pending, the deadline decides", work(metav1.ConditionFalse, "", ""), Pending, "admission webhook denied"},
		{"applied, no status reflected yet", work(metav1.ConditionTrue, "", ""), Pending, "no status reflected"},
		{"healthy on this revision", work(metav1.ConditionTrue, workv1alpha1.ResourceHealthy, observedRevision5), Healthy, "applied, healthy"},
		{"unhealthy on this revision", work(metav1.ConditionTrue, workv1alpha1.ResourceUnhealthy, observedRevision5), Unhealthy, "Deployment default/web is Unhealthy"},
		{"healthy, but the previous revision's health", work(metav1.ConditionTrue, workv1alpha1.ResourceHealthy, previousRevision4), Pending, "runs template generation 4, not 5"},
		{"unhealthy, but the previous revision's: not this one's failure", work(metav1.ConditionTrue, workv1alpha1.ResourceUnhealthy, previousRevision4), Pending, "template generation 4"},
		{"this revision, not observed by the member's controller yet", work(metav1.ConditionTrue, workv1alpha1.ResourceHealthy, notObservedYet5), Pending, "generation 2 not observed yet"},
		{"health unknown", work(metav1.ConditionTrue, workv1alpha1.ResourceUnknown, observedRevision5), Pending, "health is Unknown"},
		{"a kind reflected as it is: Applied and health alone", work(metav1.ConditionTrue, workv1alpha1.ResourceHealthy, reflectedAsIsNoGen), Healthy, ""},
		{"a reflected status that is not JSON", work(metav1.ConditionTrue, workv1alpha1.ResourceHealthy, `{`), Pending, "unreadable"},
		{"healthy on this revision, but being deleted: it blocks the cluster", deleted(work(metav1.ConditionTrue, workv1alpha1.ResourceHealthy, observedRevision5)),
			Pending, "work karmada-es-member1/web-687f7fb96f is being deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Judge(tc.work, 5)
			if got.Verdict != tc.want || !strings.Contains(got.Reason, tc.wantReason) {
				t.Errorf("Judge = %v %q, want %v with %q", got.Verdict, got.Reason, tc.want, tc.wantReason)
			}
		})
	}
}
