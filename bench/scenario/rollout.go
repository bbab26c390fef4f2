// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/wait"
	"github.com/binding-controller/binding-controller/bench/workload"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

const rolloutLimit = 30 * time.Minute // on every wait of the rollout subcommand

// rolloutBench is the rollout subcommand (make bench-rollout): what a staged rollout
// costs the controller. One plane and one controller hold the fleet, the execution side
// simulated reporting every Work Healthy. Run A changes every template under no policy
// until every Work carries the change; then a RolloutPolicy adopts the bindings, and
// run B changes every template again until every rollout is Complete on it.
type rolloutBench struct {
	*env
	sd     side
	ctl    *controller.Controller
	rec    *recorder
	stages [][]string
	soak   time.Duration
}

// rolloutRun is one run's controller cost, from just before the change until it is quiet.
type rolloutRun struct {
	Label      string  `json:"label"`
	Wall       float64 `json:"wallSeconds"`
	CPU        float64 `json:"cpuSeconds"`
	Syncs      float64 `json:"syncs"`
	StageSum   float64 `json:"stageDurationSumSeconds"`
	StageCount float64 `json:"stageDurations"`
}

type rolloutReport struct {
	*session.Session
	Runs       []rolloutRun    `json:"runs"`
	Ratio      report.Num      `json:"cpuPerSyncRatio"`
	StageTimes []stageTimes    `json:"stageTimes"`
	Figures    []report.Figure `json:"figures"`
	Notes      []string        `json:"notes"`
}

func rollout(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("rollout", flag.ContinueOnError)
	var common session.Common
	common.Register(fs, "rollout")
	l := load{Name: "rollout", unaudited: true}
	fs.IntVar(&l.Bindings, "bindings", 1000, "Deployment templates, each bound to every cluster")
	fs.IntVar(&l.Clusters, "clusters", 10, "member clusters, in three stages: one, a third of the rest, the rest")
	soak := fs.Duration("soak", 5*time.Second, "every stage's minSuccessTime")
	poll := fs.Duration("poll", 5*time.Second, "the manager's --rollout-health-poll-interval")
	if err := session.Parse(fs, args); err != nil {
		return err
	}
	if l.PerBinding = l.Clusters; min(l.Bindings, l.Clusters) < 1 {
		return fmt.Errorf("--bindings and --clusters must be positive")
	}
	s, err := common.Start(ctx, fs, "rollout")
	defer s.Finish()
	if err != nil {
		return err
	}
	e, err := startEnv(ctx, filepath.Join(s.Dir, "plane"), l)
	if err != nil {
		return err
	}
	defer e.stop()
	b := &rolloutBench{env: e, rec: newRecorder(), stages: rolloutStages(l.Clusters), soak: *soak,
		sd: ours(controller.Spec{Label: "ours", Binary: s.Binary, Args: append([]string{"--rollout-health-poll-interval=" + poll.String()}, common.ManagerArgs()...)})}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err = b.setUp(ctx)
	if b.ctl != nil {
		defer stop(b.ctl)
	}
	if err != nil {
		return err
	}
	a, err := b.measure(ctx, "no-policy", "nginx:1.28", "every Work changed", func(start time.Time) bool {
		return !slices.ContainsFunc(b.keys, func(k string) bool { return b.tracker.Get(k).GenerationAt.Before(start) })
	})
	var r rolloutRun
	if err == nil {
		err = b.adopt(ctx)
	}
	if err == nil {
		r, err = b.measure(ctx, "rollout", "nginx:1.29", "every rollout Complete", func(start time.Time) bool { return b.rec.completedSince(start) == len(b.bindings) })
	}
	if err != nil {
		return err
	}
	return b.report(s, a, r, *poll, common.JSONPath)
}

// rolloutStages are a stage of one member, one of a third of the rest and one of the
// rest: 1, 3 and 6 of 10.
func rolloutStages(clusters int) (stages [][]string) {
	members := workload.Members(clusters)
	for _, n := range []int{1, (clusters - 1) / 3, clusters} {
		if n = min(n, len(members)); n > 0 {
			stages, members = append(stages, members[:n]), members[n:]
		}
	}
	return stages
}

// setUp starts the rollout watch, the simulator and the controller, then creates the
// bindings and waits until every Work exists.
func (b *rolloutBench) setUp(ctx context.Context) error {
	watcher, err := client.NewWithWatch(b.plane.Admin, client.Options{Scheme: b.plane.Client.Scheme()})
	if err != nil {
		return err
	}
	go b.rec.watchRollouts(ctx, watcher)
	sim := executionsim.New(b.plane.Client, time.Second)
	sim.ReportHealth(b.rec.health)
	go sim.Run(ctx)
	if b.ctl, err = b.startReady(ctx, b.sd); err != nil {
		return err
	}
	session.Logf("controller up; creating %d bindings to %d clusters", len(b.bindings), b.load.Clusters)
	err = parallel(ctx, len(b.bindings), 16, func(ctx context.Context, i int) error { return b.plane.Client.Create(ctx, b.bindings[i]) })
	if err == nil {
		_, err = b.tracker.WaitAll(ctx, b.keys, rolloutLimit)
	}
	return err
}

// change changes every template's image and then, as Karmada's detector does, its
// binding's spec.resource.resourceVersion.
func (b *rolloutBench) change(ctx context.Context, image string) error {
	patch := client.RawPatch(types.StrategicMergePatchType,
		fmt.Appendf(nil, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image))
	return parallel(ctx, len(b.bindings), 16, func(ctx context.Context, i int) error {
		rb := b.bindings[i]
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: rb.Spec.Resource.Name}}
		if err := b.plane.Client.Patch(ctx, d, patch); err != nil {
			return err
		}
		bump := fmt.Appendf(nil, `{"spec":{"resource":{"resourceVersion":%q}}}`, d.ResourceVersion)
		if err := b.plane.Client.Patch(ctx, rb.DeepCopy(), client.RawPatch(types.MergePatchType, bump)); err != nil {
			return err
		}
		b.rec.mu.Lock()
		defer b.rec.mu.Unlock()
		b.rec.changedAt[rb.Name] = time.Now()
		return nil
	})
}

// measure changes every template and waits until done, and returns the controller's CPU
// and syncs from just before the change until it is quiet again.
func (b *rolloutBench) measure(ctx context.Context, label, image, what string, done func(start time.Time) bool) (rolloutRun, error) {
	r := rolloutRun{Label: label}
	if err := b.ctl.WaitQuiet(ctx, 2*time.Second, rolloutLimit); err != nil {
		return r, err
	}
	m, err := startMeter(ctx, b.env, b.ctl, b.sd)
	if err != nil {
		return r, err
	}
	session.Logf("%s: changing %d templates", label, len(b.bindings))
	start := time.Now()
	if err = b.change(ctx, image); err == nil {
		err = wait.Poll(ctx, 250*time.Millisecond, rolloutLimit, what, func(context.Context) (bool, error) { return done(start), b.ctl.Alive() })
	}
	if r.Wall = time.Since(start).Seconds(); err == nil {
		session.Logf("%s: %s after %.1fs; waiting for the controller to go quiet", label, what, r.Wall)
		err = b.ctl.WaitQuiet(ctx, 2*time.Second, rolloutLimit)
	}
	var u usage
	if err == nil {
		u, err = m.stop(ctx, b.ctl)
	}
	if err != nil {
		return r, err
	}
	delta := func(metric string) float64 { return u.metrics.Sum(metric, nil) - m.metrics.Sum(metric, nil) }
	const stage = "binding_controller_rollout_stage_duration_seconds"
	r.CPU, r.Syncs, r.StageSum, r.StageCount = u.cpu, u.reconciles, delta(stage+"_sum"), delta(stage+"_count")
	session.Logf("%s: controller CPU %.2fs over %.0f syncs", label, r.CPU, r.Syncs)
	return r, nil
}

// adopt creates the RolloutPolicy, a stage per b.stages, and waits until every binding
// has a Complete rollout on its template as it is.
func (b *rolloutBench) adopt(ctx context.Context) error {
	p := &rolloutsv1alpha1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: "bench"},
		Spec: rolloutsv1alpha1.RolloutPolicySpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}}}
	for i, clusters := range b.stages {
		p.Spec.Stages = append(p.Spec.Stages, rolloutsv1alpha1.RolloutStage{Name: fmt.Sprintf("stage-%d", i+1),
			Clusters: rolloutsv1alpha1.StageClusters{Names: clusters}, MinSuccessTime: &metav1.Duration{Duration: b.soak}})
	}
	if err := b.plane.Client.Create(ctx, p); err != nil {
		return err
	}
	return wait.Poll(ctx, 250*time.Millisecond, rolloutLimit, "every binding adopted by the policy", func(context.Context) (bool, error) {
		return b.rec.completedSince(time.Time{}) == len(b.bindings), b.ctl.Alive()
	})
}

// report prints the stages' table and the runs' figures, and writes both as JSON.
func (b *rolloutBench) report(s *session.Session, a, r rolloutRun, poll time.Duration, jsonPath string) error {
	rep := &rolloutReport{Session: s, Runs: []rolloutRun{a, r}, StageTimes: b.stageTimes(), Ratio: report.Num(r.CPU / r.Syncs / (a.CPU / a.Syncs))}
	rep.Machine.Finish()
	t := &report.Table{Header: []string{"stage", "clusters", "timed", "stage−soak p50", "p99", "controller p50", "p99", "advance p50", "p99", "execution p50", "p99"}}
	for _, st := range rep.StageTimes {
		row := []string{st.Stage, fmt.Sprint(st.Clusters), fmt.Sprint(st.Timed)}
		for _, v := range st.Seconds {
			row = append(row, report.Value("s", float64(v[0])), report.Value("s", float64(v[1])))
		}
		t.Add(row...)
	}
	t.Add("metric", "", fmt.Sprint(r.StageCount), report.Value("s", r.StageSum/r.StageCount-b.soak.Seconds())+" mean")
	fmt.Println()
	t.Print(os.Stdout)
	f, n := &report.Figures{Labels: []string{"no policy", "rollout"}}, float64(len(b.bindings))
	each := func(v func(rolloutRun) float64) []float64 { return []float64{v(a), v(r)} }
	f.Section("controller CPU (user+system, /proc), from the change until quiet")
	f.Add("CPU", "%.2fs", each(func(x rolloutRun) float64 { return x.CPU })...)
	f.Add("syncs (controller_runtime_reconcile_total)", "%.0f", each(func(x rolloutRun) float64 { return x.Syncs })...)
	perSync := each(func(x rolloutRun) float64 { return 1000 * x.CPU / x.Syncs })
	f.AddCells("CPU per sync", report.Cells{Values: []string{report.Value("%.2fms", perSync[0]), report.Value("%.2fms", perSync[1]) + fmt.Sprintf(" (%.2f×)", rep.Ratio)},
		Verdicts: []string{"", report.Verdict(rep.Ratio <= 1.1)}}, "≤ 1.1× no policy")
	f.Add("CPU per binding (its change / its rollout)", "%.2fms", each(func(x rolloutRun) float64 { return 1000 * x.CPU / n })...)
	f.Add("syncs per binding", "%.1f", each(func(x rolloutRun) float64 { return x.Syncs / n })...)
	f.Add("until every Work / rollout done", "s", each(func(x rolloutRun) float64 { return x.Wall })...)
	rep.Figures, rep.Notes = f.List, []string{
		fmt.Sprintf("%s; one plane, one controller (--rollout-health-poll-interval=%s): run A, then the policy adopts every binding (minSuccessTime %s), then run B; the simulator writes Work status every 1s",
			b.load, poll, b.soak),
		"stage−soak: a stage's time less minSuccessTime, from the stage before it done (the first: the change) until the controller acts on it (the next stage's first Work written; after the last: the rollout Complete); controller: writing the stage's Works + advance (last cluster Healthy + minSuccessTime → acted on, up to a poll interval: Work status is not watched); execution: last Work written → last cluster Healthy",
		"metric: binding_controller_rollout_stage_duration_seconds sum/count over run B less minSuccessTime",
	}
	return report.Print("rollout", f.Table(), rep.Notes, rep, jsonPath)
}

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
		w, err := c.Watch(ctx, &rolloutsv1alpha1.BindingRolloutList{}, client.InNamespace(templateNamespace))
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
func (b *rolloutBench) stageTimes() []stageTimes {
	shares := make([][4][]float64, len(b.stages))
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	for _, rb := range b.bindings {
		template := rb.Spec.Resource.Name
		written, healthy := make([][]time.Time, len(b.stages)), make([][]time.Time, len(b.stages))
		for i, stage := range b.stages {
			for _, c := range stage {
				written[i] = append(written[i], b.tracker.Get(workKey(rb.Spec.Resource, c)).GenerationAt)
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
