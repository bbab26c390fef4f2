// SPDX-License-Identifier: Apache-2.0

package scenario

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
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// recoveries are samples of a blocked cluster's recovery after the same block: how
// long after its old Work is finally gone the cluster gets its new Work, the case the
// binding controller exists for. Timed-out and failed samples are left out of the
// median and the maximum, and keep their error.
type recoveries struct {
	Block   string     `json:"block"`
	Samples []sample   `json:"samples"`
	P50Ms   report.Num `json:"p50Ms"`
	MaxMs   report.Num `json:"maxMs"`
}

// sample is one recovery: connect → the old Work gone from the API (the simulator's
// polling), and old Work gone → the blocked cluster's new Work, both as the watch saw them.
type sample struct {
	Template  string  `json:"template"`
	ReleaseMs float64 `json:"releaseMs"`
	LatencyMs float64 `json:"latencyMs"`
	TimedOut  bool    `json:"timedOut,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// recover takes n samples with ctl of templates named prefix-<i> after a block each, on
// the two members outside the load (the execution simulator lists only theirs: the
// load's Works are never deleted, and listing them every tick would load the plane).
func (e *env) recover(ctx context.Context, ctl *controller.Controller, block time.Duration, n int, prefix string) (*recoveries, error) {
	r := &sampler{env: e, blocked: workload.Member(e.load.Clusters), other: workload.Member(e.load.Clusters + 1),
		// A Karmada-style backoff retries within about the block duration.
		timeout: min(4*block+2*time.Minute, 20*time.Minute), stepTimeout: 2 * time.Minute}
	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	r.sim = executionsim.New(e.plane.Client, 50*time.Millisecond).Only(r.blocked, r.other)
	go r.sim.Run(simCtx)
	out := &recoveries{Block: block.String()}
	var latencies []float64
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		smp := sample{Template: recoveryNamespace + "/" + name}
		err := r.steps(ctx, &smp, recoveryNamespace, name, block)
		r.sim.Connect(r.blocked)
		if err == nil {
			err = ctl.Alive() // it must have outlived the sample
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			smp.Error = err.Error()
		}
		out.Samples = append(out.Samples, smp)
		if smp.Error == "" && !smp.TimedOut {
			latencies = append(latencies, smp.LatencyMs)
		}
		session.Logf("%s recovery %s #%d: new Work %.1fms after the old one was gone (timed out: %v) %s", ctl.Spec.Label, block, i+1, smp.LatencyMs, smp.TimedOut, smp.Error)
	}
	out.P50Ms, out.MaxMs = report.Num(report.Median(latencies)), report.Num(report.Percentile(latencies, 100))
	return out, nil
}

// sampler takes recovery samples on env, whose deleted Works sim releases for the
// clusters it has connected: blocked is kept disconnected, other is the binding's
// second cluster. timeout caps the wait for the blocked cluster's new Work, stepTimeout
// every other.
type sampler struct {
	*env
	sim                  *executionsim.Simulator
	blocked, other       string
	timeout, stepTimeout time.Duration
}

// steps: the template bound to both clusters, both Works; the blocked cluster
// disconnected and the binding deleted (the other's Work goes, the blocked one's stays
// terminating); the binding recreated with a new permanent ID, the other's new Work;
// after block, the blocked cluster connected: its old Work goes, its new Work comes.
func (r *sampler) steps(ctx context.Context, out *sample, ns, name string, block time.Duration) error {
	d := workload.Deployment(ns, name, 2, 0)
	first, err := r.bind(ctx, d, "pid-"+name+"-a", []string{r.blocked, r.other})
	if err != nil {
		return err
	}
	defer func() { _ = r.plane.Client.Delete(context.WithoutCancel(ctx), d) }()
	second := first.DeepCopy()
	second.Labels[idLabel] = "pid-" + name + "-b"
	k1, k2 := workKeys(first)[0], workKeys(first)[1]
	live := func(st *localplane.WorkState, rb *workv1alpha2.ResourceBinding) bool {
		return st.UID != "" && !st.Terminating && st.Labels[idLabel] == rb.Labels[idLabel]
	}
	var oldUID types.UID
	for _, step := range []func() error{
		func() error { return r.plane.Client.Create(ctx, first) },
		r.waitFor(ctx, "both first Works", r.stepTimeout, func(get getter) bool { return live(get(k1), first) && live(get(k2), first) }),
		func() error {
			oldUID = r.tracker.Get(k1).UID
			r.sim.Disconnect(r.blocked)
			return r.deleteBinding(ctx, first)
		},
		r.waitFor(ctx, r.other+"'s Work to go and "+r.blocked+"'s to stay terminating", r.stepTimeout, func(get getter) bool {
			return get(k2).UID == "" && get(k1).UID == oldUID && get(k1).Terminating
		}),
		func() error { return r.plane.Client.Create(ctx, second) },
		r.waitFor(ctx, r.other+"'s new Work", r.stepTimeout, func(get getter) bool { return live(get(k2), second) }),
		func() error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(block):
			}
			if st := r.tracker.Get(k1); st.UID != oldUID || !st.Terminating {
				return fmt.Errorf("%s's old Work changed before it was connected: uid %s terminating=%v", r.blocked, st.UID, st.Terminating)
			}
			return nil
		},
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return r.reconnect(ctx, out, k1, k2, oldUID, second)
}

// reconnect connects the blocked cluster and times its new Work from its old Work gone,
// then deletes the binding: the blocked cluster is connected, so every Work goes.
func (r *sampler) reconnect(ctx context.Context, out *sample, k1, k2 string, oldUID types.UID, rb *workv1alpha2.ResourceBinding) error {
	connected := time.Now()
	r.sim.Connect(r.blocked)
	var gone, created time.Time
	err := r.waitFor(ctx, r.blocked+"'s new Work", r.timeout, func(get getter) bool {
		gone, created = time.Time{}, time.Time{}
		for _, ev := range get(k1).Events {
			switch {
			case ev.Type == watch.Deleted && ev.UID == oldUID:
				gone = ev.At
			case ev.Type == watch.Added && ev.UID != oldUID && !gone.IsZero() && ev.Labels[idLabel] == rb.Labels[idLabel]:
				created = ev.At
			}
		}
		return !created.IsZero()
	})()
	switch {
	case errors.Is(err, wait.ErrTimeout):
		out.TimedOut = true
	case err != nil:
		return err
	default:
		out.ReleaseMs, out.LatencyMs = float64(gone.Sub(connected))/1e6, float64(created.Sub(gone))/1e6
	}
	if err := r.deleteBinding(ctx, rb); err != nil {
		return err
	}
	return r.waitFor(ctx, "the Works to go", r.stepTimeout, func(get getter) bool { return get(k1).UID == "" && get(k2).UID == "" })()
}

const idLabel = workv1alpha2.ResourceBindingPermanentIDLabel

type getter = func(string) *localplane.WorkState

// waitFor is a step that waits until cond holds of the Works the tracker saw.
func (r *sampler) waitFor(ctx context.Context, what string, timeout time.Duration, cond func(get getter) bool) func() error {
	return func() error {
		if err := r.tracker.Wait(ctx, timeout, cond); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		return nil
	}
}

// deleteBinding deletes rb and waits until it is gone from the API.
func (r *sampler) deleteBinding(ctx context.Context, rb *workv1alpha2.ResourceBinding) error {
	if err := r.plane.Client.Delete(ctx, rb); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the binding: %w", err)
	}
	key := client.ObjectKeyFromObject(rb)
	return wait.Poll(ctx, 20*time.Millisecond, r.stepTimeout, "waiting for binding "+key.String()+" to go", func(ctx context.Context) (bool, error) {
		err := r.plane.Client.Get(ctx, key, &workv1alpha2.ResourceBinding{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}
