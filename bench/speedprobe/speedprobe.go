// SPDX-License-Identifier: Apache-2.0

// Package speedprobe times the same fixed work on every run: the yardstick for ratios
// of figures measured minutes apart on a shared machine.
package speedprobe

import (
	"crypto/sha256"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Speed is the same fixed work timed on every run, so two runs' probes differ
// only by what the machine gave this process: the yardstick for ratios of figures
// measured minutes apart. CPU is a compute loop that fits in cache; Memory is a chain
// of dependent reads that misses it, which moves when a neighbour on the host takes
// the memory bus or the shared cache and the compute loop does not notice.
type Speed struct {
	CPU    time.Duration `json:"cpuNs"`
	Memory time.Duration `json:"memoryNs"`
}

const (
	probeChainEntries = 32 << 20 // 128 MiB of uint32: far beyond any last-level cache
	probeChainSteps   = 2 << 20
)

// The probes' inputs are built once, outside the timed loops, so that only the probes
// themselves are timed.
var (
	probeInputsOnce sync.Once
	probeChain      []uint32
	probeBlock      []byte
)

// Measure times each probe five times and keeps the median.
func Measure() Speed {
	probeInputsOnce.Do(func() {
		probeChain = randomCycle(probeChainEntries)
		probeBlock = make([]byte, 1<<20)
		for i := range probeBlock {
			probeBlock[i] = byte(i)
		}
	})
	return Speed{CPU: medianTime(5, hashProbe), Memory: medianTime(5, chaseProbe)}
}

func medianTime(n int, probe func()) time.Duration {
	times := make([]time.Duration, n)
	for i := range times {
		start := time.Now()
		probe()
		times[i] = time.Since(start)
	}
	slices.Sort(times)
	if n%2 == 0 {
		return (times[n/2-1] + times[n/2]) / 2
	}
	return times[n/2]
}

// hashProbe hashes 64 MiB with SHA-256.
func hashProbe() {
	h := sha256.New()
	for range 64 {
		h.Write(probeBlock)
	}
	_ = h.Sum(nil)
}

// chaseProbe follows probeChainSteps links of the random cycle: each read's address
// is the previous read's value, so no prefetcher or out-of-order core can hide a miss.
func chaseProbe() {
	next := uint32(0)
	for range probeChainSteps {
		next = probeChain[next]
	}
	probeSink = next
}

var probeSink uint32 //nolint:unused // written only, so the chase cannot be optimized away

// randomCycle is a single cycle through n entries (Sattolo's shuffle), with a fixed
// seed so every run chases the same chain.
func randomCycle(n int) []uint32 {
	c := make([]uint32, n)
	for i := range c {
		c[i] = uint32(i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := n - 1; i > 0; i-- {
		j := r.IntN(i)
		c[i], c[j] = c[j], c[i]
	}
	return c
}
