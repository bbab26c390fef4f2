// SPDX-License-Identifier: Apache-2.0

// Command demo ('make demo') plays the case the binding controller exists for — one
// disconnected member cluster must not block the others — against a local control plane
// and the built controller-manager, narrated as a timeline; with --story rollout ('make
// demo-rollout') it plays a staged rollout instead: a good image stage by stage, a bad
// one halted at the canary and rolled back. It exits 0 when every step behaved, 1 when
// one did not, and 130 on Ctrl-C; it always stops what it started.
//
//	go run ./hack/demo [--story seed|rollout] [--manager bin/binding-controller-manager] [-- manager flags...]
package main

import (
	"context"
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
	storyName := fs.String("story", "seed", "what to play: seed (a disconnected member) or rollout (a staged rollout)")
	manager := fs.String("manager", "bin/binding-controller-manager", "path of the controller-manager binary ('make build')")
	logPath := fs.String("log", "", "file for the controller-manager's log (default: a new file in the temp directory)")
	timeout := fs.Duration("step-timeout", 30*time.Second, "how long each step may take")
	pause := fs.Duration("pause", time.Second, "pause between the acts of the story (0: straight through)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: demo [flags] [-- controller-manager flags]\n\nFlags:\n")
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])

	stories := map[string]func(context.Context, io.Writer, demoscript.Options) error{
		"seed": demoscript.Run, "rollout": demoscript.RunRollout,
	}
	play, ok := stories[*storyName]
	if !ok {
		fmt.Fprintf(os.Stderr, "demo: unknown --story %q: seed or rollout\n", *storyName)
		os.Exit(2)
	}

	ctx, cancel := localplane.CancelOnSignal("demo")
	defer cancel()

	err := play(ctx, os.Stdout, demoscript.Options{
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
