// SPDX-License-Identifier: Apache-2.0

package cpuprofile

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// A controller run with --enable-pprof=false serves no profile: none is asked for.
func TestNoControllerProfileWhenPprofIsOff(t *testing.T) {
	for _, args := range [][]string{
		{"--enable-pprof=false", "--profiling-bind-address=127.0.0.1:1"},
		{"--profiling-bind-address=127.0.0.1:1"},
	} {
		taken, err := Controller(context.Background(), args, time.Second, filepath.Join(t.TempDir(), "p"))
		if taken || err != nil {
			t.Errorf("Controller(%q) = %v, %v; want no profile and no error", args, taken, err)
		}
	}
}
