// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"bytes"
	"io"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/binding-controller/binding-controller/internal/testenv/soaker"
)

// soakDurationEnv sets how long the in-process soak's random load runs (a Go duration).
// The default, 30s, keeps 'make test' fast; CI can run SOAK_DURATION=2m (or 'make soak'
// for the full 10m).
const soakDurationEnv = "SOAK_DURATION"

var _ = Describe("Soak", func() {
	// hack/soak's soak, in-process and short: its own control plane with member1..5, the
	// built manager and the execution simulator; random creates, reschedules and deletes
	// of bindings, clusters blocked and unblocked, and the manager restarted by SIGTERM or
	// SIGKILL (every 20–40 s; in a soak under 2 m, every duration/5–duration/3 so that it
	// restarts a few times). Everything must converge within 60 s of the load stopping,
	// with no leftover or duplicated Work, and the manager must not leak (see
	// internal/testenv/soaker).
	It("converges with no leftover or duplicated Work and no leak after SOAK_DURATION of random load, blocked clusters and restarts", func() {
		duration := 30 * time.Second
		if v := os.Getenv(soakDurationEnv); v != "" {
			d, err := time.ParseDuration(v)
			Expect(err).NotTo(HaveOccurred(), soakDurationEnv)
			duration = d
		}
		opts := soaker.Options{Duration: duration, Binary: binary, WorkDir: GinkgoT().TempDir(),
			Seed: uint64(GinkgoRandomSeed())}
		if duration < 2*time.Minute {
			opts.RestartMin, opts.RestartMax = duration/5, duration/3
		}
		var out bytes.Buffer
		opts.Out = io.MultiWriter(&out, GinkgoWriter)
		res, err := soaker.Run(ctx, opts)
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("soak", out.String())
		Expect(res.Failures).To(BeEmpty(), func() string {
			log, _ := os.ReadFile(res.LogPath)
			tail := string(log)
			if len(tail) > 40000 {
				tail = tail[len(tail)-40000:]
			}
			return "manager log (tail):\n" + tail + "\n" + strings.Join(res.Failures, "\n")
		})
		Expect(res.Counts.SIGTERMs + res.Counts.SIGKILLs).To(BeNumerically(">=", 1))
	})
})
