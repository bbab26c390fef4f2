// SPDX-License-Identifier: Apache-2.0

package rollout

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/report"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

// recorder times what the controller's metrics do not: when each template was changed,
// when the simulated execution side first reported each cluster Healthy on the template's
// generation, and when each binding's rollout was first seen Complete on its revision.
type recorder struct {
	mu        sync.Mutex
	changedAt map[string]time.Time // binding → its template's last change
	healthy   map[string]mark      // cluster/template → the generation reported Healthy
	complete  map[string]mark      // binding → the revision its rollout completed on
}

// mark is a value and when it was first seen.
type mark struct {
	value string
	at    time.Time
}

func newRecorder() *recorder {
	return &recorder{changedAt: map[string]time.Time{}, healthy: map[string]mark{}, complete: map[string]mark{}}
}

// see records key's value in m, with the time, unless it is there already.
func (r *recorder) see(m map[string]mark, key, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := m[key]; !ok || old.value != value {
		m[key] = mark{value: value, at: time.Now()}
	}
}

// health is the simulator's HealthFunc: every cluster runs every revision healthily. The
// simulator calls it just before it writes a Work's status, so its first call on a
// generation is when the cluster was reported Healthy on it.
func (r *recorder) health(cluster string, manifest *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	r.see(r.healthy, cluster+"/"+manifest.GetName(), manifest.GetAnnotations()[workv1alpha1.ResourceTemplateGenerationAnnotation])
	return workv1alpha1.ResourceHealthy
}

// watchRollouts records, until ctx ends, the revision each binding's rollout completes on.
func (r *recorder) watchRollouts(ctx context.Context, c client.WithWatch) {
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, &rolloutsv1alpha1.BindingRolloutList{}, client.InNamespace(namespace))
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		for ev := range w.ResultChan() {
			if br, ok := ev.Object.(*rolloutsv1alpha1.BindingRollout); ok && br.Status.Phase == rolloutsv1alpha1.PhaseComplete {
				r.see(r.complete, br.Name, br.Status.Revision)
			}
		}
		w.Stop()
	}
}

// completedSince counts the bindings whose rollout completed on a revision after t.
func (r *recorder) completedSince(t time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.complete {
		if m.at.After(t) {
			n++
		}
	}
	return n
}

// span is one stage of one binding's rollout. It starts when the stage before it is done
// (the first stage: when the template changed); written is when the last of its
// clusters' Works carried the new revision, healthy when the last of them was reported
// Healthy on it, and done when the controller acted on the stage being over: the next
// stage's first Work written or, after the last stage, the rollout seen Complete.
type span struct{ start, written, healthy, done time.Time }

// spans times a binding's stages from each stage's Work writes and Healthy reports; nil
// when a time is missing.
func spans(changed, complete time.Time, written, healthy [][]time.Time) []span {
	if slices.ContainsFunc(append(slices.Concat(written...), slices.Concat(healthy...)...), time.Time.IsZero) || complete.IsZero() {
		return nil
	}
	out := make([]span, len(written))
	for i := range written {
		out[i] = span{start: changed, written: slices.MaxFunc(written[i], time.Time.Compare),
			healthy: slices.MaxFunc(healthy[i], time.Time.Compare), done: complete}
		if i > 0 {
			out[i].start = out[i-1].done
		}
		if i+1 < len(written) {
			out[i].done = slices.MinFunc(written[i+1], time.Time.Compare)
		}
	}
	return out
}

// shares splits a stage's time less the soak, in seconds: the controller's own share
// (writing the stage's Works, then acting once the last cluster has been Healthy for the
// soak: advance), and the execution side's (the Works written until the last is Healthy).
func (s span) shares(soak time.Duration) [4]float64 {
	advance := (s.done.Sub(s.healthy) - soak).Seconds()
	return [4]float64{(s.done.Sub(s.start) - soak).Seconds(), s.written.Sub(s.start).Seconds() + advance, advance, s.healthy.Sub(s.written).Seconds()}
}

// stageTimes is one stage over the bindings timed: p50 and p99 of each of its shares.
type stageTimes struct {
	Stage    string           `json:"stage"`
	Clusters int              `json:"clusters"`
	Timed    int              `json:"timedBindings"`
	Seconds  [4][2]report.Num `json:"secondsP50P99"` // stage−soak, controller, advance, execution
}

// stageTimes times every stage of every binding's rollout.
func (b *bench) stageTimes() []stageTimes {
	shares := make([][4][]float64, len(b.stages))
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	for _, rb := range b.binds {
		template := rb.Spec.Resource.Name
		written, healthy := make([][]time.Time, len(b.stages)), make([][]time.Time, len(b.stages))
		for i, stage := range b.stages {
			for _, c := range stage {
				written[i] = append(written[i], b.tracker.Get(workKey(c, template)).GenerationAt)
				healthy[i] = append(healthy[i], b.rec.healthy[c+"/"+template].at)
			}
		}
		for i, s := range spans(b.rec.changedAt[rb.Name], b.rec.complete[rb.Name].at, written, healthy) {
			for j, v := range s.shares(b.soak) {
				shares[i][j] = append(shares[i][j], v)
			}
		}
	}
	out := make([]stageTimes, len(b.stages))
	for i, sh := range shares {
		out[i] = stageTimes{Stage: fmt.Sprintf("stage-%d", i+1), Clusters: len(b.stages[i]), Timed: len(sh[0])}
		for j, xs := range sh {
			out[i].Seconds[j] = [2]report.Num{report.Num(report.Percentile(xs, 50)), report.Num(report.Percentile(xs, 99))}
		}
	}
	return out
}
