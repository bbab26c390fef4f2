// SPDX-License-Identifier: Apache-2.0

// Command bench measures the binding controller against a real kube-apiserver and etcd
// (bin/k8s, 'make envtest'), with the controller-manager built from this tree and run as
// its own process, and Karmada's beside it when asked; its usage lists the subcommands
// (bench/scenario). The ratios are the headline; the absolute times depend on the
// machine (printed first, with every flag). Results go to an aligned table and to JSON
// (--json, default bench/results/<subcommand>.json).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/binding-controller/binding-controller/bench/scenario"
	"github.com/binding-controller/binding-controller/bench/session"
)

func main() {
	if len(os.Args) < 2 || !slices.Contains([]string{"propagation", "vs-karmada", "rollout"}, os.Args[1]) {
		fmt.Fprint(os.Stderr, `Usage: go -C bench run . <subcommand> [flags]

Subcommands:
  propagation   this project's controller: propagation against a plain-client ceiling,
                no-op resync, restart, fan-out, memory, behind the Work webhook (make
                bench); a blocked cluster's recovery, Work watch or backoff only (make
                bench-recovery)
  vs-karmada    Karmada's binding controller (built from --karmada) and this one over the
                same fleet, as ratios; without --karmada, this one alone
  rollout       a staged rollout of every binding against the same change under no
                policy: CPU per sync, each stage's time less the soak (make bench-rollout)

'go -C bench run . <subcommand> --help' lists the flags.
`)
		os.Exit(2)
	}
	// envtest and client-go log through these; the benchmark prints what matters itself.
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := scenario.Run(ctx, os.Args[1], os.Args[2:])
	switch {
	case err == nil, errors.Is(err, session.ErrHelp):
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "bench: interrupted")
		os.Exit(130)
	case errors.Is(err, session.ErrUsage):
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}
