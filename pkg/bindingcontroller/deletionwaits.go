// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// deletionWaits tracks, per cluster, the bindings whose Work there waits for an earlier
// Work of the same name to finish deleting (workapply.Blocked), for the blocked-bindings gauge.
type deletionWaits struct {
	mu        sync.Mutex
	byCluster map[string]sets.Set[string]
}

func newDeletionWaits() *deletionWaits {
	return &deletionWaits{byCluster: map[string]sets.Set[string]{}}
}

// record sets the clusters that block binding now; every other cluster no longer does.
func (b *deletionWaits) record(binding string, clusters sets.Set[string]) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for cluster, bindings := range b.byCluster {
		if !bindings.Has(binding) || clusters.Has(cluster) {
			continue
		}
		bindings.Delete(binding)
		if bindings.Len() == 0 {
			// No entry and no series for a cluster that blocks nothing: clusters come and
			// go, and each would otherwise stay here, and on /metrics at 0, for good.
			delete(b.byCluster, cluster)
			blockedBindingsGauge.DeleteLabelValues(cluster)
			continue
		}
		blockedBindingsGauge.WithLabelValues(cluster).Set(float64(bindings.Len()))
	}
	for cluster := range clusters {
		bindings, ok := b.byCluster[cluster]
		if !ok {
			bindings = sets.New[string]()
			b.byCluster[cluster] = bindings
		}
		if !bindings.Has(binding) {
			bindings.Insert(binding)
			blockedBindingsGauge.WithLabelValues(cluster).Set(float64(bindings.Len()))
		}
	}
}

func blockedClusters(results []workapply.Result) sets.Set[string] {
	clusters := sets.New[string]()
	for _, r := range results {
		if r.Outcome == workapply.Blocked {
			clusters.Insert(r.Cluster)
		}
	}
	return clusters
}
