package main

import (
	"crypto/sha256"
	"math/rand/v2"
	"sort"
	"sync"
	"time"
)

// machineSpeed is the same fixed work timed on every run, so two runs' probes differ
// only by what the machine gave this process: the yardstick for ratios of figures
// measured minutes apart. CPU is a compute loop that fits in cache; Memory is a chain
// of dependent reads that misses it, which moves when a neighbour on the host takes
// the memory bus or the shared cache and the compute loop does not notice.
type machineSpeed struct {
	CPU    time.Duration `json:"cpuNs"`
	Memory time.Duration `json:"memoryNs"`
}

const (
	probeChainEntries = 32 << 20 // 128 MiB of uint32: far beyond any last-level cache
	probeChainSteps   = 2 << 20
)

var (
	probeChainOnce sync.Once
	probeChain     []uint32
)

// speedProbe times each probe five times and keeps the median.
func speedProbe() machineSpeed {
	probeChainOnce.Do(func() { probeChain = randomCycle(probeChainEntries) })
	return machineSpeed{CPU: median5(hashProbe), Memory: median5(chaseProbe)}
}

func median5(probe func()) time.Duration {
	times := make([]time.Duration, 5)
	for i := range times {
		start := time.Now()
		probe()
		times[i] = time.Since(start)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return times[len(times)/2]
}

// hashProbe hashes 64 MiB with SHA-256.
func hashProbe() {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	h := sha256.New()
	for range 64 {
		h.Write(buf)
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

var probeSink uint32

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
