// SPDX-License-Identifier: Apache-2.0

// Package rollouthealth judges, from a Work's status alone, whether its cluster runs a
// revision healthily: the staged rollout's health gate.
//
// It reads the status as Karmada's execution side writes it. The execution controller
// sets the Work's Applied condition once the manifest is applied to the member cluster.
// The work-status controller then writes one manifest status per Work: the member
// object's health (Healthy, Unhealthy, or Unknown when its health could not be
// interpreted; a kind without a health rule is Healthy) and its reflected status. For
// the native workloads (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job...) the
// reflected status carries the member object's generation and observedGeneration and the
// resourcetemplate.karmada.io/generation its manifest was rendered with
// (resourceTemplateGeneration): together they say whether the member controller has
// acted on this revision, or whether the health is still the previous revision's.
package rollouthealth

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

// Verdict is what a Work's status says of its cluster on a revision.
type Verdict int

const (
	// Pending: not known yet; the progress deadline decides if it stays so.
	Pending Verdict = iota
	// Healthy: applied, healthy, and the member object observed the revision.
	Healthy
	// Unhealthy: the member object runs the revision and is unhealthy.
	Unhealthy
)

func (v Verdict) String() string {
	return [...]string{"Pending", "Healthy", "Unhealthy"}[v]
}

// Judgement is a Verdict and why.
type Judgement struct {
	Verdict Verdict
	Reason  string
}

// reflected is what the gate reads of a reflected status; a kind whose status does not
// carry these has none of them.
type reflected struct {
	Generation                 *int64 `json:"generation"`
	ObservedGeneration         *int64 `json:"observedGeneration"`
	ResourceTemplateGeneration *int64 `json:"resourceTemplateGeneration"`
}

// Judge says whether work's cluster runs the revision rendered from the template at
// templateGeneration (its resourcetemplate.karmada.io/generation) healthily.
//
// A reflected status that carries no generations (a kind Karmada reflects as it is)
// cannot show which revision it is about: such a cluster is judged on Applied and health
// alone.
//
// A Work being deleted is pending, whatever its status says: the status is of a workload
// on its way out, and the cluster's new Work cannot be written until it is gone (the
// cluster is blocked, as when it is unreachable).
func Judge(work *workv1alpha1.Work, templateGeneration int64) Judgement {
	if work.DeletionTimestamp != nil {
		return Judgement{Pending, fmt.Sprintf("work %s is being deleted", objectKey(work.Namespace, work.Name))}
	}
	applied := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkApplied)
	if applied == nil || applied.Status != metav1.ConditionTrue {
		reason := "not applied yet"
		if applied != nil && applied.Message != "" {
			reason = "not applied: " + applied.Message
		}
		return Judgement{Pending, reason}
	}
	if len(work.Status.ManifestStatuses) == 0 {
		return Judgement{Pending, "no status reflected from the member cluster yet"}
	}
	for _, ms := range work.Status.ManifestStatuses {
		object := fmt.Sprintf("%s %s", ms.Identifier.Kind, objectKey(ms.Identifier.Namespace, ms.Identifier.Name))
		var r reflected
		if ms.Status != nil && len(ms.Status.Raw) > 0 {
			if err := json.Unmarshal(ms.Status.Raw, &r); err != nil {
				return Judgement{Pending, fmt.Sprintf("%s: reflected status unreadable: %v", object, err)}
			}
		}
		if g := r.ResourceTemplateGeneration; g != nil && *g != templateGeneration {
			return Judgement{Pending, fmt.Sprintf("%s runs template generation %d, not %d yet", object, *g, templateGeneration)}
		}
		if r.Generation != nil && r.ObservedGeneration != nil && *r.Generation != *r.ObservedGeneration {
			return Judgement{Pending, fmt.Sprintf("%s: generation %d not observed yet (observed %d)", object, *r.Generation, *r.ObservedGeneration)}
		}
		switch ms.Health {
		case workv1alpha1.ResourceHealthy:
		case workv1alpha1.ResourceUnhealthy:
			return Judgement{Unhealthy, object + " is Unhealthy"}
		default:
			return Judgement{Pending, fmt.Sprintf("%s health is %s", object, healthOrUnknown(ms.Health))}
		}
	}
	return Judgement{Healthy, "applied, healthy and observed"}
}

func healthOrUnknown(h workv1alpha1.ResourceHealth) string {
	if h == "" {
		return string(workv1alpha1.ResourceUnknown)
	}
	return string(h)
}

func objectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
