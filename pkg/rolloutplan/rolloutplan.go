// SPDX-License-Identifier: Apache-2.0

// Package rolloutplan is a staged rollout's decisions, as a pure function: from the
// rollout's recorded status, the template's current revision, the policy's stages, the
// health of each cluster and the binding's annotations, Step gives the new status, the
// revision each cluster's Work is to carry, and the events to record. Everything it
// needs is in the API server (the rollout's status is its only memory), so a restart or
// a failover resumes where the last Step left off.
//
// The rules:
//   - A binding seen for the first time under a policy, or a cluster joining a complete
//     rollout, runs the current revision at once: there is nothing to roll from. A
//     cluster joining mid-rollout runs it once its stage is done; until then, and in a
//     halted rollout, it runs the revision the rollout started from.
//   - A new revision starts a rollout at the first stage; one during a rollout
//     supersedes it, and the clusters it had not reached keep what they run.
//   - A stage updates at most maxConcurrency of its clusters at once; a stage with
//     requireApproval waits until the approve annotation names it; a stage is done when
//     every cluster of it is healthy on the revision and has stayed so for
//     minSuccessTime (the soak). Stages are taken in order; a cluster is never updated
//     before its stage.
//   - A cluster unhealthy on the revision, or not healthy within progressDeadline, has
//     failed. Past maxFailures the rollout halts: no cluster is updated any more, and
//     with rollbackOnFailure every cluster the rollout updated gets back the revision it
//     had before.
//   - Paused (the annotation) freezes it: no cluster is updated, no stage advances, no
//     rollback; health is still recorded.
package rolloutplan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/rollouthealth"
	"github.com/binding-controller/binding-controller/pkg/rolloutpolicy"
)

// Input is everything a Step decides from.
type Input struct {
	// Status is the rollout's status as last recorded (zero for a binding new to the policy).
	Status rolloutsv1alpha1.BindingRolloutStatus
	// Revision is the template's current revision.
	Revision string
	// Stages are the binding's clusters in the policy's stages (rolloutpolicy.Stages).
	Stages []rolloutpolicy.Stage
	// ProgressDeadline, MaxFailures and RollbackOnFailure are the policy's, defaulted.
	ProgressDeadline  time.Duration
	MaxFailures       int
	RollbackOnFailure bool
	// Health is each cluster's health on the revision its Work carries now (absent: pending).
	Health map[string]rollouthealth.Judgement
	// Paused and Approved come from the binding's annotations.
	Paused   bool
	Approved string
	Now      time.Time
}

// Event is an event to record on the binding.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// Event reasons.
const (
	ReasonRolloutStarted     = "RolloutStarted"
	ReasonStageStarted       = "RolloutStageStarted"
	ReasonWaitingForApproval = "RolloutWaitingForApproval"
	ReasonClusterFailed      = "RolloutClusterFailed"
	ReasonRolloutHalted      = "RolloutHalted"
	ReasonRolloutRolledBack  = "RolloutRolledBack"
	ReasonRolloutComplete    = "RolloutComplete"
	ReasonRolloutSuperseded  = "RolloutSuperseded"
)

// defaultProgressDeadline is the policy's default: how long a cluster has to become
// healthy on a new revision.
const defaultProgressDeadline = 10 * time.Minute

// The condition a halted rollout carries, naming each failed cluster and why.
const (
	conditionHalted            = "Halted"
	conditionReasonMaxFailures = "MaxFailuresExceeded"
)

// Output is what a Step decided.
type Output struct {
	Status rolloutsv1alpha1.BindingRolloutStatus
	// Revisions is the revision each cluster's Work is to carry.
	Revisions map[string]string
	Events    []Event
	// NextCheck is when something timed falls due (a soak ends, a deadline passes); zero
	// for nothing timed. Health changes are not timed: they come from the Works.
	NextCheck time.Duration
}

// step holds one Step's working state.
type step struct {
	in       Input
	out      Output
	clusters map[string]*rolloutsv1alpha1.ClusterRolloutStatus
	now      metav1.Time
}

// stamp is now as the status can keep it. metav1.Time is stored in whole seconds, and a
// time read back earlier than it happened would end a soak or a progress deadline up to
// a second early; rounded up, they end at most a second late, never early.
func stamp(now time.Time) time.Time {
	if t := now.Truncate(time.Second); !t.Equal(now) {
		return t.Add(time.Second)
	}
	return now
}

// Step decides the rollout's next state.
func Step(in Input) Output {
	if in.ProgressDeadline <= 0 {
		in.ProgressDeadline = defaultProgressDeadline
	}
	s := &step{in: in, now: metav1.NewTime(stamp(in.Now)), clusters: map[string]*rolloutsv1alpha1.ClusterRolloutStatus{}}
	s.out.Status = *in.Status.DeepCopy()
	s.out.Revisions = map[string]string{}
	s.syncClusters()
	switch {
	case s.out.Status.Revision == "":
		s.adopt()
	case s.out.Status.Revision != in.Revision:
		s.start()
		s.advance()
	case s.out.Status.Phase == rolloutsv1alpha1.PhaseHalted || s.out.Status.Phase == rolloutsv1alpha1.PhaseRolledBack ||
		s.out.Status.Phase == rolloutsv1alpha1.PhaseComplete:
		s.judge(false)
	default:
		s.advance()
	}
	s.finish()
	return s.out
}

// HealthUsed tells which clusters' health a Step of in can use, so that a sync reads
// the Works of those alone: in a rollout in progress, a cluster of a stage already done
// that is Healthy or Failed there keeps that state whatever its Work says (judge: a
// lapse after its stage is the workload's, not the rollout's). Every other cluster's
// health may count.
func HealthUsed(in Input) func(cluster string) bool {
	st := in.Status
	all := func(string) bool { return true }
	if st.Revision != in.Revision || st.Phase == rolloutsv1alpha1.PhaseHalted ||
		st.Phase == rolloutsv1alpha1.PhaseRolledBack || st.Phase == rolloutsv1alpha1.PhaseComplete {
		return all
	}
	recorded := map[string]rolloutsv1alpha1.ClusterRolloutState{}
	for _, c := range st.Clusters {
		recorded[c.Name] = c.State
	}
	current := slices.IndexFunc(in.Stages, func(stage rolloutpolicy.Stage) bool { return stage.Name == st.Stage })
	settled := map[string]bool{}
	for _, stage := range in.Stages[:max(current, 0)] {
		for _, name := range stage.Clusters {
			state := recorded[name]
			settled[name] = state == rolloutsv1alpha1.ClusterHealthy || state == rolloutsv1alpha1.ClusterFailed
		}
	}
	return func(cluster string) bool { return !settled[cluster] }
}

// syncClusters lines the recorded clusters up with the binding's: a cluster gone is
// dropped, a new one joins (join), and each records its stage.
func (s *step) syncClusters() {
	recorded := map[string]rolloutsv1alpha1.ClusterRolloutStatus{}
	for _, c := range s.out.Status.Clusters {
		recorded[c.Name] = c
	}
	var clusters []rolloutsv1alpha1.ClusterRolloutStatus
	for i, stage := range s.in.Stages {
		for _, name := range stage.Clusters {
			c, ok := recorded[name]
			if !ok {
				c = s.join(name, i)
			}
			c.Stage = stage.Name
			clusters = append(clusters, c)
		}
	}
	s.out.Status.Clusters = clusters
	for i := range s.out.Status.Clusters {
		c := &s.out.Status.Clusters[i]
		s.clusters[c.Name] = c
	}
}

// join places a cluster the rollout has not seen: on the current revision when the
// rollout is complete or the cluster's stage is done; otherwise on the revision the
// rollout started from, to be updated when its stage comes. A halted rollout gives its
// revision to no further cluster, and a superseded one's never passed this stage.
func (s *step) join(name string, stage int) rolloutsv1alpha1.ClusterRolloutStatus {
	st := s.out.Status
	rolling := st.Phase == rolloutsv1alpha1.PhaseProgressing || st.Phase == rolloutsv1alpha1.PhasePaused ||
		st.Phase == rolloutsv1alpha1.PhaseWaitingForApproval
	current := s.stageIndex(st.Stage)
	if st.PreviousRevision == "" || st.Phase == rolloutsv1alpha1.PhaseComplete || (rolling && current >= 0 && stage < current) {
		return rolloutsv1alpha1.ClusterRolloutStatus{Name: name, Revision: st.Revision, State: rolloutsv1alpha1.ClusterUpdating, Since: &s.now}
	}
	return rolloutsv1alpha1.ClusterRolloutStatus{Name: name, Revision: st.PreviousRevision, State: rolloutsv1alpha1.ClusterPending, Since: &s.now}
}

// stageIndex is the index of the stage named name, -1 when there is none (no stage
// started yet, or the policy no longer has it).
func (s *step) stageIndex(name string) int {
	return slices.IndexFunc(s.in.Stages, func(st rolloutpolicy.Stage) bool { return st.Name == name })
}

// adopt takes a binding new to the policy as it is: its Works already run the current
// template, so there is nothing to roll out.
func (s *step) adopt() {
	st := &s.out.Status
	st.Revision = s.in.Revision
	for _, c := range s.clusters {
		c.Revision = s.in.Revision
		c.State = rolloutsv1alpha1.ClusterUpdating
	}
	st.Phase = rolloutsv1alpha1.PhaseComplete
	s.judge(false)
}

// start begins the rollout of a new revision at the first stage. Each cluster keeps what
// it runs and remembers it as what a rollback gives back.
func (s *step) start() {
	st := &s.out.Status
	if st.Phase == rolloutsv1alpha1.PhaseProgressing || st.Phase == rolloutsv1alpha1.PhasePaused ||
		st.Phase == rolloutsv1alpha1.PhaseWaitingForApproval {
		s.event(false, ReasonRolloutSuperseded, "revision %s supersedes the rollout of %s", s.in.Revision, st.Revision)
	}
	// The rollout starts from the last revision every cluster ran: a rollout before it
	// that did not finish (superseded, halted, rolled back) leaves that one in place.
	if st.Phase == rolloutsv1alpha1.PhaseComplete || st.PreviousRevision == "" {
		st.PreviousRevision = st.Revision
	}
	st.Revision = s.in.Revision
	st.Phase = rolloutsv1alpha1.PhaseProgressing
	st.Stage, st.StageStarted, st.SoakStarted = "", nil, nil
	meta.RemoveStatusCondition(&st.Conditions, conditionHalted)
	for _, c := range s.clusters {
		c.PreviousRevision = c.Revision
		c.Message = ""
		if c.Revision == s.in.Revision {
			c.State = rolloutsv1alpha1.ClusterUpdating
		} else {
			c.State = rolloutsv1alpha1.ClusterPending
		}
		c.Since = &s.now
	}
	s.event(false, ReasonRolloutStarted, "rolling out revision %s (from %s) in %d stages", s.in.Revision, st.PreviousRevision, len(s.in.Stages))
}

// judge records each updated cluster's health on the revision it runs. Only a rollout
// in progress (failing) fails a cluster, and only one whose stage is not done yet: once
// its stage is done, a lapse is the workload's, not the rollout's.
func (s *step) judge(failing bool) {
	current := s.stageIndex(s.out.Status.Stage)
	for i, stage := range s.in.Stages {
		for _, name := range stage.Clusters {
			s.judgeCluster(s.clusters[name], failing && i >= current)
		}
	}
}

func (s *step) judgeCluster(c *rolloutsv1alpha1.ClusterRolloutStatus, failing bool) {
	if c.State != rolloutsv1alpha1.ClusterUpdating && c.State != rolloutsv1alpha1.ClusterHealthy {
		return
	}
	j, ok := s.in.Health[c.Name]
	switch {
	case ok && j.Verdict == rollouthealth.Healthy:
		s.set(c, rolloutsv1alpha1.ClusterHealthy, "")
	case !failing:
	case ok && j.Verdict == rollouthealth.Unhealthy:
		// During its stage's soak too: the soak is there to catch this.
		s.fail(c, j.Reason)
	case c.State == rolloutsv1alpha1.ClusterHealthy:
		// Healthy on this revision and not unhealthy since: a moment of unknown health
		// (a status being rewritten) does not undo it.
	case s.in.Now.Sub(c.Since.Time) >= s.in.ProgressDeadline:
		reason := "not healthy within the progress deadline " + s.in.ProgressDeadline.String()
		if ok && j.Reason != "" {
			reason += ": " + j.Reason
		}
		s.fail(c, reason)
	default:
		s.due(c.Since.Add(s.in.ProgressDeadline))
	}
}

// advance moves the rollout on as far as health, approvals and soaks allow.
func (s *step) advance() {
	s.judge(true)
	st := &s.out.Status
	was := st.Phase
	if s.in.Paused {
		st.Phase = rolloutsv1alpha1.PhasePaused
		return
	}
	if s.failures() > s.in.MaxFailures {
		s.halt()
		return
	}
	st.Phase = rolloutsv1alpha1.PhaseProgressing
	for i := max(0, s.stageIndex(st.Stage)); i < len(s.in.Stages); i++ {
		stage := s.in.Stages[i]
		if st.Stage != stage.Name {
			if stage.RequireApproval && s.in.Approved != stage.Name {
				if was != rolloutsv1alpha1.PhaseWaitingForApproval {
					s.event(false, ReasonWaitingForApproval, "stage %s waits for approval: kubectl annotate the binding %s=%s",
						stage.Name, rolloutsv1alpha1.ApproveAnnotation, stage.Name)
				}
				st.Phase = rolloutsv1alpha1.PhaseWaitingForApproval
				return
			}
			st.Stage, st.StageStarted, st.SoakStarted = stage.Name, &s.now, nil
			s.event(false, ReasonStageStarted, "stage %s started: %s", stage.Name, strings.Join(stage.Clusters, ", "))
		}
		if !s.runStage(stage) {
			return
		}
	}
	st.Phase = rolloutsv1alpha1.PhaseComplete
	s.event(false, ReasonRolloutComplete, "revision %s runs in every cluster", st.Revision)
}

// runStage updates the stage's clusters as its concurrency allows and tells whether the
// stage is done.
func (s *step) runStage(stage rolloutpolicy.Stage) bool {
	updating, healthy := 0, 0
	for _, name := range stage.Clusters {
		switch s.clusters[name].State {
		case rolloutsv1alpha1.ClusterUpdating:
			updating++
		case rolloutsv1alpha1.ClusterHealthy, rolloutsv1alpha1.ClusterFailed:
			// A failed cluster within maxFailures does not hold the stage.
			healthy++
		}
	}
	for _, name := range stage.Clusters {
		c := s.clusters[name]
		if c.State != rolloutsv1alpha1.ClusterPending || updating >= stage.MaxConcurrency {
			continue
		}
		c.Revision = s.out.Status.Revision
		s.set(c, rolloutsv1alpha1.ClusterUpdating, "")
		s.due(s.in.Now.Add(s.in.ProgressDeadline))
		updating++
	}
	if healthy < len(stage.Clusters) {
		return false
	}
	st := &s.out.Status
	if st.SoakStarted == nil {
		st.SoakStarted = &s.now
	}
	if soakEnds := st.SoakStarted.Add(stage.MinSuccessTime.Duration); stage.MinSuccessTime.Duration > 0 && s.in.Now.Before(soakEnds) {
		s.due(soakEnds)
		return false
	}
	return true
}

func (s *step) failures() int {
	n := 0
	for _, c := range s.clusters {
		if c.State == rolloutsv1alpha1.ClusterFailed {
			n++
		}
	}
	return n
}

// halt stops the rollout, and rolls the updated clusters back when the policy says so.
func (s *step) halt() {
	st := &s.out.Status
	var failed []string
	for _, c := range st.Clusters {
		if c.State == rolloutsv1alpha1.ClusterFailed {
			failed = append(failed, c.Name+": "+c.Message)
		}
	}
	message := fmt.Sprintf("%d clusters failed, %d tolerated: %s", len(failed), s.in.MaxFailures, strings.Join(failed, "; "))
	st.Phase = rolloutsv1alpha1.PhaseHalted
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: conditionHalted, Status: metav1.ConditionTrue,
		Reason: conditionReasonMaxFailures, Message: message, LastTransitionTime: s.now})
	s.event(true, ReasonRolloutHalted, "rollout of %s halted: %s", st.Revision, message)
	if !s.in.RollbackOnFailure {
		return
	}
	var rolledBack []string
	for i := range st.Clusters {
		c := &st.Clusters[i]
		if c.Revision != st.Revision || c.PreviousRevision == "" || c.PreviousRevision == st.Revision {
			continue
		}
		c.Revision = c.PreviousRevision
		s.set(c, rolloutsv1alpha1.ClusterRolledBack, c.Message)
		rolledBack = append(rolledBack, c.Name)
	}
	st.Phase = rolloutsv1alpha1.PhaseRolledBack
	s.event(true, ReasonRolloutRolledBack, "rolled back to the previous revision: %s", strings.Join(rolledBack, ", "))
}

func (s *step) fail(c *rolloutsv1alpha1.ClusterRolloutStatus, reason string) {
	if c.State == rolloutsv1alpha1.ClusterFailed {
		return
	}
	s.set(c, rolloutsv1alpha1.ClusterFailed, reason)
	s.event(true, ReasonClusterFailed, "cluster %s failed on revision %s: %s", c.Name, c.Revision, reason)
}

func (s *step) set(c *rolloutsv1alpha1.ClusterRolloutStatus, state rolloutsv1alpha1.ClusterRolloutState, message string) {
	if c.State != state {
		c.State, c.Since = state, &s.now
	}
	c.Message = message
}

// due brings NextCheck forward to at.
func (s *step) due(at time.Time) {
	d := at.Sub(s.in.Now)
	if d <= 0 {
		d = time.Millisecond
	}
	if s.out.NextCheck == 0 || d < s.out.NextCheck {
		s.out.NextCheck = d
	}
}

func (s *step) event(warning bool, reason, format string, args ...any) {
	s.out.Events = append(s.out.Events, Event{Warning: warning, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// finish counts the clusters and lists each cluster's revision.
func (s *step) finish() {
	st := &s.out.Status
	st.TotalClusters, st.UpdatedClusters, st.HealthyClusters = int32(len(st.Clusters)), 0, 0
	for _, c := range st.Clusters {
		s.out.Revisions[c.Name] = c.Revision
		if c.Revision == st.Revision {
			st.UpdatedClusters++
			if c.State == rolloutsv1alpha1.ClusterHealthy {
				st.HealthyClusters++
			}
		}
	}
}
