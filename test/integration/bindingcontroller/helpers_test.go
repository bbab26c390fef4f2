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

// karmadaSyncs is how many syncs Karmada's binding_sync_work_duration_seconds holds with
// the given result, as the controller's metrics endpoint serves it.
func karmadaSyncs(result string) float64 {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "binding_sync_work_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return 0
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
