// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// ImageOf is the image of the first container of a Deployment manifest, "" when it has none.
func ImageOf(manifest *unstructured.Unstructured) string {
	containers, _, _ := unstructured.NestedSlice(manifest.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		return ""
	}
	image, _ := containers[0].(map[string]any)["image"].(string)
	return image
}

// WorkImages is one consistent read of the image each member's live Work of the
// Deployments of namespace ns carries, by cluster: what a staged rollout's specs watch.
// An error is returned, not failed on, so that recorders can read while the API server is busy.
func WorkImages(ctx context.Context, c client.Reader, ns string) (map[string]string, error) {
	works := &workv1alpha1.WorkList{}
	if err := c.List(ctx, works); err != nil {
		return nil, err
	}
	images := map[string]string{}
	for _, w := range works.Items {
		if w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotation] != ns || w.DeletionTimestamp != nil {
			continue
		}
		m := &unstructured.Unstructured{}
		if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
			return nil, err
		}
		cluster, _ := names.ClusterOfExecutionNamespace(w.Namespace)
		images[cluster] = ImageOf(m)
	}
	return images, nil
}
