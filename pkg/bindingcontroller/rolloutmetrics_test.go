// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
)

func TestTheRolloutGaugeCountsEachBindingOnce(t *testing.T) {
	gauge := func(p rolloutsv1alpha1.RolloutPhase) float64 {
		return testutil.ToFloat64(rolloutsByPhase.WithLabelValues(string(p)))
	}
	progressing, complete := gauge(rolloutsv1alpha1.PhaseProgressing), gauge(rolloutsv1alpha1.PhaseComplete)
	tr := newRolloutTracker()
	tr.record("ns/a", rolloutsv1alpha1.PhaseProgressing)
	tr.record("ns/a", rolloutsv1alpha1.PhaseProgressing)
	tr.record("ns/b", rolloutsv1alpha1.PhaseProgressing)
	if got := gauge(rolloutsv1alpha1.PhaseProgressing) - progressing; got != 2 {
		t.Errorf("Progressing rose by %v, want 2", got)
	}
	tr.record("ns/a", rolloutsv1alpha1.PhaseComplete)
	tr.record("ns/b", "")
	if got := gauge(rolloutsv1alpha1.PhaseProgressing) - progressing; got != 0 {
		t.Errorf("Progressing is %v above where it began, want 0", got)
	}
	if got := gauge(rolloutsv1alpha1.PhaseComplete) - complete; got != 1 {
		t.Errorf("Complete rose by %v, want 1", got)
	}
}

func TestAStageIsObservedOnceWhenItIsDone(t *testing.T) {
	samples := func() float64 {
		m := &dto.Metric{}
		if err := rolloutStageDuration.Write(m); err != nil {
			t.Fatal(err)
		}
		return float64(m.GetHistogram().GetSampleCount())
	}
	start := metav1.NewTime(time.Now().Add(-time.Minute))
	canary := rolloutsv1alpha1.BindingRolloutStatus{Revision: "r2", Phase: rolloutsv1alpha1.PhaseProgressing, Stage: "canary", StageStarted: &start}
	rest := rolloutsv1alpha1.BindingRolloutStatus{Revision: "r2", Phase: rolloutsv1alpha1.PhaseProgressing, Stage: "rest", StageStarted: &start}
	done := rest
	done.Phase = rolloutsv1alpha1.PhaseComplete
	for _, tc := range []struct {
		name          string
		before, after rolloutsv1alpha1.BindingRolloutStatus
		want          float64
	}{
		{"the stage goes on", canary, canary, 0},
		{"the next stage starts", canary, rest, 1},
		{"the last stage completes the rollout", rest, done, 1},
		{"a complete rollout stays complete", done, done, 0},
		{"a new revision: not a stage done", canary, rolloutsv1alpha1.BindingRolloutStatus{Revision: "r3", Stage: "canary"}, 0},
	} {
		before := samples()
		observeStages(tc.before, tc.after, time.Now())
		if got := samples() - before; got != tc.want {
			t.Errorf("%s: %v observations, want %v", tc.name, got, tc.want)
		}
	}
}
