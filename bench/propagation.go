// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/bench/benchkit"
	"github.com/binding-controller/binding-controller/internal/testenv/controlplane"
	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

const (
	templateNamespace = "bench"
	canaryNamespace   = "bench-canary"
	resyncAnnotation  = "bench.binding-controller.io/resync"
)

// Targets the figures are held against.
const (
	targetCeilingRatio   = 0.80 // controller Works/s ÷ ceiling Works/s, at least
	targetRequestsPerNew = 1.0  // API requests per new Work, exactly
	targetFanoutRatio    = 2.0  // wide ÷ narrow time, at most
	targetMemoryGrowth   = 1.25 // heap per cached Work, 10× manifest ÷ 1× manifest, at most
)

// loadSpec is one propagation load: Bindings templates and bindings, each bound to
// PerBinding of Clusters member clusters (all of them, or one each: cluster i mod Clusters).
type loadSpec struct {
	Name       string `json:"name"`
	Bindings   int    `json:"bindings"`
	Clusters   int    `json:"clusters"`
	PerBinding int    `json:"clustersPerBinding"`
	PadEnv     int    `json:"padEnv"`
	// KarmadaWebhook runs the load behind karmada-webhook's Work mutation.
	KarmadaWebhook bool `json:"karmadaWebhook,omitempty"`
	// Interpreted runs the load on a plane with the workload CRDs and the scenario's
	// ResourceInterpreterCustomization, and checks the Works' replicas.
	Interpreted bool `json:"interpreted,omitempty"`
	// Kind is the templates' kind: Deployment ("" too) or benchkit.LuaKind, a custom kind
	// with the Deployment's body that only the customization's Lua revises.
	Kind string `json:"kind,omitempty"`
	// Namespace holds the templates and bindings ("": templateNamespace).
	Namespace string `json:"namespace,omitempty"`
}

func (l loadSpec) namespace() string {
	if l.Namespace == "" {
		return templateNamespace
	}
	return l.Namespace
}

// lua says whether the load's templates are of the Lua-revised kind.
func (l loadSpec) lua() bool { return l.Kind == benchkit.LuaKind }

func (l loadSpec) works() int { return l.Bindings * l.PerBinding }

func (l loadSpec) String() string {
	return fmt.Sprintf("%d bindings × %d clusters = %d Works", l.Bindings, l.PerBinding, l.works())
}

func (l loadSpec) clustersOf(i int) []string {
	if l.PerBinding >= l.Clusters {
		return benchkit.Members(l.Clusters)
	}
	out := make([]string, l.PerBinding)
	for j := range out {
		out[j] = benchkit.Member((i + j) % l.Clusters)
	}
	return out
}

func templateName(i int) string { return fmt.Sprintf("app-%05d", i) }

// memReading is the controller's memory at one moment.
type memReading struct {
	RSS       int64        `json:"rssBytes"`
	PeakRSS   int64        `json:"peakRSSBytes"`
	HeapInuse benchkit.Num `json:"heapInuseBytes"` // go_memstats_heap_inuse_bytes
	// HeapLive is go_gc_heap_live_bytes (live heap as the last GC marked it), NaN without it.
	HeapLive benchkit.Num `json:"heapLiveBytes"`
}

// requestCounts is what the controller asked of the API server during a phase.
type requestCounts struct {
	// ClientByMethod is the delta of the controller's rest_client_requests_total by
	// method (nil when it has no metrics). client-go counts a watch as a GET.
	ClientByMethod map[string]float64 `json:"clientByMethod,omitempty"`
	ClientTotal    benchkit.Num       `json:"clientTotal"`
	// Audit counts the same requests as the API server's audit log saw them, by verb and
	// resource (empty when --audit=false).
	Audit benchkit.AuditCounts `json:"audit,omitempty"`
	// WorkWrites is the delta of binding_controller_work_writes_total by operation.
	WorkWrites map[string]float64 `json:"workWrites,omitempty"`
}

type resyncResult struct {
	Bindings   int           `json:"bindings"`
	Reconciles benchkit.Num  `json:"reconciles"`
	Elapsed    time.Duration `json:"elapsedNs"`
	Requests   requestCounts `json:"requests"`
	Quiet      bool          `json:"quiet"`
}

type runResult struct {
	Controller    string        `json:"controller"`
	Command       []string      `json:"command"`
	Load          loadSpec      `json:"load"`
	ManifestBytes int           `json:"manifestBytes"`
	Works         int           `json:"works"`
	CreateElapsed time.Duration `json:"bindingsCreatedNs"`
	arrivalTiming
	Requests requestCounts `json:"requests"`
	// GCScrapes is how many scrapes of /metrics it took, before and after the load, to
	// see two garbage collections complete, so that the live heap read is current.
	GCScrapes  int        `json:"gcScrapes"`
	MemBefore  memReading `json:"memoryBefore"`
	MemAfter   memReading `json:"memoryAfter"`
	PeakRSSEnd int64      `json:"peakRSSAtEndBytes"`
	// CPUSeconds is the controller's user+system CPU time from the first binding to quiet.
	CPUSeconds float64 `json:"cpuSeconds"`
	// PlaneCPUSeconds is what kube-apiserver and etcd used over the same span.
	PlaneCPUSeconds float64       `json:"controlPlaneCpuSeconds"`
	Resync          *resyncResult `json:"resync,omitempty"`
	// Restart is what a fresh controller process asked for to re-sync the same bindings.
	Restart *resyncResult `json:"restart,omitempty"`
	Log     string        `json:"log"`
	Error   string        `json:"error,omitempty"`
}

// heapPerWork is the growth of the live heap (heap in use without go_gc_heap_live_bytes)
// per Work between before and after the load.
func (r *runResult) heapPerWork() float64 {
	if r == nil || r.Seen == 0 {
		return math.NaN()
	}
	before, after := float64(r.MemBefore.HeapLive), float64(r.MemAfter.HeapLive)
	if math.IsNaN(before) || math.IsNaN(after) {
		before, after = float64(r.MemBefore.HeapInuse), float64(r.MemAfter.HeapInuse)
	}
	return (after - before) / float64(r.Seen)
}

// arrivalTiming is how long a load took until every one of its Works existed.
type arrivalTiming struct {
	Seen        int           `json:"seen"`
	TimedOut    bool          `json:"timedOut,omitempty"`
	Elapsed     time.Duration `json:"elapsedNs"`
	WorksPerSec float64       `json:"worksPerSec"`
	// SteadyWorksPerSec is the rate between the 10th and 90th percentile Work.
	SteadyWorksPerSec benchkit.Num `json:"steadyWorksPerSec"`
}

// createAndTime runs create for 0..n-1, atOnce at a time, and waits until every Work of
// keys exists, printing progress meanwhile. The clock starts with the first create;
// created is how long the creates took. A load that runs out of time is timing.TimedOut,
// not an error.
func (p *propagation) createAndTime(ctx context.Context, label string, tracker *localplane.WorkTracker, keys []string,
	n, atOnce int, create func(ctx context.Context, i int) error) (timing arrivalTiming, created time.Duration, err error) {
	done := make(chan struct{})
	defer close(done)
	go progress(label, tracker, keys, done)
	start := time.Now()
	if err := benchkit.Parallel(ctx, n, atOnce, create); err != nil {
		return timing, time.Since(start), fmt.Errorf("creating: %w", err)
	}
	created = time.Since(start)
	arrival, err := tracker.WaitAll(ctx, keys, p.phaseTimeout)
	timing.Seen = arrival.Seen
	switch {
	case errors.Is(err, benchkit.ErrTimeout):
		timing.TimedOut = true
		timing.Seen = tracker.Seen(keys)
	case err != nil:
		return timing, created, err
	default:
		timing.Elapsed = arrival.Last.Sub(start)
		timing.WorksPerSec = float64(len(keys)) / timing.Elapsed.Seconds()
		timing.SteadyWorksPerSec = benchkit.Num(benchkit.SteadyRate(tracker.FirstSeen(keys)))
	}
	return timing, created, nil
}

type ceilingResult struct {
	Load        loadSpec `json:"load"`
	Concurrency int      `json:"concurrency"`
	QPS         float64  `json:"qps"`
	Works       int      `json:"works"`
	arrivalTiming
	Audit benchkit.AuditCounts `json:"audit,omitempty"`
	// PlaneCPUSeconds is what kube-apiserver and etcd used while the Works were created.
	PlaneCPUSeconds float64 `json:"controlPlaneCpuSeconds"`
}

type figure struct {
	Section string `json:"section"`
	Name    string `json:"name"`
	// Detail marks a figure that details the one before it (indented in the table).
	Detail bool              `json:"detail,omitempty"`
	Values map[string]string `json:"values"`
	Target string            `json:"target,omitempty"`
	Result map[string]string `json:"result,omitempty"`
}

type propagationReport struct {
	*session
	Controllers []string                `json:"controllers"`
	Runs        map[string][]*runResult `json:"runs"` // by controller label
	// Initial holds every run of the initial load by controller (--repeat), Ceilings every
	// ceiling run, in order.
	Initial  map[string][]*runResult `json:"initialRuns"`
	Ceilings []*ceilingResult        `json:"ceilings,omitempty"`
	Figures  []figure                `json:"figures"`
	Notes    []string                `json:"notes"`
	Finished time.Time               `json:"finished"`
}

// urgentReport is what the urgent and flood scenarios write (--urgent-json).
type urgentReport struct {
	*session
	Urgent   []*urgentResult `json:"urgent"`
	Finished time.Time       `json:"finished"`
}

type propagation struct {
	s            *session
	audit        bool
	creators     int
	phaseTimeout time.Duration
	seq          int
}

// ownJSON are the scenarios that write a results file of their own; the others write
// propagation.json.
var ownJSON = map[string]bool{"interpreter": true, "urgent": true, "flood": true, "scale": true}

func runPropagation(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("propagation", flag.ContinueOnError)
	var c common
	c.register(fs, "propagation")
	scenarios := fs.String("scenarios", "initial,fanout,resync,memory,webhook,interpreter", "comma-separated scenarios: initial, fanout, resync, memory, webhook, interpreter, urgent, flood, scale")
	urgentChanges := fs.Int("urgent-changes", 20, "urgent and flood: fresh changes made during the backlog, alternately a new binding and a changed one")
	urgentInterval := fs.Duration("urgent-interval", 250*time.Millisecond, "urgent and flood: time between two fresh changes, the first at the backlog's start")
	floodBindings := fs.Int("flood-bindings", 5000, "flood: bindings created at once")
	floodNamespace := fs.String("flood-namespace", "bench-flood", "flood: namespace of the flood's templates and bindings (the fresh changes are in namespace "+templateNamespace+"; the same name puts them in the flood's namespace)")
	floodClusters := fs.Int("flood-clusters", 1, "flood: member clusters every flood binding targets")
	bindings := fs.Int("bindings", 1000, "bindings of the initial propagation (one Deployment template each)")
	clusters := fs.Int("clusters", 10, "member clusters every binding of the initial propagation targets")
	fanoutBindings := fs.Int("fanout-bindings", 1, "bindings of the wide fan-out")
	fanoutClusters := fs.Int("fanout-clusters", 500, "member clusters every wide fan-out binding targets; the narrow load has fanout-bindings × fanout-clusters bindings of one cluster each")
	creators := fs.Int("creators", 8, "goroutines creating bindings (and patching them for the resync)")
	ceilingConcurrency := fs.Int("ceiling-concurrency", 0, "Works the plain client creates at once (0: --concurrent-resourcebinding-syncs × --cluster-sync-concurrency of the manager, 5 × 8 = 40 unless --manager-args says otherwise)")
	ceilingQPS := fs.Float64("ceiling-qps", -1, "client-side QPS limit of the plain client (negative: none)")
	memoryScale := fs.Float64("memory-scale", 10, "how many times larger the manifests of the memory scenario's second run are")
	phaseTimeout := fs.Duration("phase-timeout", 10*time.Minute, "cap on waiting for every Work of one load")
	repeat := fs.Int("repeat", 1, "how many times the initial load runs, controller and ceiling alternating; Works/s are medians")
	audit := fs.Bool("audit", true, "audit-log the requests of the controller and the plain client, for counts by verb and resource")
	interpreterBindings := fs.Int("interpreter-bindings", 200, "bindings of each load of the interpreter scenario")
	interpreterClusters := fs.Int("interpreter-clusters", 10, "member clusters every binding of the interpreter scenario targets")
	interpreterRounds := fs.Int("interpreter-rounds", 2, "rounds of the interpreter scenario, each a native and a Lua load (ABBA order)")
	interpreterJSON := fs.String("interpreter-json", filepath.Join("bench", "results", "interpreter.json"),
		"where the interpreter scenario writes its results as JSON (relative: to the repository root)")
	urgentJSON := fs.String("urgent-json", filepath.Join("bench", "results", "urgent.json"),
		"where the urgent and flood scenarios write their results as JSON (relative: to the repository root)")
	scaleBindings := fs.Int("scale-bindings", 10000, "scale: narrow bindings at full size")
	scaleClusters := fs.Int("scale-clusters", 10, "scale: member clusters every narrow binding targets")
	scaleWide := fs.Int("scale-wide-clusters", 2000, "scale: member clusters of the one wide binding at full size")
	scaleDivisor := fs.Int("scale-divisor", 10, "scale: the small run is the full size ÷ this")
	scaleChanges := fs.Int("scale-changes", 100, "scale: changes made one at a time to the idle fleet, each timed")
	scaleEnv := fs.String("scale-env", "", "scale: space-separated NAME=value set in the controller's environment (e.g. \"GOMEMLIMIT=700MiB GOGC=100\")")
	scaleMemLimit := fs.Bool("scale-memory-limit", true, "scale: run the controller at both sizes with GOMEMLIMIT at 90% of the RSS budget (8 KiB) times the full size's Works, as an operator sizing its container for the full fleet would (unless --scale-env sets GOMEMLIMIT)")
	scaleCeiling := fs.Bool("scale-ceiling", true, "scale: also time a plain client creating the narrow Works at each size, for the control plane's CPU per Work")
	scaleFinalizer := fs.Bool("scale-finalizer", true, "scale: create the bindings with the binding controller's finalizer, as Karmada's detector does (false: the controller adds it, one patch per binding)")
	scaleUrgent := fs.Bool("scale-urgent", true, "scale: restart the full size a second time and make --urgent-changes fresh changes while it re-verifies")
	scaleAgain := fs.Bool("scale-small-again", true, "scale: run the small size again after the full size; the full size is held against the mean of both, and their difference shows the machine's drift")
	scaleRestarts := fs.Int("scale-restarts", 3, "scale: timed restarts at each size, one after the other; the table compares the median")
	scaleProfile := fs.Duration("scale-profile", 0, "scale: take CPU profiles of kube-apiserver (and of the controller, when --manager-args serve them: --enable-pprof --profiling-bind-address=…) for this long, from the moment 40% of each size's initial Works exist, into the work directory (see --keep)")
	scaleJSON := fs.String("scale-json", filepath.Join("bench", "results", "scale.json"),
		"where the scale scenario writes its results as JSON (relative: to the repository root)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go -C bench run . propagation [flags]\n\n"+
			"Every load runs on a fresh control plane with a fresh controller process. initial: --bindings ×\n"+
			"--clusters created at once, time until every Work exists, against a plain client creating the same\n"+
			"rendered Works (the ceiling); API requests per new Work. resync: every binding re-queued (an\n"+
			"annotation patched) with nothing to change; writes and reads counted. fanout: --fanout-bindings ×\n"+
			"--fanout-clusters against the same number of Works as one-cluster bindings. memory: peak RSS and\n"+
			"Go heap with every Work cached, and again with --memory-scale × larger manifests. webhook: the initial\n"+
			"load, its resync and a restart behind karmada-webhook's Work mutation (internal/testenv/workwebhook). interpreter:\n"+
			"--interpreter-bindings × --interpreter-clusters of a native Deployment and of a custom kind revised by a\n"+
			"ResourceInterpreterCustomization's Lua, alternating; controller CPU per Work side by side (its own JSON,\n"+
			"--interpreter-json). scale: --scale-bindings × --scale-clusters plus one binding × --scale-wide-clusters,\n"+
			"against 1/--scale-divisor of it: Works/s, idle-change latency, CPU per sync, memory per Work, restart\n"+
			"time and requests, control-plane CPU per Work against a plain client, fresh changes during a restart\n"+
			"(its own JSON, --scale-json).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, sc := range splitList(*scenarios) {
		switch sc {
		case "initial", "fanout", "resync", "memory", "webhook", "interpreter", "urgent", "flood", "scale":
			want[sc] = true
		default:
			return fmt.Errorf("--scenarios: unknown scenario %q", sc)
		}
	}
	if *bindings < 1 || *clusters < 1 || *fanoutBindings < 1 || *fanoutClusters < 1 || *creators < 1 || *repeat < 1 ||
		*interpreterBindings < 1 || *interpreterClusters < 1 || *interpreterRounds < 1 ||
		*scaleBindings < 1 || *scaleClusters < 1 || *scaleWide < 1 || *scaleDivisor < 1 || *scaleChanges < 1 {
		return fmt.Errorf("sizes and --creators must be positive")
	}
	if *ceilingConcurrency <= 0 {
		*ceilingConcurrency = managerFlagInt(c.extraArgs(), "concurrent-resourcebinding-syncs", 5) *
			managerFlagInt(c.extraArgs(), "cluster-sync-concurrency", 8)
	}

	s, err := c.start(ctx, fs, "propagation")
	defer c.finish(s)
	if err != nil {
		return err
	}
	p := &propagation{s: s, audit: *audit, creators: *creators, phaseTimeout: *phaseTimeout}
	rep := &propagationReport{session: s, Runs: map[string][]*runResult{}, Initial: map[string][]*runResult{}}
	urgent := &urgentReport{session: s}

	specs := []benchkit.ControllerSpec{{Label: "binding-controller", Binary: s.Binary, Args: c.extraArgs()}}
	if c.vs != "" {
		specs = append(specs, benchkit.ControllerSpec{Label: "vs", Command: c.vs})
	}
	for _, sp := range specs {
		rep.Controllers = append(rep.Controllers, sp.Label)
	}

	initial := loadSpec{Name: "initial", Bindings: *bindings, Clusters: *clusters, PerBinding: *clusters}
	wide := loadSpec{Name: "fanout-wide", Bindings: *fanoutBindings, Clusters: *fanoutClusters, PerBinding: *fanoutClusters}
	narrow := loadSpec{Name: "fanout-narrow", Bindings: *fanoutBindings * *fanoutClusters, Clusters: *fanoutClusters, PerBinding: 1}
	padEnv, baseBytes, bigBytes, err := benchkit.PadForScale(*memoryScale)
	if err != nil {
		return err
	}
	big := loadSpec{Name: fmt.Sprintf("memory-%gx", *memoryScale), Bindings: *bindings, Clusters: *clusters, PerBinding: *clusters, PadEnv: padEnv}
	behindWebhook := loadSpec{Name: "webhook", Bindings: *bindings, Clusters: *clusters, PerBinding: *clusters, KarmadaWebhook: true}
	logf("manifest per Work: %d bytes; the memory scenario's large manifests: %d bytes (%d padding env vars)", baseBytes, bigBytes, padEnv)

	runs := map[string]map[string]*runResult{} // controller → load name → result
	record := func(label string, r *runResult) {
		if runs[label] == nil {
			runs[label] = map[string]*runResult{}
		}
		runs[label][r.Load.Name] = r
		rep.Runs[label] = append(rep.Runs[label], r)
	}
	// The initial load, --repeat times, the controller(s) and the ceiling alternating
	// (ABBA), so that a machine getting busier or quieter weighs on both alike. The first
	// controller run also carries the resync and the memory reading.
	for i := 0; i < *repeat; i++ {
		controllers := func() error {
			for _, sp := range specs {
				if !(want["initial"] || (i == 0 && (want["resync"] || want["memory"]))) {
					continue
				}
				r, err := p.controllerRun(ctx, sp, initial, i == 0 && want["resync"])
				if err != nil {
					return err
				}
				if i == 0 {
					record(sp.Label, r)
				} else {
					rep.Runs[sp.Label] = append(rep.Runs[sp.Label], r)
				}
				rep.Initial[sp.Label] = append(rep.Initial[sp.Label], r)
			}
			return nil
		}
		ceiling := func() error {
			if !want["initial"] {
				return nil
			}
			cr, err := p.ceilingRun(ctx, initial, *ceilingConcurrency, *ceilingQPS)
			if err != nil {
				return err
			}
			rep.Ceilings = append(rep.Ceilings, cr)
			return nil
		}
		steps := []func() error{controllers, ceiling}
		if i%2 == 1 {
			steps = []func() error{ceiling, controllers}
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
	}
	for _, sp := range specs {
		if want["fanout"] {
			for _, l := range []loadSpec{wide, narrow} {
				r, err := p.controllerRun(ctx, sp, l, false)
				if err != nil {
					return err
				}
				record(sp.Label, r)
			}
		}
		if want["memory"] {
			r, err := p.controllerRun(ctx, sp, big, false)
			if err != nil {
				return err
			}
			record(sp.Label, r)
		}
		if want["webhook"] {
			r, err := p.controllerRun(ctx, sp, behindWebhook, true)
			if err != nil {
				return err
			}
			record(sp.Label, r)
		}
		if want["urgent"] {
			r, err := p.urgentRun(ctx, sp, initial, loadSpec{}, *urgentChanges, *urgentInterval)
			if err != nil {
				return err
			}
			urgent.Urgent = append(urgent.Urgent, r)
		}
		if want["flood"] {
			// The changed bindings exist and are current before the flood.
			pre := loadSpec{Name: "flood", Bindings: *urgentChanges / 2, Clusters: *floodClusters, PerBinding: *floodClusters}
			r, err := p.urgentRun(ctx, sp, pre, loadSpec{Name: "flood-wave", Bindings: *floodBindings, Clusters: *floodClusters,
				PerBinding: *floodClusters, Namespace: *floodNamespace}, *urgentChanges, *urgentInterval)
			if err != nil {
				return err
			}
			urgent.Urgent = append(urgent.Urgent, r)
		}
	}
	var interp *interpreterReport
	if want["interpreter"] {
		if interp, err = p.interpreterScenario(ctx, specs, *interpreterBindings, *interpreterClusters, *interpreterRounds); err != nil {
			return err
		}
	}
	var scale *scaleReport
	if want["scale"] {
		o := scaleOptions{load: scaleLoad{Bindings: *scaleBindings, Clusters: *scaleClusters, WideClusters: *scaleWide},
			divisor: *scaleDivisor, changes: *scaleChanges, env: strings.Fields(*scaleEnv), memoryLimit: *scaleMemLimit, ceiling: *scaleCeiling,
			urgent: *scaleUrgent, again: *scaleAgain, restarts: *scaleRestarts, finalizer: *scaleFinalizer, urgentChanges: *urgentChanges, urgentInterval: *urgentInterval,
			profile: *scaleProfile}
		if scale, err = p.scaleScenario(ctx, specs[0], o); err != nil {
			return err
		}
	}
	rep.Finished = time.Now()
	rep.Machine.Finish()
	if scale != nil {
		scale.Finished = rep.Finished
		if err := printScale(scale, *scaleJSON); err != nil {
			return err
		}
	}
	if interp != nil {
		if err := printInterpreter(interp, specs, *interpreterJSON); err != nil {
			return err
		}
	}
	if len(urgent.Urgent) > 0 {
		urgent.Finished = rep.Finished
		if err := printUrgent(urgent, *urgentJSON); err != nil {
			return err
		}
	}
	onlyOwnJSON := true
	for sc := range want {
		onlyOwnJSON = onlyOwnJSON && ownJSON[sc]
	}
	if onlyOwnJSON {
		// Only scenarios with their own JSON ran: the propagation results of a full run
		// stay as they are.
		fmt.Printf("load average at end: %s; total %s\n", rep.Machine.LoadAvgEnd, benchkit.Dur(rep.Finished.Sub(rep.Started)))
		return nil
	}

	rep.Notes = propagationNotes(p, *ceilingConcurrency, *ceilingQPS)
	table := propagationTable(rep, specs, runs, want, initial, wide, narrow, big, behindWebhook, baseBytes, bigBytes)
	fmt.Println()
	table.Print(os.Stdout)
	fmt.Println()
	for _, n := range rep.Notes {
		fmt.Println("note: " + n)
	}
	fmt.Printf("load average at end: %s; total %s\n", rep.Machine.LoadAvgEnd, benchkit.Dur(rep.Finished.Sub(rep.Started)))
	path, err := benchkit.WriteJSON(c.jsonPath, rep)
	if err != nil {
		return err
	}
	fmt.Printf("results: %s\n", path)
	return nil
}

// managerFlagInt finds --name=V or --name V (or one dash) in args.
func managerFlagInt(args []string, name string, def int) int {
	if n, err := strconv.Atoi(managerFlag(args, name)); err == nil {
		return n
	}
	return def
}

// managerFlag finds --name=V or --name V (or one dash) in args: V, "true" for a flag
// given alone, or "" when args do not set it.
func managerFlag(args []string, name string) string {
	for i, a := range args {
		a = strings.TrimLeft(a, "-")
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				return args[i+1]
			}
			return "true"
		}
	}
	return ""
}

// newPlane starts a fresh control plane for one measured load: behind karmada-webhook's
// Work mutation, with the workload CRDs, as the load says.
func (p *propagation) newPlane(label string, load loadSpec) (*controlplane.Plane, error) {
	p.seq++
	dir := filepath.Join(p.s.Dir, fmt.Sprintf("%02d-%s", p.seq, sanitize(label)))
	t := time.Now()
	var audited []string
	if p.audit {
		audited = []string{benchkit.ControllerUser, benchkit.CeilingUser}
	}
	plane, err := controlplane.Start(controlplane.Options{Dir: dir, AuditUsers: audited,
		KarmadaWorkWebhook: load.KarmadaWebhook, WorkloadCRDs: load.Interpreted})
	if err != nil {
		return nil, err
	}
	logf("%s: control plane up in %s", label, benchkit.Dur(time.Since(t)))
	return plane, nil
}

// prepare joins the members (Clusters and execution namespaces), creates the template namespace and the templates,
// untimed, and returns the templates as the API server returned them and references to
// them. A load of the Lua kind gets the customization first, and its templates are
// Deployments' bodies as the API server defaults them (a dry run), so that both kinds'
// Works carry the same manifest.
func (p *propagation) prepare(ctx context.Context, plane *controlplane.Plane, load loadSpec) ([]*appsv1.Deployment, []workv1alpha2.ObjectReference, error) {
	if err := plane.JoinMembers(ctx, benchkit.Members(load.Clusters)); err != nil {
		return nil, nil, fmt.Errorf("joining members: %w", err)
	}
	if err := plane.CreateNamespaces(ctx, []string{load.namespace(), canaryNamespace}); err != nil {
		return nil, nil, fmt.Errorf("creating namespaces: %w", err)
	}
	if load.Interpreted {
		if err := plane.Client.Create(ctx, benchkit.ReplicasCustomization()); err != nil {
			return nil, nil, fmt.Errorf("creating the ResourceInterpreterCustomization: %w", err)
		}
	}
	templates := make([]*appsv1.Deployment, load.Bindings)
	refs := make([]workv1alpha2.ObjectReference, load.Bindings)
	t := time.Now()
	err := benchkit.Parallel(ctx, load.Bindings, 16, func(ctx context.Context, i int) error {
		d := benchkit.Deployment(load.namespace(), templateName(i), int32(load.PerBinding), load.PadEnv)
		ref, err := p.createTemplate(ctx, plane, load, d)
		if err != nil {
			return fmt.Errorf("creating template %s: %w", d.Name, err)
		}
		templates[i], refs[i] = d, ref
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	logf("%s: %d members joined and %d templates created (untimed) in %s", load.Name, load.Clusters, load.Bindings, benchkit.Dur(time.Since(t)))
	return templates, refs, nil
}

// createTemplate creates d, or for a load of the Lua kind a template of that kind with
// d's body as the API server defaults it, and returns a reference to what it created.
func (p *propagation) createTemplate(ctx context.Context, plane *controlplane.Plane, load loadSpec, d *appsv1.Deployment) (workv1alpha2.ObjectReference, error) {
	if !load.lua() {
		if err := plane.Client.Create(ctx, d); err != nil {
			return workv1alpha2.ObjectReference{}, err
		}
		return workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, UID: d.UID}, nil
	}
	if err := plane.Client.Create(ctx, d, client.DryRunAll); err != nil {
		return workv1alpha2.ObjectReference{}, err
	}
	q, err := benchkit.AsLuaKind(d)
	if err != nil {
		return workv1alpha2.ObjectReference{}, err
	}
	if err := plane.Client.Create(ctx, q); err != nil {
		return workv1alpha2.ObjectReference{}, err
	}
	return workv1alpha2.ObjectReference{APIVersion: q.GetAPIVersion(), Kind: q.GetKind(), Namespace: q.GetNamespace(), Name: q.GetName(), UID: q.GetUID()}, nil
}

func (p *propagation) bindingsFor(load loadSpec, refs []workv1alpha2.ObjectReference) ([]*workv1alpha2.ResourceBinding, []string) {
	bindings := make([]*workv1alpha2.ResourceBinding, len(refs))
	var keys []string
	for i, ref := range refs {
		clusters := load.clustersOf(i)
		bindings[i] = benchkit.BindingOf(ref, ref.Name+"-"+strings.ToLower(ref.Kind), fmt.Sprintf("bench-%s-%05d", load.Name, i), clusters)
		work := names.WorkName(ref.Kind, ref.Namespace, ref.Name)
		for _, c := range clusters {
			keys = append(keys, localplane.WorkKey(names.ExecutionNamespace(c), work))
		}
	}
	return bindings, keys
}

// progress prints how many of keys exist every 5s until done is closed.
func progress(label string, tracker *localplane.WorkTracker, keys []string, done <-chan struct{}) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	start := time.Now()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			logf("%s: %d/%d Works after %s", label, tracker.Seen(keys), len(keys), benchkit.Dur(time.Since(start)))
		}
	}
}

func readMem(ctl *benchkit.Controller, samples localplane.Metrics) memReading {
	m := memReading{HeapInuse: benchkit.Num(math.NaN()), HeapLive: benchkit.Num(math.NaN())}
	if pm, err := localplane.ReadMemory(ctl.Proc.Pid()); err == nil {
		m.RSS, m.PeakRSS = pm.RSS, pm.PeakRSS
	}
	if samples.Has("go_memstats_heap_inuse_bytes") {
		m.HeapInuse = benchkit.Num(samples.Sum("go_memstats_heap_inuse_bytes", nil))
	}
	if samples.Has("go_gc_heap_live_bytes") {
		m.HeapLive = benchkit.Num(samples.Sum("go_gc_heap_live_bytes", nil))
	}
	return m
}

func requestDelta(before, after localplane.Metrics, auditLog string, from, to int64) (requestCounts, error) {
	var rc requestCounts
	if before != nil && after != nil {
		rc.ClientByMethod = localplane.DeltaBy(before.SumBy(benchkit.RequestsMetric, "method", nil), after.SumBy(benchkit.RequestsMetric, "method", nil))
		for _, v := range rc.ClientByMethod {
			rc.ClientTotal += benchkit.Num(v)
		}
		rc.WorkWrites = localplane.DeltaBy(before.SumBy("binding_controller_work_writes_total", "operation", nil),
			after.SumBy("binding_controller_work_writes_total", "operation", nil))
	} else {
		rc.ClientTotal = benchkit.Num(math.NaN())
	}
	var err error
	rc.Audit, err = benchkit.ReadAudit(auditLog, benchkit.ControllerUser, from, to)
	return rc, err
}

// controllerRun measures one controller through one load on a fresh control plane.
func (p *propagation) controllerRun(ctx context.Context, spec benchkit.ControllerSpec, load loadSpec, resync bool) (*runResult, error) {
	label := spec.Label + " " + load.Name
	res := &runResult{Controller: spec.Label, Load: load, Works: load.works()}
	env, err := p.setUp(ctx, label, load, nil)
	if err != nil {
		return nil, err
	}
	defer env.stop()
	plane, kubeconfig, tracker := env.plane, env.kubeconfig, env.tracker
	if res.ManifestBytes, err = benchkit.ManifestBytes(env.templates[0]); err != nil {
		return nil, err
	}
	bindings, keys := p.bindingsFor(load, env.refs)

	res.Log = filepath.Join(plane.Dir, "controller.log")
	ctl, err := benchkit.StartController(ctx, spec, kubeconfig, res.Log)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ctl.Stop() }() // when a step fails; the normal end stops it below
	res.Command = ctl.Argv
	if err := p.canary(ctx, plane, tracker, load); err != nil {
		return nil, fmt.Errorf("%s: %w; log tail:\n%s", label, err, ctl.Proc.LogTail(20))
	}
	if _, err := ctl.WaitQuiet(ctx, plane.AuditLog, time.Second, 30*time.Second); err != nil && !errors.Is(err, benchkit.ErrTimeout) {
		return nil, err
	}
	before, err := ctl.Scrape(ctx)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", ctl.MetricsURL, err)
	}
	if before != nil && !before.Has(benchkit.RequestsMetric) {
		logf("%s: WARNING: %s does not expose %s; only the audit log counts requests", label, ctl.MetricsURL, benchkit.RequestsMetric)
	}
	settled, scrapes, err := ctl.SettleGC(ctx, 2, time.Minute)
	if err != nil && !errors.Is(err, benchkit.ErrTimeout) {
		return nil, err
	}
	res.MemBefore = readMem(ctl, settled)
	res.GCScrapes = scrapes
	if before, err = ctl.Scrape(ctx); err != nil {
		return nil, err
	}
	auditFrom := benchkit.AuditOffset(plane.AuditLog)
	cpuBefore, _ := localplane.ReadCPU(ctl.Proc.Pid())
	planeBefore, _ := localplane.ChildrenCPU("kube-apiserver", "etcd")

	logf("%s: creating %d bindings (%d at once) → %d Works", label, load.Bindings, p.creators, load.works())
	res.arrivalTiming, res.CreateElapsed, err = p.createAndTime(ctx, label, tracker, keys, len(bindings), p.creators,
		func(ctx context.Context, i int) error { return plane.Client.Create(ctx, bindings[i]) })
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", label, err)
	case res.TimedOut:
		res.Error = fmt.Sprintf("only %d of %d Works after %s", res.Seen, res.Works, p.phaseTimeout)
		logf("%s: TIMEOUT: %s", label, res.Error)
	default:
		logf("%s: every Work exists %s after the first binding was created (bindings created in %s): %.0f Works/s (10–90%%: %.0f/s)",
			label, benchkit.Dur(res.Elapsed), benchkit.Dur(res.CreateElapsed), res.WorksPerSec, res.SteadyWorksPerSec)
	}
	if err := ctl.Alive(); err != nil {
		return nil, err
	}
	quiet, qerr := ctl.WaitQuiet(ctx, plane.AuditLog, time.Second, time.Minute)
	if qerr != nil && !errors.Is(qerr, benchkit.ErrTimeout) {
		return nil, qerr
	}
	if cpuAfter, err := localplane.ReadCPU(ctl.Proc.Pid()); err == nil {
		res.CPUSeconds = cpuAfter - cpuBefore
	}
	if planeAfter, err := localplane.ChildrenCPU("kube-apiserver", "etcd"); err == nil {
		res.PlaneCPUSeconds = planeAfter - planeBefore
	}
	logf("%s: controller quiet %s later; it used %.1f CPU-seconds, kube-apiserver and etcd %.1f", label, benchkit.Dur(quiet), res.CPUSeconds, res.PlaneCPUSeconds)
	if load.Interpreted && !res.TimedOut {
		if err := checkShares(ctx, plane.Client, keys); err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
	}
	after, err := ctl.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	if res.Requests, err = requestDelta(before, after, plane.AuditLog, auditFrom, benchkit.AuditOffset(plane.AuditLog)); err != nil {
		return nil, err
	}
	if resync && !res.TimedOut {
		if res.Resync, err = p.resync(ctx, plane, ctl, bindings); err != nil {
			return nil, err
		}
	}
	settled, scrapes, err = ctl.SettleGC(ctx, 2, time.Minute)
	if err != nil && !errors.Is(err, benchkit.ErrTimeout) {
		return nil, err
	}
	res.MemAfter = readMem(ctl, settled)
	res.GCScrapes += scrapes
	logf("%s: memory with every Work cached: peak RSS %s, heap live %s (%d scrapes to see two GCs)",
		label, benchkit.Bytes(res.MemAfter.PeakRSS), benchkit.Bytes(res.MemAfter.HeapLive), scrapes)
	if pm, err := localplane.ReadMemory(ctl.Proc.Pid()); err == nil {
		res.PeakRSSEnd = pm.PeakRSS
	}
	t := time.Now()
	if err := ctl.Stop(); err != nil {
		logf("%s: %v", label, err)
	}
	logf("%s: controller stopped in %s", label, benchkit.Dur(time.Since(t)))
	if resync && !res.TimedOut {
		// +1: the canary binding is synced too.
		if res.Restart, err = p.restart(ctx, plane, spec, kubeconfig, filepath.Join(plane.Dir, "controller-restarted.log"), len(bindings)+1); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// restart starts a fresh controller process on the synced plane and counts what it asks
// of the API server until it has reconciled every binding (n) and gone quiet: the cost of
// a restart or a leader change, when nothing a fresh process can trust is in memory.
func (p *propagation) restart(ctx context.Context, plane *controlplane.Plane, spec benchkit.ControllerSpec, kubeconfig, logPath string, n int) (*resyncResult, error) {
	res := &resyncResult{Bindings: n}
	auditFrom := benchkit.AuditOffset(plane.AuditLog)
	start := time.Now()
	ctl, err := benchkit.StartController(ctx, spec, kubeconfig, logPath)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ctl.Stop() }()
	if ctl.MetricsURL != "" {
		err := benchkit.Poll(ctx, 100*time.Millisecond, p.phaseTimeout, "waiting for the restarted controller to reconcile every binding",
			func(ctx context.Context) (bool, error) {
				s, err := ctl.Scrape(ctx)
				if err != nil {
					return false, nil
				}
				return reconciles(s) >= float64(n), nil
			})
		if err != nil && !errors.Is(err, benchkit.ErrTimeout) {
			return nil, err
		}
	}
	res.Elapsed = time.Since(start)
	_, qerr := ctl.WaitQuiet(ctx, plane.AuditLog, time.Second, time.Minute)
	res.Quiet = qerr == nil
	after, err := ctl.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	var zero localplane.Metrics
	if after != nil {
		zero = localplane.Metrics{}
		res.Reconciles = benchkit.Num(reconciles(after))
	} else {
		res.Reconciles = benchkit.Num(math.NaN())
	}
	if res.Requests, err = requestDelta(zero, after, plane.AuditLog, auditFrom, benchkit.AuditOffset(plane.AuditLog)); err != nil {
		return nil, err
	}
	logf("restart: a fresh controller reconciled %.0f bindings in %s (from process start); its requests: %s",
		res.Reconciles, benchkit.Dur(res.Elapsed), methods(res.Requests.ClientByMethod))
	return res, nil
}

// stopPlane ends the run's watches, then the control plane, and says how long it took.
func (p *propagation) stopPlane(label string, plane *controlplane.Plane, cancel context.CancelFunc) {
	cancel()
	t := time.Now()
	if err := plane.Stop(); err != nil {
		logf("%s: stopping the control plane: %v", label, err)
	}
	logf("%s: control plane stopped in %s", label, benchkit.Dur(time.Since(t)))
}

// canary binds one small template of the load's kind and waits for its Work: the
// controller is up and its caches, the template kind's among them, are synced, whatever
// controller it is.
func (p *propagation) canary(ctx context.Context, plane *controlplane.Plane, tracker *localplane.WorkTracker, load loadSpec) error {
	ref, err := p.createTemplate(ctx, plane, load, benchkit.Deployment(canaryNamespace, "canary", 1, 0))
	if err != nil {
		return fmt.Errorf("creating the canary template: %w", err)
	}
	if err := plane.Client.Create(ctx, benchkit.BindingOf(ref, "canary-"+strings.ToLower(ref.Kind), "bench-canary", []string{benchkit.Member(0)})); err != nil {
		return fmt.Errorf("creating the canary binding: %w", err)
	}
	key := localplane.WorkKey(names.ExecutionNamespace(benchkit.Member(0)), names.WorkName(ref.Kind, canaryNamespace, "canary"))
	if _, err := tracker.WaitAll(ctx, []string{key}, 2*time.Minute); err != nil {
		return fmt.Errorf("waiting for the canary Work: %w", err)
	}
	return nil
}

// canaryWork creates the canary's rendered Work with the plain client and waits for it.
func (p *propagation) canaryWork(ctx context.Context, plane *controlplane.Plane, cl client.Client, tracker *localplane.WorkTracker) error {
	d := benchkit.Deployment(canaryNamespace, "canary", 1, 0)
	if err := plane.Client.Create(ctx, d); err != nil {
		return fmt.Errorf("creating the canary template: %w", err)
	}
	u, err := benchkit.ToUnstructured(d)
	if err != nil {
		return err
	}
	works, err := benchkit.RenderBinding(benchkit.Binding(d, "canary-deployment", "bench-canary", []string{benchkit.Member(0)}), u)
	if err != nil {
		return err
	}
	if err := cl.Create(ctx, works[0]); err != nil {
		return fmt.Errorf("creating the canary Work: %w", err)
	}
	if _, err := tracker.WaitAll(ctx, []string{localplane.WorkKey(works[0].Namespace, works[0].Name)}, 2*time.Minute); err != nil {
		return fmt.Errorf("waiting for the canary Work: %w", err)
	}
	return nil
}

// resync re-queues every binding without changing anything its Works depend on (an
// annotation on the binding, which the controller watches) and counts what the
// controller then asks of the API server.
func (p *propagation) resync(ctx context.Context, plane *controlplane.Plane, ctl *benchkit.Controller, bindings []*workv1alpha2.ResourceBinding) (*resyncResult, error) {
	res := &resyncResult{Bindings: len(bindings)}
	before, err := ctl.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	auditFrom := benchkit.AuditOffset(plane.AuditLog)
	logf("resync: patching annotation %s on %d bindings", resyncAnnotation, len(bindings))
	res.Elapsed, err = p.requeueAll(ctx, plane, ctl, bindings)
	switch {
	case errors.Is(err, benchkit.ErrTimeout):
		logf("resync: %v", err)
	case err != nil:
		return nil, err
	}
	_, qerr := ctl.WaitQuiet(ctx, plane.AuditLog, time.Second, time.Minute)
	res.Quiet = qerr == nil
	after, err := ctl.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	if before != nil {
		res.Reconciles = benchkit.Num(reconciles(after) - reconciles(before))
	} else {
		res.Reconciles = benchkit.Num(math.NaN())
	}
	if res.Requests, err = requestDelta(before, after, plane.AuditLog, auditFrom, benchkit.AuditOffset(plane.AuditLog)); err != nil {
		return nil, err
	}
	logf("resync: %.0f reconciles in %s; controller requests: %s", res.Reconciles, benchkit.Dur(res.Elapsed), methods(res.Requests.ClientByMethod))
	return res, nil
}

func reconciles(s localplane.Metrics) float64 {
	return s.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "resourcebinding"})
}

// requeueAll patches a fresh value of one annotation on every binding and waits until the
// controller has reconciled as many bindings (without metrics: until it is quiet).
func (p *propagation) requeueAll(ctx context.Context, plane *controlplane.Plane, ctl *benchkit.Controller,
	bindings []*workv1alpha2.ResourceBinding) (time.Duration, error) {
	before, err := ctl.Scrape(ctx)
	if err != nil {
		return 0, err
	}
	patch := client.RawPatch(types.MergePatchType,
		[]byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, resyncAnnotation, time.Now().Format(time.RFC3339Nano))))
	start := time.Now()
	err = benchkit.Parallel(ctx, len(bindings), p.creators, func(ctx context.Context, i int) error {
		rb := &workv1alpha2.ResourceBinding{}
		rb.Namespace, rb.Name = bindings[i].Namespace, bindings[i].Name
		return plane.Client.Patch(ctx, rb, patch)
	})
	if err != nil {
		return 0, fmt.Errorf("patching bindings: %w", err)
	}
	if before == nil {
		_, err := ctl.WaitQuiet(ctx, plane.AuditLog, time.Second, p.phaseTimeout)
		return time.Since(start), err
	}
	err = benchkit.Poll(ctx, 100*time.Millisecond, p.phaseTimeout, "waiting for every binding to be reconciled",
		func(ctx context.Context) (bool, error) {
			s, err := ctl.Scrape(ctx)
			if err != nil {
				return false, nil
			}
			return reconciles(s)-reconciles(before) >= float64(len(bindings)), nil
		})
	return time.Since(start), err
}

// ceilingRun times a plain client creating the Works the controller would write for
// load, concurrency at once, on a fresh control plane.
func (p *propagation) ceilingRun(ctx context.Context, load loadSpec, concurrency int, qps float64) (*ceilingResult, error) {
	label := "ceiling " + load.Name
	res := &ceilingResult{Load: load, Concurrency: concurrency, QPS: qps, Works: load.works()}
	plane, err := p.newPlane(label, loadSpec{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer p.stopPlane(label, plane, cancel)
	cfg, _, err := plane.AddUser(benchkit.CeilingUser, float32(qps), int(math.Max(qps*2, 1)))
	if err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: envtestutil.Scheme()})
	if err != nil {
		return nil, err
	}
	templates, refs, err := p.prepare(ctx, plane, load)
	if err != nil {
		return nil, err
	}
	bindings, keys := p.bindingsFor(load, refs)
	var works []*workv1alpha1.Work
	for i, rb := range bindings {
		u, err := benchkit.ToUnstructured(templates[i])
		if err != nil {
			return nil, err
		}
		w, err := benchkit.RenderBinding(rb, u)
		if err != nil {
			return nil, err
		}
		works = append(works, w...)
	}
	tracker, err := localplane.StartWorkTracker(ctx, plane.Metadata)
	if err != nil {
		return nil, err
	}
	// Warm up as the controller run's canary does: the first Work on a fresh API server
	// pays for setting up the resource's storage.
	if err := p.canaryWork(ctx, plane, cl, tracker); err != nil {
		return nil, err
	}
	auditFrom := benchkit.AuditOffset(plane.AuditLog)
	logf("%s: a plain client creates %d rendered Works, %d at once", label, len(works), concurrency)
	planeBefore, _ := localplane.ChildrenCPU("kube-apiserver", "etcd")
	res.arrivalTiming, _, err = p.createAndTime(ctx, label, tracker, keys, len(works), concurrency,
		func(ctx context.Context, i int) error { return cl.Create(ctx, works[i]) })
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", label, err)
	case !res.TimedOut:
		logf("%s: every Work exists after %s: %.0f Works/s (10–90%%: %.0f/s)", label, benchkit.Dur(res.Elapsed), res.WorksPerSec, res.SteadyWorksPerSec)
	}
	if planeAfter, err := localplane.ChildrenCPU("kube-apiserver", "etcd"); err == nil {
		res.PlaneCPUSeconds = planeAfter - planeBefore
	}
	time.Sleep(500 * time.Millisecond) // let the audit log catch up
	if res.Audit, err = benchkit.ReadAudit(plane.AuditLog, benchkit.CeilingUser, auditFrom, -1); err != nil {
		return nil, err
	}
	return res, nil
}

func methods(m map[string]float64) string {
	if m == nil {
		return "n/a (no metrics)"
	}
	if len(m) == 0 {
		return "none"
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func propagationNotes(p *propagation, concurrency int, qps float64) []string {
	notes := []string{
		"every load runs on a fresh control plane (kube-apiserver + etcd) with a fresh controller process; templates and namespaces are created before the clock starts",
		"time = first binding create sent → last expected Work seen by one metadata-only watch of all Works (the same watch times the ceiling)",
		fmt.Sprintf("ceiling = a plain controller-runtime client creating the same rendered Works (pkg/render), %d at once, client-side QPS %s, no controller running", concurrency, qpsText(qps)),
		"client-side counts are the controller's rest_client_requests_total (labels code, method, host: no resource); client-go counts a watch as a GET",
		"resync trigger: a merge patch of one annotation on every binding (the controller watches binding annotations); nothing a Work depends on changes",
		"restart: after the resync the controller is stopped and a fresh process started on the same objects; its requests are counted from process start (discovery, lists, watches included) until it has reconciled every binding and gone quiet",
		"webhook: the initial load, its resync and the restart again on a control plane with karmada-webhook's Work mutation in front (internal/testenv/workwebhook: every Work gets a random permanent ID, copied into its manifests, on CREATE and UPDATE), as on a real Karmada",
		"heap per cached Work = growth of go_gc_heap_live_bytes from before the bindings (templates already cached) to after the load, ÷ Works, each read once two GCs completed after the moment (the controller's /metrics is scraped until they have: every scrape allocates); it includes the bindings cached alongside (one per binding's clusters' Works)",
	}
	if p.audit {
		notes = append(notes, "by-resource counts come from the API server's audit log of the controller's own user (Metadata level, one line per request)")
	}
	return notes
}

func qpsText(qps float64) string {
	if qps < 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%g", qps)
}
