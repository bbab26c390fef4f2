// SPDX-License-Identifier: Apache-2.0

package recovery

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/controlplane"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// Sampler takes recovery samples on Plane, whose Works Tracker watches and whose
// deleted Works Sim releases for the clusters it has connected.
type Sampler struct {
	Plane   *controlplane.Plane
	Tracker *localplane.WorkTracker
	Sim     *executionsim.Simulator
	// Blocked is the cluster kept disconnected, Other the binding's second cluster.
	Blocked, Other string
	// Finalizer creates the bindings with the binding controller's finalizer, as
	// Karmada's detector does: Karmada's controller deletes a binding's Works only on
	// its way to removing that finalizer (this project's adds it itself).
	Finalizer bool
	// Timeout caps the wait for the blocked cluster's new Work, StepTimeout every other.
	Timeout, StepTimeout time.Duration
}

// recoveryCase is one sample: the template's two Works (k1 on the blocked cluster),
// the binding's permanent IDs before and after it is recreated, and what was seen when.
type recoveryCase struct {
	k1, k2                   string
	firstID, secondID        string
	oldUID                   types.UID
	binding                  *workv1alpha2.ResourceBinding
	connected, gone, created time.Time
}

// Sample runs one recovery of template ns/name after the blocked cluster was
// disconnected for block; alive fails once the controller has exited.
func (r *Sampler) Sample(ctx context.Context, alive func() error, ns, name string, block time.Duration) Sample {
	out := Sample{Template: ns + "/" + name}
	fail := func(err error) Sample {
		out.Error = err.Error()
		r.Sim.Connect(r.Blocked)
		return out
	}
	d := workload.Deployment(ns, name, 2, 0)
	if err := r.Plane.Client.Create(ctx, d); err != nil {
		return fail(fmt.Errorf("creating the template: %w", err))
	}
	defer func() { _ = r.Plane.Client.Delete(context.WithoutCancel(ctx), d) }()
	work := names.WorkName("Deployment", ns, name)
	c := &recoveryCase{firstID: "pid-" + name + "-a", secondID: "pid-" + name + "-b",
		k1: localplane.WorkKey(names.ExecutionNamespace(r.Blocked), work),
		k2: localplane.WorkKey(names.ExecutionNamespace(r.Other), work)}
	if err := r.bindAndBlock(ctx, c, r.binding(d, name, c.firstID)); err != nil {
		return fail(err)
	}
	c.binding = r.binding(d, name, c.secondID)
	if err := r.recreate(ctx, c, block); err != nil {
		return fail(err)
	}
	switch err := r.reconnect(ctx, c); {
	case errors.Is(err, wait.ErrTimeout):
		out.TimedOut = true
	case err != nil:
		return fail(err)
	default:
		out.ReleaseMs = ms(c.gone.Sub(c.connected))
		out.LatencyMs = ms(c.created.Sub(c.gone))
	}
	// Clean up: the blocked cluster is connected, so every Work goes.
	if err := r.deleteBinding(ctx, c.binding); err != nil {
		out.Error = err.Error()
		return out
	}
	if err := r.Tracker.Wait(ctx, r.StepTimeout, func(get func(string) *localplane.WorkState) bool {
		return get(c.k1).UID == "" && get(c.k2).UID == ""
	}); err != nil {
		out.Error = fmt.Sprintf("cleaning up: waiting for the Works to go: %v", err)
	}
	if err := alive(); err != nil {
		out.Error = err.Error()
	}
	return out
}

// binding is the sample's binding of template d to both clusters.
func (r *Sampler) binding(d *appsv1.Deployment, name, permanentID string) *workv1alpha2.ResourceBinding {
	rb := workload.Binding(d, name, permanentID, []string{r.Blocked, r.Other})
	if r.Finalizer {
		rb.Finalizers = []string{workv1alpha2.BindingControllerFinalizer}
	}
	return rb
}

func liveWith(st *localplane.WorkState, id string) bool {
	return st.UID != "" && !st.Terminating && st.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] == id
}

// bindAndBlock binds the template to both clusters, waits for both Works, then
// disconnects the blocked one and deletes the binding: the other's Work goes, the
// blocked one's stays terminating.
func (r *Sampler) bindAndBlock(ctx context.Context, c *recoveryCase, rb *workv1alpha2.ResourceBinding) error {
	if err := r.Plane.Client.Create(ctx, rb); err != nil {
		return fmt.Errorf("creating the binding: %w", err)
	}
	if err := r.Tracker.Wait(ctx, r.StepTimeout, func(get func(string) *localplane.WorkState) bool {
		return liveWith(get(c.k1), c.firstID) && liveWith(get(c.k2), c.firstID)
	}); err != nil {
		return fmt.Errorf("waiting for both first Works: %w", err)
	}
	c.oldUID = r.Tracker.Get(c.k1).UID
	r.Sim.Disconnect(r.Blocked)
	if err := r.deleteBinding(ctx, rb); err != nil {
		return err
	}
	if err := r.Tracker.Wait(ctx, r.StepTimeout, func(get func(string) *localplane.WorkState) bool {
		st1 := get(c.k1)
		return get(c.k2).UID == "" && st1.UID == c.oldUID && st1.Terminating
	}); err != nil {
		return fmt.Errorf("waiting for %s's Work to go and %s's to stay terminating: %w", r.Other, r.Blocked, err)
	}
	return nil
}

// recreate creates the binding again with a new permanent ID, waits for the other
// cluster's new Work and then for the block, the blocked cluster's old Work still there.
func (r *Sampler) recreate(ctx context.Context, c *recoveryCase, block time.Duration) error {
	if err := r.Plane.Client.Create(ctx, c.binding); err != nil {
		return fmt.Errorf("recreating the binding: %w", err)
	}
	if err := r.Tracker.Wait(ctx, r.StepTimeout, func(get func(string) *localplane.WorkState) bool {
		return liveWith(get(c.k2), c.secondID)
	}); err != nil {
		return fmt.Errorf("waiting for %s's new Work: %w", r.Other, err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(block):
	}
	if st := r.Tracker.Get(c.k1); st.UID != c.oldUID || !st.Terminating {
		return fmt.Errorf("%s's old Work changed before it was connected: uid %s terminating=%v", r.Blocked, st.UID, st.Terminating)
	}
	return nil
}

// reconnect connects the blocked cluster and waits until its old Work is gone and its new one exists,
// as the watch saw them.
func (r *Sampler) reconnect(ctx context.Context, c *recoveryCase) error {
	c.connected = time.Now()
	r.Sim.Connect(r.Blocked)
	return r.Tracker.Wait(ctx, r.Timeout, func(get func(string) *localplane.WorkState) bool {
		c.gone, c.created = time.Time{}, time.Time{}
		for _, ev := range get(c.k1).Events {
			switch {
			case ev.Type == watch.Deleted && ev.UID == c.oldUID:
				c.gone = ev.At
			case ev.Type == watch.Added && ev.UID != c.oldUID && !c.gone.IsZero():
				if ev.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] == c.secondID {
					c.created = ev.At
				}
			}
		}
		return !c.created.IsZero()
	})
}

// deleteBinding deletes rb and waits until it is gone from the API.
func (r *Sampler) deleteBinding(ctx context.Context, rb *workv1alpha2.ResourceBinding) error {
	if err := r.Plane.Client.Delete(ctx, rb); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the binding: %w", err)
	}
	key := client.ObjectKeyFromObject(rb)
	return wait.Poll(ctx, 20*time.Millisecond, r.StepTimeout, "waiting for binding "+key.String()+" to go",
		func(ctx context.Context) (bool, error) {
			err := r.Plane.Client.Get(ctx, key, &workv1alpha2.ResourceBinding{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, client.IgnoreNotFound(err)
		})
}
