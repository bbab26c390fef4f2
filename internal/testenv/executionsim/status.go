// SPDX-License-Identifier: Apache-2.0

package executionsim

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// HealthFunc says how the member cluster's copy of manifest runs: the health Karmada's
// work-status controller would write for it; "" writes no status for it at all.
type HealthFunc func(cluster string, manifest *unstructured.Unstructured) workv1alpha1.ResourceHealth

// ReportHealth makes the simulator write each live Work's status as Karmada's execution
// and work-status controllers do once its manifest runs: the Applied condition, and one
// manifest status with health and the reflected status of a native workload (the member
// object's generation, observed, and the template generation its manifest carries).
// Without it, the simulator writes no status.
func (s *Simulator) ReportHealth(health HealthFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.health = health
}

func (s *Simulator) healthFunc() HealthFunc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.health
}

// ReportOnce writes the status of every live Work of a connected cluster, when health is set.
func (s *Simulator) ReportOnce(ctx context.Context) error {
	health := s.healthFunc()
	if health == nil {
		return nil
	}
	works, err := s.list(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for i := range works.Items {
		work := &works.Items[i]
		cluster, ok := names.ClusterOfExecutionNamespace(work.Namespace)
		if !ok || work.DeletionTimestamp != nil || !s.connected(cluster) || len(work.Spec.Workload.Manifests) == 0 {
			continue
		}
		manifest := &unstructured.Unstructured{}
		if err := manifest.UnmarshalJSON(work.Spec.Workload.Manifests[0].Raw); err != nil {
			continue
		}
		h := health(cluster, manifest)
		if h == "" {
			continue
		}
		want, err := reportedStatus(work, manifest, h)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if equality.Semantic.DeepEqual(ignoreTimes(work.Status), ignoreTimes(want)) {
			continue
		}
		work.Status = want
		if err := s.client.Status().Update(ctx, work); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func reportedStatus(work *workv1alpha1.Work, manifest *unstructured.Unstructured, health workv1alpha1.ResourceHealth) (workv1alpha1.WorkStatus, error) {
	templateGeneration, _ := strconv.ParseInt(manifest.GetAnnotations()[workv1alpha1.ResourceTemplateGenerationAnnotation], 10, 64)
	// The member object's generation moves with each manifest the Work carries, and its
	// controller has observed it.
	reflected, err := json.Marshal(map[string]any{
		"generation": work.Generation, "observedGeneration": work.Generation,
		"resourceTemplateGeneration": templateGeneration,
	})
	if err != nil {
		return workv1alpha1.WorkStatus{}, err
	}
	gv, _ := schema.ParseGroupVersion(manifest.GetAPIVersion())
	status := workv1alpha1.WorkStatus{Conditions: work.Status.Conditions}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue,
		Reason: "AppliedSuccessful", Message: "Manifest has been successfully applied"})
	status.ManifestStatuses = []workv1alpha1.ManifestStatus{{
		Identifier: workv1alpha1.ResourceIdentifier{Group: gv.Group, Version: gv.Version, Kind: manifest.GetKind(),
			Namespace: manifest.GetNamespace(), Name: manifest.GetName()},
		Status: &runtime.RawExtension{Raw: reflected},
		Health: health,
	}}
	return status, nil
}

// ignoreTimes drops what differs between two writes of the same status.
func ignoreTimes(s workv1alpha1.WorkStatus) workv1alpha1.WorkStatus {
	out := *s.DeepCopy()
	for i := range out.Conditions {
		out.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	return out
}
