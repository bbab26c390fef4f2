// SPDX-License-Identifier: Apache-2.0

package wait

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// An idle plane: kube-apiserver and etcd together under idleCores over a window of
// idleWindow. A restart timed while the plane still works off what came before it
// (etcd's compaction, its garbage collectors) would measure that too, and mostly at the
// full size; the wait rules it out, and the table shows how long it took.
const (
	idleWindow  = 2 * time.Second
	idleCores   = 0.15
	idleTimeout = 3 * time.Minute
)

// PlaneIdle waits until the plane's CPU use falls under idleCores (a counter that
// stops moving, not a fixed sleep) and returns how long that took; past
// idleTimeout it logs the plane's last rate and returns.
func PlaneIdle(ctx context.Context, what string) (time.Duration, error) {
	start := time.Now()
	last, err := localplane.ChildrenCPU("kube-apiserver", "etcd")
	if err != nil {
		return 0, err
	}
	lastAt, cores := time.Now(), math.NaN()
	err = Poll(ctx, idleWindow, idleTimeout, what+": waiting for an idle plane", func(context.Context) (bool, error) {
		if time.Since(lastAt) < idleWindow/2 {
			return false, nil // Poll's first call comes at once: no window to measure yet
		}
		now, err := localplane.ChildrenCPU("kube-apiserver", "etcd")
		if err != nil {
			return false, err
		}
		cores = (now - last) / time.Since(lastAt).Seconds()
		last, lastAt = now, time.Now()
		return cores < idleCores, nil
	})
	waited := time.Since(start)
	switch {
	case errors.Is(err, ErrTimeout):
		session.Logf("%s: the plane still used %.2f cores after %s; restarting anyway", what, cores, report.Dur(waited))
	case err != nil:
		return waited, err
	default:
		session.Logf("%s: the plane was idle (%.2f cores) after %s", what, cores, report.Dur(waited))
	}
	return waited, nil
}
