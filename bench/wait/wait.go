// SPDX-License-Identifier: Apache-2.0

// Package wait is the benchmark's one way of waiting for a condition: a wait that runs
// out of time is ErrTimeout, which a measurement may record rather than fail on.
package wait

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return parent.Err()
			}
			return fmt.Errorf("%s: %w after %s", what, ErrTimeout, timeout)
		case <-t.C:
		}
	}
}
