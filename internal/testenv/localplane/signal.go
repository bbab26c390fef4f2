// SPDX-License-Identifier: Apache-2.0

package localplane

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// CancelOnSignal returns a context that ends at the first SIGINT or SIGTERM, saying so on
// stderr as "<signal>: stopping the <what> and cleaning up…". The control plane and the
// manager run in their own process groups, so a Ctrl-C reaches only this process, which
// then stops them in order; further Ctrl-Cs only say that this is still going on.
func CancelOnSignal(what string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "\n%s: stopping the %s and cleaning up…\n", sig, what)
		cancel()
		for range sigs {
			fmt.Fprintln(os.Stderr, "still cleaning up (stopping the controller-manager and the control plane)…")
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel()
	}
}
