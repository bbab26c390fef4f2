// SPDX-License-Identifier: Apache-2.0

// Command demo ('make demo') plays the case the binding controller exists for — one
// disconnected member cluster must not block the others — against a local control plane
// and the built controller-manager, narrated as a timeline. It exits 0 when every step
// behaved, 1 when one did not, and 130 on Ctrl-C; it always stops what it started.
//
//	go run ./hack/demo [--manager bin/binding-controller-manager] [-- manager flags...]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/binding-controller/binding-controller/internal/testenv/demoscript"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

func main() {
	// envtest logs through controller-runtime; its chatter is not wanted here.
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	// An own flag set: controller-runtime registers --kubeconfig on flag.CommandLine.
	fs := flag.NewFlagSet("demo", flag.ExitOnError)
	manager := fs.String("manager", "bin/binding-controller-manager", "path of the controller-manager binary ('make build')")
	logPath := fs.String("log", "", "file for the controller-manager's log (default: a new file in the temp directory)")
	timeout := fs.Duration("step-timeout", 30*time.Second, "how long each step may take")
	pause := fs.Duration("pause", time.Second, "pause between the acts of the story (0: straight through)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: demo [flags] [-- controller-manager flags]\n\nFlags:\n")
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])

	ctx, cancel := localplane.CancelOnSignal("demo")
	defer cancel()

	err := demoscript.Run(ctx, os.Stdout, demoscript.Options{
		Manager: *manager, ManagerArgs: fs.Args(), LogPath: *logPath, StepTimeout: *timeout, Pause: *pause,
	})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "demo interrupted")
		os.Exit(130)
	case errors.Is(err, demoscript.ErrStepFailed):
		fmt.Fprintf(os.Stderr, "\ndemo failed: %v\n", err)
		os.Exit(1)
	default:
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}
