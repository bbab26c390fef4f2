// SPDX-License-Identifier: Apache-2.0

package localplane

import (
	"os"
	"slices"

	"github.com/prometheus/procfs"
)

// Memory is what /proc/<pid>/status says about a process's memory, in bytes.
type Memory struct {
	PeakRSS int64 `json:"peakRSSBytes"` // VmHWM
	RSS     int64 `json:"rssBytes"`     // VmRSS
}

// ReadMemory reads VmHWM and VmRSS of pid.
func ReadMemory(pid int) (Memory, error) {
	proc, err := procfs.NewProc(pid)
	if err != nil {
		return Memory{}, err
	}
	status, err := proc.NewStatus()
	if err != nil {
		return Memory{}, err
	}
	return Memory{PeakRSS: int64(status.VmHWM), RSS: int64(status.VmRSS)}, nil
}

// ReadCPU returns the user+system CPU seconds pid has used.
func ReadCPU(pid int) (float64, error) {
	proc, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	stat, err := proc.Stat()
	if err != nil {
		return 0, err
	}
	return stat.CPUTime(), nil
}

// ChildrenCPU returns the user+system CPU seconds used by this program's child
// processes whose command is one of comms. Processes that end while it reads are skipped.
func ChildrenCPU(comms ...string) (float64, error) {
	byComm, err := ChildrenCPUByComm(comms...)
	total := 0.0
	for _, v := range byComm {
		total += v
	}
	return total, err
}

// ChildrenCPUByComm is ChildrenCPU for each of comms apart, read in one pass so that
// the figures are of the same moment.
func ChildrenCPUByComm(comms ...string) (map[string]float64, error) {
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	byComm := make(map[string]float64, len(comms))
	for _, proc := range procs {
		stat, err := proc.Stat()
		if err != nil || stat.PPID != self || !slices.Contains(comms, stat.Comm) {
			continue
		}
		byComm[stat.Comm] += stat.CPUTime()
	}
	return byComm, nil
}
