package soaker

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Metrics is a scrape of a Prometheus text endpoint (/metrics).
type Metrics string

var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// Sum adds up the samples of metric name whose labels include every pair of match
// (nil matches all), and tells whether there was any.
func (m Metrics) Sum(name string, match map[string]string) (float64, bool) {
	var sum float64
	found := false
	sc := bufio.NewScanner(strings.NewReader(string(m)))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		var labels string
		switch {
		case strings.HasPrefix(rest, "{"):
			end := strings.LastIndex(rest, "}")
			if end < 0 {
				continue
			}
			labels, rest = rest[1:end], rest[end+1:]
		case strings.HasPrefix(rest, " "):
		default:
			continue // another metric whose name starts with name
		}
		if !labelsMatch(labels, match) {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}

func labelsMatch(labels string, match map[string]string) bool {
	if len(match) == 0 {
		return true
	}
	got := map[string]string{}
	for _, kv := range labelPair.FindAllStringSubmatch(labels, -1) {
		got[kv[1]] = kv[2]
	}
	for k, v := range match {
		if got[k] != v {
			return false
		}
	}
	return true
}

// Value is Sum without the found flag.
func (m Metrics) Value(name string, match map[string]string) float64 {
	v, _ := m.Sum(name, match)
	return v
}

// Reconciles is controller_runtime_reconcile_total summed over both binding controllers
// and every result.
func (m Metrics) Reconciles() float64 {
	return m.Value("controller_runtime_reconcile_total", map[string]string{"controller": "resourcebinding"}) +
		m.Value("controller_runtime_reconcile_total", map[string]string{"controller": "clusterresourcebinding"})
}

// Scrape reads http://addr/metrics.
func Scrape(ctx context.Context, addr string) (Metrics, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET http://%s/metrics: %s", addr, resp.Status)
	}
	return Metrics(body), nil
}
