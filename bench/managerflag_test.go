// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

func TestManagerFlagReadsEveryFormTheManagerAccepts(t *testing.T) {
	args := []string{"--kube-api-qps=1000", "-cluster-sync-concurrency", "16", "--enable-pprof",
		"--profiling-bind-address", "127.0.0.1:6091", "--leader-elect=false"}
	for _, c := range []struct{ name, want string }{
		{"kube-api-qps", "1000"},
		{"cluster-sync-concurrency", "16"},
		{"enable-pprof", "true"},
		{"profiling-bind-address", "127.0.0.1:6091"},
		{"leader-elect", "false"},
		{"concurrent-resourcebinding-syncs", ""},
	} {
		if got := managerFlag(args, c.name); got != c.want {
			t.Errorf("managerFlag(%s) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := managerFlagInt(args, "cluster-sync-concurrency", 8); got != 16 {
		t.Errorf("managerFlagInt(cluster-sync-concurrency) = %d, want 16", got)
	}
	if got := managerFlagInt(args, "enable-pprof", 8); got != 8 {
		t.Errorf("managerFlagInt of a flag without a number = %d, want the default 8", got)
	}
}

// A controller run with --enable-pprof=false serves no profile: none is asked for.
func TestNoControllerProfileWhenPprofIsOff(t *testing.T) {
	for _, args := range [][]string{
		{"--enable-pprof=false", "--profiling-bind-address=127.0.0.1:1"},
		{"--profiling-bind-address=127.0.0.1:1"},
	} {
		taken, err := profileController(context.Background(), args, time.Second, filepath.Join(t.TempDir(), "p"))
		if taken || err != nil {
			t.Errorf("profileController(%q) = %v, %v; want no profile and no error", args, taken, err)
		}
	}
}
