// SPDX-License-Identifier: Apache-2.0

// Package benchkit is the shared machinery of the benchmark (bench/): the controller-manager built
// from this tree and run as a child process, its /metrics and peak RSS, the audit log of
// the benchmarked clients, and the aligned table and JSON every run prints. The control
// plane itself is internal/testenv/controlplane.
package benchkit

import "strings"

// User names of the audited clients: the controller under test and the plain client of
// the ceiling run. The benchmark's own requests (setup, observation) run as envtest's
// admin and are not audited.
const (
	ControllerUser = "bench-controller"
	CeilingUser    = "bench-ceiling"
)

// Substitute replaces {key} placeholders in s.
func Substitute(s string, values map[string]string) string {
	for k, v := range values {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}
