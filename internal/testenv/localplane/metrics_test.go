// SPDX-License-Identifier: Apache-2.0

package localplane

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The bench and the soak read counters by label and a histogram's _count as a series of
// its own, the way the text format shows them.
func TestScrapeFlattensFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	writes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "work_writes_total"}, []string{"operation"})
	latency := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sync_seconds", Buckets: []float64{0.1, 1}})
	reg.MustRegister(writes, latency)
	writes.WithLabelValues("create").Add(3)
	writes.WithLabelValues("update").Add(2)
	latency.Observe(0.5)
	latency.Observe(2)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	m, err := Scrape(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Sum("work_writes_total", nil); got != 5 {
		t.Errorf("Sum(work_writes_total) = %v, want 5", got)
	}
	if got := m.Sum("work_writes_total", map[string]string{"operation": "create"}); got != 3 {
		t.Errorf("Sum(work_writes_total{operation=create}) = %v, want 3", got)
	}
	if got := m.SumBy("work_writes_total", "operation", nil); got["create"] != 3 || got["update"] != 2 || len(got) != 2 {
		t.Errorf("SumBy(work_writes_total, operation) = %v", got)
	}
	if got := m.Sum("sync_seconds_count", nil); got != 2 {
		t.Errorf("Sum(sync_seconds_count) = %v, want 2", got)
	}
	if got := m.Sum("sync_seconds_bucket", map[string]string{"le": "1"}); got != 1 {
		t.Errorf("Sum(sync_seconds_bucket{le=1}) = %v, want 1", got)
	}
	if m.Has("sync_seconds") || !m.Has("sync_seconds_sum") {
		t.Errorf("a histogram is its _bucket, _sum and _count series")
	}
}
