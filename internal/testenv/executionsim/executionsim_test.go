// SPDX-License-Identifier: Apache-2.0

package executionsim

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/names"
)

func deletedWork(cluster string) *workv1alpha1.Work {
	return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: names.ExecutionNamespace(cluster), Name: "w",
		DeletionTimestamp: &metav1.Time{Time: time.Now()}, Finalizers: []string{workv1alpha1.ExecutionControllerFinalizer}}}
}

// Only limits the simulator to the clusters named: a deleted Work of another cluster
// keeps its finalizer, as does one of a disconnected cluster, and a connected cluster's
// goes.
func TestOnlyReleasesTheNamedConnectedClustersWorksAlone(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := workv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(deletedWork("a"), deletedWork("b"), deletedWork("outside")).Build()
	s := New(c, time.Second).Only("a", "b")
	s.Disconnect("b")
	if err := s.ReleaseOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	for cluster, released := range map[string]bool{"a": true, "b": false, "outside": false} {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(deletedWork(cluster)), &workv1alpha1.Work{})
		if gone := apierrors.IsNotFound(err); gone != released || (err != nil && !gone) {
			t.Errorf("cluster %s: Get = %v, want released %v", cluster, err, released)
		}
	}
}
