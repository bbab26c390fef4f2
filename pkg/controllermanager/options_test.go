// SPDX-License-Identifier: Apache-2.0

package controllermanager

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func parse(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	o := NewOptions()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	return o, o.Validate()
}

func TestDefaultsMatchKarmada(t *testing.T) {
	o, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if o.ResourceBindingWorkers != 5 || o.RateLimiter.BaseDelay != 5*time.Millisecond ||
		o.RateLimiter.MaxDelay != 1000*time.Second || o.RateLimiter.QPS != 10 || o.RateLimiter.BucketSize != 100 ||
		!o.LeaderElect {
		t.Fatalf("defaults differ from Karmada's: %+v", o)
	}
	enabled, _ := o.EnabledControllers()
	if !enabled["resourcebinding"] || !enabled["clusterresourcebinding"] {
		t.Fatalf("default controllers %v, want both", enabled)
	}
}

func TestControllersFlag(t *testing.T) {
	cases := map[string]map[string]bool{
		"*":                         {"resourcebinding": true, "clusterresourcebinding": true},
		"*,-clusterresourcebinding": {"resourcebinding": true, "clusterresourcebinding": false},
		"clusterresourcebinding":    {"resourcebinding": false, "clusterresourcebinding": true},
	}
	for value, want := range cases {
		o, err := parse(t, "--controllers="+value)
		if err != nil {
			t.Fatalf("%s: %v", value, err)
		}
		got, _ := o.EnabledControllers()
		for name, on := range want {
			if got[name] != on {
				t.Errorf("--controllers=%s: %s enabled=%v, want %v", value, name, got[name], on)
			}
		}
	}
}

func TestBadFlagValuesAreRejectedWithTheirNames(t *testing.T) {
	cases := map[string][]string{
		`unknown controller "binding"`:                        {"--controllers=binding"},
		"enables no controller":                               {"--controllers=-resourcebinding,-clusterresourcebinding"},
		"--concurrent-resourcebinding-syncs must be positive": {"--concurrent-resourcebinding-syncs=0"},
		"--cluster-sync-concurrency must be positive":         {"--cluster-sync-concurrency=-1"},
		"--rate-limiter-base-delay":                           {"--rate-limiter-base-delay=2s", "--rate-limiter-max-delay=1s"},
		"--rate-limiter-qps must be positive":                 {"--rate-limiter-qps=0"},
		"--leader-elect-renew-deadline":                       {"--leader-elect-renew-deadline=20s"},
		`invalid boolean value "maybe" for -leader-elect`:     {"--leader-elect=maybe"},
	}
	for want, args := range cases {
		_, err := parse(t, args...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want one containing %q", args, err, want)
		}
	}
	if _, err := parse(t, "--leader-elect=false", "--leader-elect-renew-deadline=20s"); err != nil {
		t.Errorf("lease timings only matter with leader election: %v", err)
	}
}

func TestProfilingIsServedOnlyWhenEnabled(t *testing.T) {
	o, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.pprofBindAddress(); got != "0" {
		t.Fatalf("profiling served at %q by default, want off", got)
	}
	if o, err = parse(t, "--enable-pprof", "--profiling-bind-address=127.0.0.1:6061"); err != nil {
		t.Fatal(err)
	}
	if got := o.pprofBindAddress(); got != "127.0.0.1:6061" {
		t.Fatalf("profiling served at %q, want 127.0.0.1:6061", got)
	}
}
