// SPDX-License-Identifier: Apache-2.0

package recovery

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

var members = []string{"member1", "member2"}

// recoveryCase is one sample: the template's two Works (k1 on member1, the blocked one),
// the binding's permanent IDs before and after it is recreated, and what was seen when.
type recoveryCase struct {
	k1, k2                   string
	firstID, secondID        string
	oldUID                   types.UID
	binding                  *workv1alpha2.ResourceBinding
	connected, gone, created time.Time
}

// sample runs one recovery of template ns/name after member1 was blocked for block.
func (r *rig) sample(ctx context.Context, ctl *controller.Controller, ns, name string, block time.Duration) sample {
	out := sample{Template: ns + "/" + name}
	fail := func(err error) sample {
		out.Error = err.Error()
		r.sim.Connect("member1")
		return out
	}
	d := workload.Deployment(ns, name, 2, 0)
	if err := r.plane.Client.Create(ctx, d); err != nil {
		return fail(fmt.Errorf("creating the template: %w", err))
	}
	defer func() { _ = r.plane.Client.Delete(context.WithoutCancel(ctx), d) }()
	work := names.WorkName("Deployment", ns, name)
	c := &recoveryCase{firstID: "pid-" + name + "-a", secondID: "pid-" + name + "-b",
		k1: localplane.WorkKey(names.ExecutionNamespace("member1"), work),
		k2: localplane.WorkKey(names.ExecutionNamespace("member2"), work)}
	if err := r.bindAndBlock(ctx, c, workload.Binding(d, name, c.firstID, members)); err != nil {
		return fail(err)
	}
	c.binding = workload.Binding(d, name, c.secondID, members)
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
	// Clean up: member1 is connected, so every Work goes.
	if err := r.deleteBinding(ctx, c.binding); err != nil {
		out.Error = err.Error()
		return out
	}
	if err := r.tracker.Wait(ctx, r.o.stepTimeout, func(get func(string) *localplane.WorkState) bool {
		return get(c.k1).UID == "" && get(c.k2).UID == ""
	}); err != nil {
		out.Error = fmt.Sprintf("cleaning up: waiting for the Works to go: %v", err)
	}
	if err := ctl.Alive(); err != nil {
		out.Error = err.Error()
	}
	return out
}

func liveWith(st *localplane.WorkState, id string) bool {
	return st.UID != "" && !st.Terminating && st.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] == id
}

// bindAndBlock binds the template to both members, waits for both Works, then
// disconnects member1 and deletes the binding: member2's Work goes, member1's stays
// terminating.
func (r *rig) bindAndBlock(ctx context.Context, c *recoveryCase, rb *workv1alpha2.ResourceBinding) error {
	if err := r.plane.Client.Create(ctx, rb); err != nil {
		return fmt.Errorf("creating the binding: %w", err)
	}
	if err := r.tracker.Wait(ctx, r.o.stepTimeout, func(get func(string) *localplane.WorkState) bool {
		return liveWith(get(c.k1), c.firstID) && liveWith(get(c.k2), c.firstID)
	}); err != nil {
		return fmt.Errorf("waiting for both first Works: %w", err)
	}
	c.oldUID = r.tracker.Get(c.k1).UID
	r.sim.Disconnect("member1")
	if err := r.deleteBinding(ctx, rb); err != nil {
		return err
	}
	if err := r.tracker.Wait(ctx, r.o.stepTimeout, func(get func(string) *localplane.WorkState) bool {
		st1 := get(c.k1)
		return get(c.k2).UID == "" && st1.UID == c.oldUID && st1.Terminating
	}); err != nil {
		return fmt.Errorf("waiting for member2's Work to go and member1's to stay terminating: %w", err)
	}
	return nil
}

// recreate creates the binding again with a new permanent ID, waits for member2's new
// Work and then for the block, member1's old Work still there.
func (r *rig) recreate(ctx context.Context, c *recoveryCase, block time.Duration) error {
	if err := r.plane.Client.Create(ctx, c.binding); err != nil {
		return fmt.Errorf("recreating the binding: %w", err)
	}
	if err := r.tracker.Wait(ctx, r.o.stepTimeout, func(get func(string) *localplane.WorkState) bool {
		return liveWith(get(c.k2), c.secondID)
	}); err != nil {
		return fmt.Errorf("waiting for member2's new Work: %w", err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(block):
	}
	if st := r.tracker.Get(c.k1); st.UID != c.oldUID || !st.Terminating {
		return fmt.Errorf("member1's old Work changed before member1 was connected: uid %s terminating=%v", st.UID, st.Terminating)
	}
	return nil
}

// reconnect connects member1 and waits until its old Work is gone and its new one exists,
// as the watch saw them.
func (r *rig) reconnect(ctx context.Context, c *recoveryCase) error {
	c.connected = time.Now()
	r.sim.Connect("member1")
	return r.tracker.Wait(ctx, r.timeout, func(get func(string) *localplane.WorkState) bool {
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
func (r *rig) deleteBinding(ctx context.Context, rb *workv1alpha2.ResourceBinding) error {
	if err := r.plane.Client.Delete(ctx, rb); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the binding: %w", err)
	}
	key := client.ObjectKeyFromObject(rb)
	return wait.Poll(ctx, 20*time.Millisecond, r.o.stepTimeout, "waiting for binding "+key.String()+" to go",
		func(ctx context.Context) (bool, error) {
			err := r.plane.Client.Get(ctx, key, &workv1alpha2.ResourceBinding{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, client.IgnoreNotFound(err)
		})
}
