// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"reflect"
	"testing"
	"time"

	"github.com/binding-controller/binding-controller/bench/controller"
)

func TestNarrowLoadsTakeTheirClustersInTurn(t *testing.T) {
	l := load{Bindings: 3, Clusters: 3, PerBinding: 2}
	if got, want := l.clustersOf(2), []string{"member3", "member1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("clustersOf(2) = %v, want %v", got, want)
	}
	if got := (load{Clusters: 2, PerBinding: 5}).clustersOf(7); len(got) != 2 {
		t.Errorf("a binding of every cluster targets %v", got)
	}
}

// Only this project's controller with a checkpoint interval must leave a checkpoint
// for its restart.
func TestOnlyOursWithAnIntervalCheckpoints(t *testing.T) {
	for _, c := range []struct {
		sd   side
		want bool
	}{
		{ours(controller.Spec{Args: []string{"--work-ledger-checkpoint-interval=30s"}}), true},
		{ours(controller.Spec{Args: []string{"--work-ledger-checkpoint-interval", "0s"}}), false},
		{ours(controller.Spec{}), false},
		{side{spec: controller.Spec{Args: []string{"--work-ledger-checkpoint-interval=30s"}}, reconciler: "binding-controller"}, false},
	} {
		if got := c.sd.checkpoints(); got != c.want {
			t.Errorf("%+v checkpoints = %v, want %v", c.sd, got, c.want)
		}
	}
}

// Each subcommand runs its own scenarios unless told otherwise; recovery and fresh
// changes need a restart and take their samples only when asked for; the ceiling's
// concurrency follows the manager's own; unknown scenarios (among them those dropped:
// scale, flood) and bad values are refused.
func TestParseOptions(t *testing.T) {
	o, _, err := parseOptions("propagation", []string{"--manager-args", "--cluster-sync-concurrency=16"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.want["ceiling"] || !o.phases.resync || !o.phases.restart || o.want["recovery"] || o.phases.recoverySamples != 0 || o.phases.fresh != 0 ||
		o.ceilingConcurrency != 5*16 || o.fleet.PerBinding != 10 {
		t.Errorf("propagation's defaults: want %v, phases %+v, ceiling concurrency %d, fleet %+v", o.want, o.phases, o.ceilingConcurrency, o.fleet)
	}
	o, _, err = parseOptions("vs-karmada", []string{"--scenarios", "initial,recovery,fresh", "--recovery-blocks", "1s,1m"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.phases.restart || o.phases.resync || o.phases.recoverySamples != 2 || o.phases.fresh != 20 ||
		!reflect.DeepEqual(o.phases.recoveryBlocks, []time.Duration{time.Second, time.Minute}) {
		t.Errorf("recovery and fresh: phases %+v", o.phases)
	}
	for _, args := range [][]string{{"--scenarios", "scale"}, {"--scenarios", "flood"}, {"--bindings", "0"}, {"--recovery-blocks", "soon"},
		{"--scenarios", "fresh", "--bindings", "10", "--fresh-changes", "11"}, {"--versus", "--watch-works=false"}, {"--versus", "b=x", "--karmada", "/k"}} {
		if _, _, err := parseOptions("vs-karmada", args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
