// SPDX-License-Identifier: Apache-2.0

// Package executionsim plays Karmada's execution side in tests and demos: for member
// clusters that are connected it lets go of the execution finalizer of deleted Works, as
// Karmada's execution controller does once the workload is gone from the member. A
// disconnected cluster's Works stay "being deleted" until it is connected again. With
// ReportHealth it also writes the Works' status, as the work-status controller does.
package executionsim

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// Simulator releases deleted Works of connected clusters.
type Simulator struct {
	client   client.Client
	interval time.Duration

	mu           sync.Mutex
	disconnected map[string]bool
	health       HealthFunc
	only         []string
}

// New returns a Simulator that polls with c (a live, uncached client) every interval.
func New(c client.Client, interval time.Duration) *Simulator {
	return &Simulator{client: c, interval: interval, disconnected: map[string]bool{}}
}

// Only makes the simulator look at the Works of clusters alone: on a plane that holds a
// large fleet whose Works are never deleted, listing every Work each interval would
// load the API server that the run is measuring.
func (s *Simulator) Only(clusters ...string) *Simulator {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.only = slices.Clone(clusters)
	return s
}

// Disconnect makes cluster keep its deleted Works.
func (s *Simulator) Disconnect(cluster string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.disconnected[cluster] = true
}

// Connect lets cluster release its deleted Works again.
func (s *Simulator) Connect(cluster string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.disconnected, cluster)
}

func (s *Simulator) connected(cluster string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.disconnected[cluster]
}

// Run releases Works until ctx ends.
func (s *Simulator) Run(ctx context.Context) {
	ticker := time.NewTicker(s.interval)
	defer ticker.Stop()
	for {
		// Errors are transient here (the API server restarting, a conflict): the next tick retries.
		_ = s.ReleaseOnce(ctx)
		_ = s.ReportOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// ReleaseOnce removes the execution finalizer from every deleted Work of a connected cluster.
func (s *Simulator) ReleaseOnce(ctx context.Context) error {
	works, err := s.list(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for i := range works.Items {
		work := &works.Items[i]
		cluster, ok := names.ClusterOfExecutionNamespace(work.Namespace)
		if !ok || work.DeletionTimestamp == nil || !s.connected(cluster) ||
			!slices.Contains(work.Finalizers, workv1alpha1.ExecutionControllerFinalizer) {
			continue
		}
		base := work.DeepCopy()
		work.Finalizers = slices.DeleteFunc(work.Finalizers, func(f string) bool {
			return f == workv1alpha1.ExecutionControllerFinalizer
		})
		err := s.client.Patch(ctx, work, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// list lists the Works of every cluster, or of the clusters Only named.
func (s *Simulator) list(ctx context.Context) (*workv1alpha1.WorkList, error) {
	s.mu.Lock()
	only := s.only
	s.mu.Unlock()
	works := &workv1alpha1.WorkList{}
	if len(only) == 0 {
		return works, s.client.List(ctx, works)
	}
	for _, cluster := range only {
		in := &workv1alpha1.WorkList{}
		if err := s.client.List(ctx, in, client.InNamespace(names.ExecutionNamespace(cluster))); err != nil {
			return nil, err
		}
		works.Items = append(works.Items, in.Items...)
	}
	return works, nil
}
