// SPDX-License-Identifier: Apache-2.0

//go:build unix

package render

import (
	"syscall"
	"testing"
	"time"
)

// reportCPUPerOp adds cpu-ns/op: the process's user and system CPU time per iteration,
// garbage collection included, from start. On a machine other work shares, ns/op (wall
// time) grows with the contention; CPU time is what a Work costs the controller.
func reportCPUPerOp(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
