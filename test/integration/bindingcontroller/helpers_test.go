// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

var (
	deployment = testkit.Deployment
	binding    = testkit.Binding
)

var workKey = testkit.WorkKey

// observer reads through the suite's uncached client.
func observer() testkit.Observer { return testkit.Observer{Ctx: ctx, Client: k8s} }

func getWork(key types.NamespacedName) *workv1alpha1.Work { return observer().Work(key) }
func workState(key types.NamespacedName) func() string    { return observer().WorkState(key) }
func eventsOn(namespace, kind, name string) func() []string {
	return observer().EventsOn(namespace, kind, name)
}

// failureReasons maps each failure reason of cluster's
// binding_controller_cluster_sync_failures_total series to its count.
func failureReasons(cluster string) map[string]float64 {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "binding_controller_cluster_sync_failures_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["cluster"] == cluster {
				out[labels["reason"]] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// metricValue reads one series of the manager's metrics, the one whose label is value
// (any series when label is ""): a counter's or gauge's value, a histogram's sample
// count; -1 when there is none.
func metricValue(name, label, value string) float64 {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			matches := label == ""
			for _, l := range m.GetLabel() {
				matches = matches || (l.GetName() == label && l.GetValue() == value)
			}
			switch {
			case !matches:
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			default:
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

// karmadaSyncs counts the syncs Karmada's binding_sync_work_duration_seconds observed
// with result (0 before the first).
func karmadaSyncs(result string) float64 {
	return max(0, metricValue("binding_sync_work_duration_seconds", "result", result))
}
