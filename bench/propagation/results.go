// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"fmt"
	"math"
	"time"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/workload"
)

const (
	templateNamespace = "bench"
	canaryNamespace   = "bench-canary"
	resyncAnnotation  = "bench.binding-controller.io/resync"
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
	// Kind is the templates' kind: Deployment ("" too) or workload.LuaKind, a custom kind
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

func (l loadSpec) lua() bool { return l.Kind == workload.LuaKind }

func (l loadSpec) works() int { return l.Bindings * l.PerBinding }

func (l loadSpec) String() string {
	return fmt.Sprintf("%d bindings × %d clusters = %d Works", l.Bindings, l.PerBinding, l.works())
}

func (l loadSpec) clustersOf(i int) []string {
	if l.PerBinding >= l.Clusters {
		return workload.Members(l.Clusters)
	}
	out := make([]string, l.PerBinding)
	for j := range out {
		out[j] = workload.Member((i + j) % l.Clusters)
	}
	return out
}

func templateName(i int) string { return fmt.Sprintf("app-%05d", i) }

// memReading is the controller's memory at one moment.
type memReading struct {
	RSS       int64      `json:"rssBytes"`
	PeakRSS   int64      `json:"peakRSSBytes"`
	HeapInuse report.Num `json:"heapInuseBytes"` // go_memstats_heap_inuse_bytes
	// HeapLive is go_gc_heap_live_bytes (live heap as the last GC marked it), NaN without it.
	HeapLive report.Num `json:"heapLiveBytes"`
}

// requestCounts is what the controller asked of the API server during a phase.
type requestCounts struct {
	// ClientByMethod is the delta of the controller's rest_client_requests_total by
	// method (nil when it has no metrics). client-go counts a watch as a GET.
	ClientByMethod map[string]float64 `json:"clientByMethod,omitempty"`
	ClientTotal    report.Num         `json:"clientTotal"`
	// Audit counts the same requests as the API server's audit log saw them, by verb and
	// resource.
	Audit audit.Counts `json:"audit,omitempty"`
	// WorkWrites is the delta of binding_controller_work_writes_total by operation.
	WorkWrites map[string]float64 `json:"workWrites,omitempty"`
}

type resyncResult struct {
	Bindings   int           `json:"bindings"`
	Reconciles report.Num    `json:"reconciles"`
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
	SteadyWorksPerSec report.Num `json:"steadyWorksPerSec"`
}

type ceilingResult struct {
	Load        loadSpec `json:"load"`
	Concurrency int      `json:"concurrency"`
	QPS         float64  `json:"qps"`
	Works       int      `json:"works"`
	arrivalTiming
	Audit audit.Counts `json:"audit,omitempty"`
	// PlaneCPUSeconds is what kube-apiserver and etcd used while the Works were created.
	PlaneCPUSeconds float64 `json:"controlPlaneCpuSeconds"`
}

type propagationReport struct {
	*session.Session
	Controllers []string                `json:"controllers"`
	Runs        map[string][]*runResult `json:"runs"` // by controller label
	// Initial holds every run of the initial load by controller (--repeat), Ceilings every
	// ceiling run, in order.
	Initial  map[string][]*runResult `json:"initialRuns"`
	Ceilings []*ceilingResult        `json:"ceilings,omitempty"`
	Figures  []report.Figure         `json:"figures"`
	Notes    []string                `json:"notes"`
	Finished time.Time               `json:"finished"`
}
