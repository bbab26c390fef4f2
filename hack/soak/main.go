// SPDX-License-Identifier: Apache-2.0

// Command soak ('make soak') runs the binding-controller-manager binary under random load
// against a local control plane for a while — bindings created, rescheduled and deleted
// across member1..member5, clusters blocked and unblocked, the manager restarted by
// SIGTERM or SIGKILL every 20–40 s — then checks that everything converges within 60 s
// of the load stopping and that the manager does not leak goroutines or memory. See
// package internal/testenv/soaker for the exact rules. It exits 0 on PASS, 1 on FAIL or when it
// could not run, 130 on Ctrl-C.
//
//	go run ./hack/soak [--duration 10m] [--seed N] [--manager bin/binding-controller-manager] [-- manager flags...]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	"github.com/binding-controller/binding-controller/internal/testenv/soaker"
)

func main() {
	// envtest logs through controller-runtime; its chatter is not wanted here.
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	// An own flag set: controller-runtime registers --kubeconfig on flag.CommandLine.
	fs := flag.NewFlagSet("soak", flag.ExitOnError)
	duration := fs.Duration("duration", 10*time.Minute, "how long the random load runs")
	seed := fs.Uint64("seed", 0, "seed of the random choices (0: from the clock; the summary prints it)")
	manager := fs.String("manager", "", "controller-manager binary to run (default: build one from this tree)")
	members := fs.String("members", strings.Join(soaker.DefaultMembers, ","), "comma-separated member cluster names")
	initial := fs.Int("initial-bindings", 30, "bindings created and converged before the load; the leak baseline is taken then")
	maxBindings := fs.Int("max-bindings", 60, "most live bindings during the load")
	converge := fs.Duration("convergence-timeout", 60*time.Second, "how long everything may take to converge after the load")
	restartMin := fs.Duration("restart-min", 20*time.Second, "shortest time between manager restarts")
	restartMax := fs.Duration("restart-max", 40*time.Second, "longest time between manager restarts")
	workDir := fs.String("work-dir", "", "directory for the kubeconfig, the manager log and the built binary (default: a new temporary one)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: soak [flags] [-- controller-manager flags]\n\nFlags:\n")
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])

	ctx, cancel := localplane.CancelOnSignal("soak")
	defer cancel()

	res, err := soaker.Run(ctx, soaker.Options{
		Duration:           *duration,
		Members:            strings.FieldsFunc(*members, func(r rune) bool { return r == ',' || r == ' ' }),
		Binary:             *manager,
		ManagerArgs:        fs.Args(),
		Seed:               *seed,
		InitialBindings:    *initial,
		MaxBindings:        *maxBindings,
		ConvergenceTimeout: *converge,
		RestartMin:         *restartMin,
		RestartMax:         *restartMax,
		WorkDir:            *workDir,
		Out:                os.Stdout,
	})
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		fmt.Fprintln(os.Stderr, "soak interrupted")
		os.Exit(130)
	case err != nil:
		fmt.Fprintf(os.Stderr, "soak: %v\n", err)
		os.Exit(1)
	case !res.Passed():
		os.Exit(1)
	}
}
