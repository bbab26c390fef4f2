// SPDX-License-Identifier: Apache-2.0

package names

import "testing"

func TestWorkName(t *testing.T) {
	cases := []struct {
		kind, namespace, name, want string
	}{
		{"Deployment", "default", "nginx", "nginx-687f7fb96f"},
	}
	for _, c := range cases {
		if got := WorkName(c.kind, c.namespace, c.name); got != c.want {
			t.Errorf("WorkName(%q, %q, %q) = %q, want %q", c.kind, c.namespace, c.name, got, c.want)
		}
	}
}

func TestWorkNameDistinguishesScopeAndKind(t *testing.T) {
	seen := map[string]string{}
	for _, c := range [][3]string{
		{"Deployment", "default", "nginx"},
		{"Service", "default", "nginx"},
		{"Deployment", "other", "nginx"},
		{"ClusterRole", "", "nginx"},
	} {
		got := WorkName(c[0], c[1], c[2])
		if prev, ok := seen[got]; ok {
			t.Fatalf("%v and %s both map to %s", c, prev, got)
		}
		seen[got] = c[0] + "/" + c[1]
	}
}

func TestWorkNameLowersAndReplacesColons(t *testing.T) {
	got := WorkName("ClusterRole", "", "System:Controller")
	if want := "system.controller-"; got[:len(want)] != want {
		t.Fatalf("WorkName = %q, want prefix %q", got, want)
	}
}

func TestValidateClusterName(t *testing.T) {
	for _, ok := range []string{"member1", "a", "us-east-1"} {
		if err := ValidateClusterName(ok); err != nil {
			t.Errorf("ValidateClusterName(%q) = %v, want nil", ok, err)
		}
	}
	long := make([]byte, 60)
	for i := range long {
		long[i] = 'a'
	}
	for _, bad := range []string{"", "Member1", "member_1", string(long)} {
		if err := ValidateClusterName(bad); err == nil {
			t.Errorf("ValidateClusterName(%q) = nil, want an error", bad)
		}
	}
}

func TestClusterOfExecutionNamespace(t *testing.T) {
	if c, ok := ClusterOfExecutionNamespace("karmada-es-member1"); !ok || c != "member1" {
		t.Fatalf("got %q %v", c, ok)
	}
	for _, ns := range []string{"default", "karmada-es-"} {
		if _, ok := ClusterOfExecutionNamespace(ns); ok {
			t.Fatalf("%q is not an execution namespace", ns)
		}
	}
}
