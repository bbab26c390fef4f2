// SPDX-License-Identifier: Apache-2.0

package controller

import "testing"

func TestFlagReadsEveryFormTheManagerAccepts(t *testing.T) {
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
		if got := Flag(args, c.name); got != c.want {
			t.Errorf("Flag(%s) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := flagInt(args, "cluster-sync-concurrency", 8); got != 16 {
		t.Errorf("flagInt(cluster-sync-concurrency) = %d, want 16", got)
	}
	if got := flagInt(args, "enable-pprof", 8); got != 8 {
		t.Errorf("flagInt of a flag without a number = %d, want the default 8", got)
	}
	if got := Concurrency(args); got != 5*16 {
		t.Errorf("Concurrency = %d, want 5 × 16", got)
	}
}
