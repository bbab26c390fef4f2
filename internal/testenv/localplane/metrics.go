// SPDX-License-Identifier: Apache-2.0

package localplane

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape of a /metrics endpoint, flattened to the samples of the text
// format: a histogram or summary appears as its _bucket/quantile, _sum and _count series.
type Metrics model.Vector

// Scrape fetches and parses url (a /metrics endpoint).
func Scrape(ctx context.Context, url string) (Metrics, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	var out Metrics
	for _, family := range families {
		samples, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{}, family)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", url, err)
		}
		out = append(out, Metrics(samples)...)
	}
	return out, nil
}

// Has tells whether any sample is called name.
func (m Metrics) Has(name string) bool {
	for _, s := range m {
		if string(s.Metric[model.MetricNameLabel]) == name {
			return true
		}
	}
	return false
}

// Sum adds the samples called name whose labels include every pair of match (nil
// matches all).
func (m Metrics) Sum(name string, match map[string]string) float64 {
	var total float64
	for _, s := range m {
		if matches(s, name, match) {
			total += float64(s.Value)
		}
	}
	return total
}

// SumBy is Sum grouped by the value of label.
func (m Metrics) SumBy(name, label string, match map[string]string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m {
		if matches(s, name, match) {
			out[string(s.Metric[model.LabelName(label)])] += float64(s.Value)
		}
	}
	return out
}

func matches(s *model.Sample, name string, match map[string]string) bool {
	if string(s.Metric[model.MetricNameLabel]) != name {
		return false
	}
	for k, v := range match {
		if string(s.Metric[model.LabelName(k)]) != v {
			return false
		}
	}
	return true
}

// DeltaBy is after − before per key (keys of either side), without the keys that did
// not change.
func DeltaBy(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	for k, v := range before {
		if _, ok := after[k]; !ok {
			out[k] = -v
		}
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}
