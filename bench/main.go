// SPDX-License-Identifier: Apache-2.0

// Command bench measures the binding controller against a real kube-apiserver and etcd
// (bin/k8s, 'make envtest'), with the controller-manager built from this tree and run as
// its own process:
//
//	go -C bench run . recovery    [flags]   # make bench-recovery
//	go -C bench run . propagation [flags]   # make bench
//	go -C bench run . vs-karmada --karmada <checkout> [flags]   # make bench-vs-karmada KARMADA=<checkout>
//
// Each compares runs made in the same invocation; the ratios are the headline, the
// absolute times depend on the machine (printed first, with every flag). Results go to
// an aligned table and to JSON (--json, default bench/results/<subcommand>.json).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/binding-controller/binding-controller/bench/propagation"
	"github.com/binding-controller/binding-controller/bench/recovery"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/bench/vskarmada"
)

func main() {
	subcommands := map[string]func(context.Context, []string) error{
		"recovery": recovery.Run, "propagation": propagation.Run, "vs-karmada": vskarmada.Run,
	}
	switch {
	case len(os.Args) < 2:
		usage()
		os.Exit(2)
	case os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help":
		usage()
		return
	case subcommands[os.Args[1]] == nil:
		fmt.Fprintf(os.Stderr, "bench: unknown subcommand %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	// envtest and client-go log through these; the benchmark prints what matters itself.
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := subcommands[os.Args[1]](ctx, os.Args[2:])
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

func usage() {
	fmt.Fprint(os.Stderr, `Usage: go -C bench run . <subcommand> [flags]

Subcommands:
  recovery      latency of a blocked cluster's new Work after its old Work is gone,
                with the Work watch and with the retry backoff only (make bench-recovery)
  propagation   initial propagation Works/s against a plain-client ceiling, requests per
                Work, no-op resync writes, fan-out, memory, Lua-revised against native
                CPU per Work, and the scale, urgent and flood scenarios (make bench)
  vs-karmada    Karmada's own binding controller (built from --karmada) and this one over the
                same fleet: propagation, CPU and memory per Work, restart, recovery, as
                ratios (make bench-vs-karmada KARMADA=<checkout>)

'go -C bench run . <subcommand> --help' lists the flags.
`)
}
