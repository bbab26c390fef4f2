// SPDX-License-Identifier: Apache-2.0

// Package testkit holds what the suites that drive the controller share: workload and
// binding builders, a log collector, and the controller-manager run in-process.
package testkit

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/controllermanager"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// Deployment returns an nginx Deployment namespace/name with 3 replicas.
func Deployment(namespace, name string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app": name}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
}

// Binding returns the ResourceBinding namespace/name of a Deployment, scheduled to clusters
// with one replica each (of 3 in all, as a scheduler would divide them), carrying
// permanentID as Karmada's detector would.
func Binding(namespace, name, permanentID string, template *appsv1.Deployment, clusters ...string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: permanentID}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment",
				Namespace: template.Namespace, Name: template.Name, UID: template.UID},
			Replicas: 3,
		},
	}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 1})
	}
	return rb
}

// SyncBuffer collects output written from several goroutines, for assertions on logs.
type SyncBuffer = localplane.SyncBuffer

// InProcessOptions are the manager's defaults for a test: no leader election, no
// listeners (tests run in parallel and must not fight over ports).
func InProcessOptions() *controllermanager.Options {
	opts := controllermanager.NewOptions()
	opts.LeaderElect = false
	opts.MetricsBindAddress = "0"
	opts.HealthProbeBindAddress = "0"
	return opts
}

// RunManager starts the controller-manager in-process against cfg and returns a function
// that stops it and waits until it has stopped. A start failure is passed to fail.
func RunManager(ctx context.Context, cfg *rest.Config, opts *controllermanager.Options, fail func(error)) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	mgr, err := controllermanager.NewManager(ctx, cfg, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := mgr.Start(ctx); err != nil {
			fail(err)
		}
	}()
	return func() { cancel(); <-stopped }, nil
}

// JoinClusters does for each member cluster what joining it to Karmada does on the
// control plane: its Cluster object (where the API server serves the kind) and its
// execution namespace. Like Karmada's, the controller writes no Work for a cluster that
// has no Cluster object.
func JoinClusters(ctx context.Context, c client.Client, members ...string) error {
	for _, m := range members {
		cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: m},
			Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.SyncModePush}}
		if err := c.Create(ctx, cluster); err != nil && !meta.IsNoMatchError(err) {
			return fmt.Errorf("creating cluster %s: %w", m, err)
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionNamespace(m)}}
		if err := c.Create(ctx, ns); err != nil {
			return fmt.Errorf("execution namespace of %s: %w", m, err)
		}
	}
	return nil
}
