// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	dto "github.com/prometheus/client_model/go"
)

// Served returns the names of the series families exposes, as Prometheus stores them: a
// histogram as its _bucket, _sum and _count series, a summary as itself (its quantiles),
// _sum and _count, anything else under its own name.
func Served(families []*dto.MetricFamily) map[string]bool {
	served := map[string]bool{}
	for _, f := range families {
		name := f.GetName()
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			served[name+"_bucket"] = true
			served[name+"_sum"] = true
			served[name+"_count"] = true
		case dto.MetricType_SUMMARY:
			served[name] = true
			served[name+"_sum"] = true
			served[name+"_count"] = true
		default:
			served[name] = true
		}
	}
	return served
}
