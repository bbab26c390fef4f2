// SPDX-License-Identifier: Apache-2.0

package rolloutplan

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/rollouthealth"
	"github.com/binding-controller/binding-controller/pkg/rolloutpolicy"
)

var t0 = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

// fleet drives Steps the way the controller does: each Step's status is the next one's
// input, and the members report health on the revision their Work carries.
type fleet struct {
	t        *testing.T
	in       Input
	out      Output
	works    map[string]string // cluster → revision its Work carries
	bad      map[string]bool   // revisions that run unhealthy
	silent   map[string]bool   // clusters that never report health
	lapsed   map[string]bool   // clusters that report Unhealthy whatever they run
	events   []Event
	everHeld map[string][]string // cluster → every revision its Work carried, in order
}

func newFleet(t *testing.T, stages ...rolloutpolicy.Stage) *fleet {
	f := &fleet{t: t, works: map[string]string{}, bad: map[string]bool{}, silent: map[string]bool{}, lapsed: map[string]bool{},
		everHeld: map[string][]string{}}
	f.in = Input{Stages: stages, Revision: "r1", Now: t0, ProgressDeadline: 10 * time.Minute}
	f.step()
	return f
}

func stage(name string, maxConcurrency int, soak time.Duration, clusters ...string) rolloutpolicy.Stage {
	if maxConcurrency == 0 {
		maxConcurrency = len(clusters)
	}
	return rolloutpolicy.Stage{Name: name, Clusters: clusters, MaxConcurrency: maxConcurrency, MinSuccessTime: metav1.Duration{Duration: soak}}
}

// step runs one Step on what the members report, and applies its Works.
func (f *fleet) step() {
	f.t.Helper()
	f.in.Health = map[string]rollouthealth.Judgement{}
	for cluster, rev := range f.works {
		switch {
		case f.silent[cluster]:
		case f.bad[rev] || f.lapsed[cluster]:
			f.in.Health[cluster] = rollouthealth.Judgement{Verdict: rollouthealth.Unhealthy, Reason: "Deployment default/web is Unhealthy"}
		default:
			f.in.Health[cluster] = rollouthealth.Judgement{Verdict: rollouthealth.Healthy}
		}
	}
	f.out = Step(f.in)
	f.checkHealthUsed()
	f.in.Status = f.out.Status
	f.events = append(f.events, f.out.Events...)
	for cluster, rev := range f.out.Revisions {
		if f.works[cluster] != rev {
			f.everHeld[cluster] = append(f.everHeld[cluster], rev)
		}
		f.works[cluster] = rev
	}
}

// checkHealthUsed checks that the Step decided the same with the health of the clusters
// HealthUsed names alone, as a sync that reads only their Works gives it: whatever the
// scenario, a Work not read never changes a decision.
func (f *fleet) checkHealthUsed() {
	f.t.Helper()
	used := HealthUsed(f.in)
	in := f.in
	in.Health = map[string]rollouthealth.Judgement{}
	for cluster, j := range f.in.Health {
		if used(cluster) {
			in.Health[cluster] = j
		}
	}
	if got := Step(in); !reflect.DeepEqual(got, f.out) {
		f.t.Fatalf("with the health HealthUsed names alone, Step decided\n%+v\nwith all of it\n%+v", got, f.out)
	}
}

// settle steps until nothing changes, advancing time by NextCheck when something is due.
func (f *fleet) settle() {
	f.t.Helper()
	for range 50 {
		before := f.out.Status.DeepCopy()
		f.step()
		if reflect.DeepEqual(before, &f.out.Status) {
			if f.out.NextCheck == 0 {
				return
			}
			f.in.Now = f.in.Now.Add(f.out.NextCheck)
		}
	}
	f.t.Fatalf("no steady state after 50 steps: %+v", f.out.Status)
}

func (f *fleet) expectWorks(want map[string]string) {
	f.t.Helper()
	if !reflect.DeepEqual(f.works, want) {
		f.t.Errorf("Works carry %v, want %v (phase %s, stage %s)", f.works, want, f.out.Status.Phase, f.out.Status.Stage)
	}
}

func (f *fleet) expectPhase(want rolloutsv1alpha1.RolloutPhase) {
	f.t.Helper()
	if f.out.Status.Phase != want {
		f.t.Errorf("phase %s, want %s (stage %s, clusters %+v)", f.out.Status.Phase, want, f.out.Status.Stage, f.out.Status.Clusters)
	}
}

func (f *fleet) expectEvent(reason, text string) {
	f.t.Helper()
	for _, e := range f.events {
		if e.Reason == reason && strings.Contains(e.Message, text) {
			return
		}
	}
	f.t.Errorf("no %s event with %q among %+v", reason, text, f.events)
}

func canaryThenRest() []rolloutpolicy.Stage {
	return []rolloutpolicy.Stage{stage("canary", 0, 0, "member1"), stage("rest", 1, time.Minute, "member2", "member3")}
}

func TestABindingNewToThePolicyRunsTheCurrentRevision(t *testing.T) {
	f := newFleet(t, canaryThenRest()...)
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhaseComplete)
	f.expectWorks(map[string]string{"member1": "r1", "member2": "r1", "member3": "r1"})
	if s := f.out.Status; s.UpdatedClusters != 3 || s.HealthyClusters != 3 || s.TotalClusters != 3 {
		t.Errorf("counts %d/%d/%d, want 3/3/3", s.UpdatedClusters, s.HealthyClusters, s.TotalClusters)
	}
}

func TestAHealthyCanaryGoesThroughEveryStageInOrder(t *testing.T) {
	f := newFleet(t, canaryThenRest()...)
	f.settle()
	f.in.Revision = "r2"
	f.step()
	f.expectWorks(map[string]string{"member1": "r2", "member2": "r1", "member3": "r1"})
	f.expectEvent(ReasonStageStarted, "stage canary started: member1")

	f.step() // member1 healthy: canary done (no soak); rest starts one at a time
	f.expectWorks(map[string]string{"member1": "r2", "member2": "r2", "member3": "r1"})
	f.step() // member2 healthy: member3 next
	f.expectWorks(map[string]string{"member1": "r2", "member2": "r2", "member3": "r2"})
	f.step() // every cluster healthy: the soak starts
	f.expectPhase(rolloutsv1alpha1.PhaseProgressing)
	if f.out.NextCheck != time.Minute {
		t.Errorf("NextCheck %v during the soak, want 1m", f.out.NextCheck)
	}
	f.in.Now = f.in.Now.Add(time.Minute)
	f.step()
	f.expectPhase(rolloutsv1alpha1.PhaseComplete)
	f.expectEvent(ReasonRolloutComplete, "revision r2 runs in every cluster")
}

// The API server keeps the status's times in whole seconds: a soak or a progress
// deadline read back from it ends late by up to a second, never early.
func TestTimesReadBackFromTheAPIServerNeverEndASoakOrADeadlineEarly(t *testing.T) {
	const soak, deadline = 3 * time.Second, 5 * time.Second
	f := newFleet(t, stage("canary", 0, soak, "member1"), stage("rest", 0, 0, "member2"))
	f.in.ProgressDeadline = deadline
	f.settle()
	roundTrip := func() {
		raw, err := json.Marshal(f.in.Status)
		if err != nil {
			t.Fatal(err)
		}
		f.in.Status = rolloutsv1alpha1.BindingRolloutStatus{}
		if err := json.Unmarshal(raw, &f.in.Status); err != nil {
			t.Fatal(err)
		}
	}
	f.in.Now = t0.Add(time.Hour + 700*time.Millisecond)
	f.in.Revision = "r2"
	f.step()
	roundTrip()
	f.step() // member1 healthy: the soak starts now
	soakStarted := f.in.Now
	roundTrip()
	for f.works["member2"] != "r2" {
		f.in.Now = f.in.Now.Add(100 * time.Millisecond)
		f.step()
		roundTrip()
	}
	if waited := f.in.Now.Sub(soakStarted); waited < soak || waited > soak+time.Second {
		t.Errorf("member2 updated %v after the canary became healthy, want %v to %v", waited, soak, soak+time.Second)
	}

	f.silent["member2"] = true
	updated := f.in.Now
	for f.out.Status.Phase != rolloutsv1alpha1.PhaseHalted {
		f.in.Now = f.in.Now.Add(100 * time.Millisecond)
		f.step()
		roundTrip()
	}
	if waited := f.in.Now.Sub(updated); waited < deadline || waited > deadline+time.Second {
		t.Errorf("member2 failed %v after its update, want %v to %v", waited, deadline, deadline+time.Second)
	}
}

func TestAnUnhealthyCanaryHaltsAndRollsBack(t *testing.T) {
	f := newFleet(t, canaryThenRest()...)
	f.settle()
	f.in.RollbackOnFailure = true
	f.bad["r2"] = true
	f.in.Revision = "r2"
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhaseRolledBack)
	f.expectWorks(map[string]string{"member1": "r1", "member2": "r1", "member3": "r1"})
	for _, c := range []string{"member2", "member3"} {
		if held := f.everHeld[c]; len(held) != 1 {
			t.Errorf("%s's Work carried %v, want r1 only: no other cluster is updated", c, held)
		}
	}
	f.expectEvent(ReasonClusterFailed, "cluster member1 failed on revision r2: Deployment default/web is Unhealthy")
	f.expectEvent(ReasonRolloutHalted, "member1: Deployment default/web is Unhealthy")
	f.expectEvent(ReasonRolloutRolledBack, "member1")
	c := meta.FindStatusCondition(f.out.Status.Conditions, conditionHalted)
	if c == nil || !strings.Contains(c.Message, "member1") {
		t.Errorf("Halted condition %+v, want one naming member1", c)
	}

	// The fixed template is a new revision: it rolls out, and the halt is over.
	f.in.Revision = "r3"
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhaseComplete)
	f.expectWorks(map[string]string{"member1": "r3", "member2": "r3", "member3": "r3"})
	if meta.FindStatusCondition(f.out.Status.Conditions, conditionHalted) != nil {
		t.Error("the Halted condition outlived the halted rollout")
	}
}

func TestWithoutRollbackAHaltedRolloutLeavesTheCanaryOnTheRevision(t *testing.T) {
	f := newFleet(t, canaryThenRest()...)
	f.settle()
	f.bad["r2"] = true
	f.in.Revision = "r2"
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhaseHalted)
	f.expectWorks(map[string]string{"member1": "r2", "member2": "r1", "member3": "r1"})
}

func TestAClusterNotHealthyWithinTheDeadlineHasFailed(t *testing.T) {
	f := newFleet(t, canaryThenRest()...)
	f.settle()
	f.silent["member1"] = true
	f.in.Revision = "r2"
	f.step()
	if f.out.NextCheck != 10*time.Minute {
		t.Errorf("NextCheck %v, want the 10m deadline", f.out.NextCheck)
	}
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhaseHalted)
	f.expectEvent(ReasonClusterFailed, "not healthy within the progress deadline 10m0s")
}

func TestFailuresWithinMaxFailuresDoNotHalt(t *testing.T) {
	f := newFleet(t, canaryThenRest()...)
	f.settle()
	f.in.MaxFailures = 1
	f.silent["member1"] = true
	f.in.Revision = "r2"
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhaseComplete)
	f.expectWorks(map[string]string{"member1": "r2", "member2": "r2", "member3": "r2"})
}

func TestPauseFreezesAndResumeGoesOn(t *testing.T) {
	f := newFleet(t, canaryThenRest()...)
	f.settle()
	f.in.Paused = true
	f.in.Revision = "r2"
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhasePaused)
	f.expectWorks(map[string]string{"member1": "r1", "member2": "r1", "member3": "r1"})
	f.in.Paused = false
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhaseComplete)
	f.expectWorks(map[string]string{"member1": "r2", "member2": "r2", "member3": "r2"})
}

func TestAGatedStageWaitsForItsApproval(t *testing.T) {
	stages := canaryThenRest()
	stages[1].RequireApproval = true
	f := newFleet(t, stages...)
	f.settle()
	f.in.Revision = "r2"
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhaseWaitingForApproval)
	f.expectWorks(map[string]string{"member1": "r2", "member2": "r1", "member3": "r1"})
	f.expectEvent(ReasonWaitingForApproval, "rollouts.binding-controller.io/approve=rest")
	waiting := 0
	for _, e := range f.events {
		if e.Reason == ReasonWaitingForApproval {
			waiting++
		}
	}
	if waiting != 1 {
		t.Errorf("%d %s events while waiting, want 1", waiting, ReasonWaitingForApproval)
	}
	f.in.Approved = "canary" // approving another stage opens nothing
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhaseWaitingForApproval)
	f.in.Approved = "rest"
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhaseComplete)
}

func TestANewerRevisionSupersedesTheRollout(t *testing.T) {
	stages := canaryThenRest()
	stages[1].RequireApproval = true
	f := newFleet(t, stages...)
	f.settle()
	f.in.RollbackOnFailure = true
	f.in.Revision = "r2"
	f.settle() // member1 on r2, waiting for approval of rest
	f.bad["r3"] = true
	f.in.Revision = "r3"
	f.settle()
	f.expectEvent(ReasonRolloutSuperseded, "revision r3 supersedes the rollout of r2")
	// r3 failed on the canary: it goes back to what it ran before r3, the others never moved.
	f.expectPhase(rolloutsv1alpha1.PhaseRolledBack)
	f.expectWorks(map[string]string{"member1": "r2", "member2": "r1", "member3": "r1"})
}

func TestClustersJoiningMidRolloutAreNeverUpdatedEarly(t *testing.T) {
	stages := []rolloutpolicy.Stage{stage("canary", 0, 0, "member1"), stage("rest", 0, 0, "member2")}
	stages[1].RequireApproval = true
	f := newFleet(t, stages...)
	f.settle()
	f.in.Revision = "r2"
	f.settle() // waiting for approval of rest
	f.in.Stages = []rolloutpolicy.Stage{stage("canary", 0, 0, "member1", "member4"), stage("rest", 0, 0, "member2", "member3")}
	f.in.Stages[1].RequireApproval = true
	f.settle()
	f.expectWorks(map[string]string{"member1": "r2", "member4": "r2", "member2": "r1", "member3": "r1"})

	// A cluster gone from the binding is gone from the rollout.
	f.in.Stages = []rolloutpolicy.Stage{stage("canary", 0, 0, "member1"), stage("rest", 0, 0, "member2", "member3")}
	f.in.Stages[1].RequireApproval = true
	f.step()
	if _, ok := f.out.Revisions["member4"]; ok || f.out.Status.TotalClusters != 3 {
		t.Errorf("member4 still in the rollout: %v, total %d", f.out.Revisions, f.out.Status.TotalClusters)
	}
}

// A superseded rollout's revision passed only the stages it reached: a cluster joining a
// later stage gets the revision the rollout started from, as the others there run.
func TestAClusterJoiningASupersededRolloutNeverGetsTheSupersededRevision(t *testing.T) {
	stages := []rolloutpolicy.Stage{stage("canary", 0, 0, "member1"), stage("rest", 0, 0, "member2")}
	stages[1].RequireApproval = true
	f := newFleet(t, stages...)
	f.settle()
	f.in.Revision = "r2"
	f.settle() // member1 on r2, waiting for approval of rest
	f.in.Revision = "r3"
	f.settle() // member1 on r3, waiting for approval of rest again
	f.in.Stages = []rolloutpolicy.Stage{stage("canary", 0, 0, "member1"), stage("rest", 0, 0, "member2", "member3")}
	f.in.Stages[1].RequireApproval = true
	f.settle()
	f.expectWorks(map[string]string{"member1": "r3", "member2": "r1", "member3": "r1"})
	f.expectEvent(ReasonRolloutStarted, "rolling out revision r3 (from r1)")
}

// A halted rollout gives its revision to no further cluster, rolled back or not.
func TestAClusterJoiningAHaltedRolloutNeverGetsItsRevision(t *testing.T) {
	for _, rollback := range []bool{false, true} {
		f := newFleet(t, canaryThenRest()...)
		f.settle()
		f.in.RollbackOnFailure = rollback
		f.bad["r2"] = true
		f.in.Revision = "r2"
		f.settle()
		f.in.Stages = []rolloutpolicy.Stage{stage("canary", 0, 0, "member1"), stage("rest", 1, 0, "member2", "member3", "member4")}
		f.settle()
		if f.works["member4"] != "r1" {
			t.Errorf("rollback %t: member4 joined the halted rollout on %s, want r1", rollback, f.works["member4"])
		}

		// The fixed template rolls out to it in its stage, as to the others.
		f.in.Revision = "r3"
		f.settle()
		f.expectPhase(rolloutsv1alpha1.PhaseComplete)
		f.expectWorks(map[string]string{"member1": "r3", "member2": "r3", "member3": "r3", "member4": "r3"})
	}
}

// Step is level-triggered: run again on its own output with nothing new, it changes
// nothing and records no event, so a restart or a resync mid-stage is harmless.
func TestAStepOnItsOwnOutputChangesNothing(t *testing.T) {
	f := newFleet(t, canaryThenRest()...)
	f.settle()
	f.in.Revision = "r2"
	f.step()
	f.step() // mid-stage: member2 updating
	again := Step(Input{Status: f.out.Status, Revision: "r2", Stages: f.in.Stages, ProgressDeadline: 10 * time.Minute,
		Health: map[string]rollouthealth.Judgement{"member1": {Verdict: rollouthealth.Healthy}}, Now: f.in.Now})
	if !reflect.DeepEqual(again.Status, f.out.Status) || len(again.Events) != 0 {
		t.Errorf("a repeated step changed the status or recorded %+v", again.Events)
	}
	if !reflect.DeepEqual(again.Revisions, f.out.Revisions) {
		t.Errorf("a repeated step moved revisions: %v, want %v", again.Revisions, f.out.Revisions)
	}
}

// The soak is there to catch a lapse: a cluster unhealthy during its stage's soak fails.
func TestAClusterUnhealthyDuringItsSoakFails(t *testing.T) {
	f := newFleet(t, stage("canary", 0, time.Minute, "member1"), stage("rest", 0, 0, "member2"))
	f.settle()
	f.in.Revision = "r2"
	f.step() // member1 updated
	f.step() // member1 healthy: the soak starts
	f.lapsed["member1"] = true
	f.in.Now = f.in.Now.Add(30 * time.Second)
	f.step()
	f.expectPhase(rolloutsv1alpha1.PhaseHalted)
	f.expectWorks(map[string]string{"member1": "r2", "member2": "r1"})
}

// Once its stage is done, a cluster's lapse is the workload's, not the rollout's: the
// rollout goes on, and its Work need not be read.
func TestAClusterOfADoneStageIsNotJudgedAgain(t *testing.T) {
	f := newFleet(t, canaryThenRest()...)
	f.settle()
	f.in.Revision = "r2"
	f.step() // member1 updated
	f.step() // member1 healthy: canary done; member2 updated
	if used := HealthUsed(f.in); used("member1") || !used("member2") || !used("member3") {
		t.Errorf("health used: member1 %t, member2 %t, member3 %t; want the rest stage's alone",
			used("member1"), used("member2"), used("member3"))
	}
	f.lapsed["member1"] = true
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhaseComplete)
	f.expectWorks(map[string]string{"member1": "r2", "member2": "r2", "member3": "r2"})
}

// A cluster joining a stage already done runs the revision at once, and its Work is
// read until it is healthy on it.
func TestAClusterJoiningADoneStageIsJudgedUntilHealthy(t *testing.T) {
	stages := func(first ...string) []rolloutpolicy.Stage {
		s := []rolloutpolicy.Stage{stage("a", 0, 0, first...), stage("b", 0, 0, "member2"), stage("c", 0, 0, "member3")}
		s[2].RequireApproval = true
		return s
	}
	f := newFleet(t, stages("member1")...)
	f.settle()
	f.in.Revision = "r2"
	f.settle() // stage b done, c waits for approval
	f.in.Stages = stages("member1", "member4")
	f.settle()
	f.expectPhase(rolloutsv1alpha1.PhaseWaitingForApproval)
	f.expectWorks(map[string]string{"member1": "r2", "member4": "r2", "member2": "r2", "member3": "r1"})
	for _, c := range f.out.Status.Clusters {
		if c.Name == "member4" && c.State != rolloutsv1alpha1.ClusterHealthy {
			t.Errorf("member4 is %s, want Healthy", c.State)
		}
	}
}
