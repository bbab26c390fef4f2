// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"fmt"
	"time"
)

// Settled polls count until it has not moved for quiet, and returns where it stopped.
// It replaces "sleep, then expect quiet": on a busy machine a fixed sleep may end while a
// sync is still on its way, and the quiet that follows then sees it. Here a slow machine
// only makes the wait longer. It fails when count is still moving after timeout.
func Settled[T comparable](count func() T, quiet, timeout time.Duration) (T, error) {
	const poll = 50 * time.Millisecond
	last, since := count(), time.Now()
	deadline := since.Add(timeout)
	for time.Now().Before(deadline) {
		time.Sleep(poll)
		if v := count(); v != last {
			last, since = v, time.Now()
			continue
		}
		if time.Since(since) >= quiet {
			return last, nil
		}
	}
	return last, fmt.Errorf("still moving after %s (last value %v)", timeout, last)
}
