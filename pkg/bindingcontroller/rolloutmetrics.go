// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
)

var (
	rolloutsByPhase = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "binding_controller_rollouts",
		Help: "Bindings under a staged rollout, by phase (Progressing, Paused, WaitingForApproval, Halted, RolledBack, Complete).",
	}, []string{"phase"})

	rolloutStageDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "binding_controller_rollout_stage_duration_seconds",
		Help:    "Time from a rollout stage's start until it is done: every cluster of it healthy on the revision, and soaked for minSuccessTime.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 16),
	})
)

var rolloutPhases = []rolloutsv1alpha1.RolloutPhase{
	rolloutsv1alpha1.PhaseProgressing, rolloutsv1alpha1.PhasePaused, rolloutsv1alpha1.PhaseWaitingForApproval,
	rolloutsv1alpha1.PhaseHalted, rolloutsv1alpha1.PhaseRolledBack, rolloutsv1alpha1.PhaseComplete,
}

func init() {
	metrics.Registry.MustRegister(rolloutsByPhase, rolloutStageDuration)
	// Every phase has its series from the start: a dashboard shows 0, not "no data".
	for _, p := range rolloutPhases {
		rolloutsByPhase.WithLabelValues(string(p))
	}
}

// rolloutTracker remembers each binding's rollout phase, for the gauge.
type rolloutTracker struct {
	mu    sync.Mutex
	phase map[string]rolloutsv1alpha1.RolloutPhase
}

func newRolloutTracker() *rolloutTracker {
	return &rolloutTracker{phase: map[string]rolloutsv1alpha1.RolloutPhase{}}
}

// record sets binding's phase; "" forgets the binding (its rollout, or itself, is gone).
func (t *rolloutTracker) record(binding string, phase rolloutsv1alpha1.RolloutPhase) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old, had := t.phase[binding]
	if had && old == phase {
		return
	}
	if had {
		rolloutsByPhase.WithLabelValues(string(old)).Dec()
		delete(t.phase, binding)
	}
	if phase != "" {
		t.phase[binding] = phase
		rolloutsByPhase.WithLabelValues(string(phase)).Inc()
	}
}

// observeStages records the stages a step finished: the one in progress before, when the
// rollout moved to another stage or completed it.
func observeStages(before, after rolloutsv1alpha1.BindingRolloutStatus, now time.Time) {
	if before.StageStarted == nil || before.Revision != after.Revision || before.Phase == rolloutsv1alpha1.PhaseComplete {
		return
	}
	if after.Stage != before.Stage || after.Phase == rolloutsv1alpha1.PhaseComplete {
		rolloutStageDuration.Observe(now.Sub(before.StageStarted.Time).Seconds())
	}
}
