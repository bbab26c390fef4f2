// SPDX-License-Identifier: Apache-2.0

package benchkit

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// Parallel runs fn(ctx, i) for i in 0..n-1 with at most workers at once. The first error
// cancels the rest and is returned.
func Parallel(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	if workers < 1 {
		workers = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for w := 0; w < workers && w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
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

// ErrTimeout marks a wait that ran out of time (the Work tracker's waits too).
var ErrTimeout = localplane.ErrTimeout

// SteadyRate is the rate between the 10th and the 90th percentile of arrival times, in
// items per second: the throughput without the ramp-up and the tail (NaN under 10 items).
func SteadyRate(times []time.Time) float64 {
	n := len(times)
	if n < 10 {
		return math.NaN()
	}
	lo, hi := times[n/10], times[n*9/10-1]
	if !hi.After(lo) {
		return math.NaN()
	}
	return float64(n*9/10-1-n/10) / hi.Sub(lo).Seconds()
}
