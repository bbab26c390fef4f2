// SPDX-License-Identifier: Apache-2.0

package propagation

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/binding-controller/binding-controller/bench/audit"
	"github.com/binding-controller/binding-controller/bench/controller"
	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/internal/testenv/controlplane"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// meter reads what the controller asked of the API server and the CPU it and the plane
// used from the moment it starts to the moment it stops.
type meter struct {
	plane     *controlplane.Plane
	metrics   localplane.Metrics
	auditFrom int64
	cpu       float64
	planeCPU  map[string]float64
}

// usage is what a meter read.
type usage struct {
	requests requestCounts
	// reconciles is how many bindings the controller reconciled, NaN without metrics.
	reconciles           float64
	cpu, apiserver, etcd float64
	after                localplane.Metrics
}

func (u usage) planeCPU() float64 { return u.apiserver + u.etcd }

// startMeter starts a meter of ctl on plane. With ctl nil it meters a controller not
// started yet, from nothing: a fresh process's requests count from its start.
func startMeter(ctx context.Context, plane *controlplane.Plane, ctl *controller.Controller) (*meter, error) {
	m := &meter{plane: plane, metrics: localplane.Metrics{}}
	if ctl != nil {
		var err error
		if m.metrics, err = ctl.Scrape(ctx); err != nil {
			return nil, fmt.Errorf("scraping %s: %w", ctl.MetricsURL, err)
		}
		m.cpu, _ = localplane.ReadCPU(ctl.Proc.Pid())
	}
	m.auditFrom = audit.Offset(plane.AuditLog)
	m.planeCPU, _ = localplane.ChildrenCPUByComm("kube-apiserver", "etcd")
	return m, nil
}

// stop reads ctl's and the plane's CPU, then ctl's metrics and the audit log.
func (m *meter) stop(ctx context.Context, ctl *controller.Controller) (usage, error) {
	var u usage
	if cpu, err := localplane.ReadCPU(ctl.Proc.Pid()); err == nil {
		u.cpu = cpu - m.cpu
	}
	if plane, err := localplane.ChildrenCPUByComm("kube-apiserver", "etcd"); err == nil {
		u.apiserver = plane["kube-apiserver"] - m.planeCPU["kube-apiserver"]
		u.etcd = plane["etcd"] - m.planeCPU["etcd"]
	}
	var err error
	if u.after, err = ctl.Scrape(ctx); err != nil {
		return u, err
	}
	u.reconciles = math.NaN()
	if m.metrics != nil && u.after != nil {
		u.reconciles = controller.Reconciles(u.after) - controller.Reconciles(m.metrics)
	}
	u.requests, err = requestDelta(m.metrics, u.after, m.plane.AuditLog, m.auditFrom, audit.Offset(m.plane.AuditLog))
	return u, err
}

func requestDelta(before, after localplane.Metrics, auditLog string, from, to int64) (requestCounts, error) {
	var rc requestCounts
	if before != nil && after != nil {
		rc.ClientByMethod = localplane.DeltaBy(before.SumBy(controller.RequestsMetric, "method", nil), after.SumBy(controller.RequestsMetric, "method", nil))
		for _, v := range rc.ClientByMethod {
			rc.ClientTotal += report.Num(v)
		}
		rc.WorkWrites = localplane.DeltaBy(before.SumBy("binding_controller_work_writes_total", "operation", nil),
			after.SumBy("binding_controller_work_writes_total", "operation", nil))
	} else {
		rc.ClientTotal = report.Num(math.NaN())
	}
	var err error
	rc.Audit, err = audit.Read(auditLog, audit.ControllerUser, from, to)
	return rc, err
}

func readMem(ctl *controller.Controller, samples localplane.Metrics) memReading {
	m := memReading{HeapInuse: report.Num(math.NaN()), HeapLive: report.Num(math.NaN())}
	if pm, err := localplane.ReadMemory(ctl.Proc.Pid()); err == nil {
		m.RSS, m.PeakRSS = pm.RSS, pm.PeakRSS
	}
	if samples.Has("go_memstats_heap_inuse_bytes") {
		m.HeapInuse = report.Num(samples.Sum("go_memstats_heap_inuse_bytes", nil))
	}
	if samples.Has("go_gc_heap_live_bytes") {
		m.HeapLive = report.Num(samples.Sum("go_gc_heap_live_bytes", nil))
	}
	return m
}

// methods formats counts by method (or operation), sorted.
func methods(m map[string]float64) string {
	if m == nil {
		return "n/a (no metrics)"
	}
	if len(m) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
