// SPDX-License-Identifier: Apache-2.0

// Package wait is the benchmark's one way of waiting for a condition: a wait that runs
// out of time is ErrTimeout, which a measurement may record rather than fail on.
package wait

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	kwait "k8s.io/apimachinery/pkg/util/wait"

	"github.com/binding-controller/binding-controller/bench/report"
	"github.com/binding-controller/binding-controller/bench/session"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// ErrTimeout marks a wait that ran out of time (the Work tracker's waits too).
var ErrTimeout = localplane.ErrTimeout

// IgnoreTimeout is err, or nil when err is only a timeout.
func IgnoreTimeout(err error) error {
	if errors.Is(err, ErrTimeout) {
		return nil
	}
	return err
}

// Poll calls cond every interval until it returns true or an error, or timeout passes.
func Poll(parent context.Context, interval, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	err := kwait.PollUntilContextTimeout(parent, interval, timeout, true, cond)
	switch {
	case err == nil:
		return nil
	case parent.Err() != nil:
		return parent.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w after %s", what, ErrTimeout, timeout)
	}
	return fmt.Errorf("%s: %w", what, err)
}

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
// stops moving, not a fixed sleep) and logs how long that took; past idleTimeout it
// logs the plane's last rate and returns.
func PlaneIdle(ctx context.Context, what string) error {
	start := time.Now()
	last, err := localplane.ChildrenCPU("kube-apiserver", "etcd")
	if err != nil {
		return err
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
	switch waited := report.Dur(time.Since(start)); {
	case errors.Is(err, ErrTimeout):
		session.Logf("%s: the plane still used %.2f cores after %s; restarting anyway", what, cores, waited)
	case err != nil:
		return err
	default:
		session.Logf("%s: the plane was idle (%.2f cores) after %s", what, cores, waited)
	}
	return nil
}
