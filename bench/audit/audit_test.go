// SPDX-License-Identifier: Apache-2.0

package audit

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Only the user's requests count, a watch when it starts and any other request when it
// completes; the last is the user's own, by when the server finished it: a later request
// of another user, or a stage before the end, does not move it.
func TestReadCountsTheUsersRequestsAndTheLastOfThem(t *testing.T) {
	log := `{"stage":"RequestReceived","verb":"update","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:00.000000Z"}
{"stage":"ResponseComplete","verb":"update","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:00.012500Z"}
{"stage":"ResponseComplete","verb":"patch","user":{"username":"c"},"objectRef":{"resource":"resourcebindings","apiGroup":"work.karmada.io","subresource":"status"},"stageTimestamp":"2026-12-04T21:00:01.000000Z"}
{"stage":"ResponseStarted","verb":"watch","user":{"username":"c"},"objectRef":{"resource":"configmaps"},"stageTimestamp":"2026-12-04T21:00:02.000000Z"}
{"stage":"ResponseStarted","verb":"get","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:04.000000Z"}
{"stage":"ResponseComplete","verb":"create","user":{"username":"other"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:09.000000Z"}
{"stage":"ResponseComplete","verb":"get","user":{"username":"c"},"requestURI":"/api","stageTimes
`
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	counts, last, err := Read(path, "c", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{"update works.work.karmada.io": 1, "patch resourcebindings.work.karmada.io/status": 1, "watch configmaps": 1}
	if len(counts) != len(want) || counts.Total() != 3 {
		t.Errorf("counts %v, want %v", counts, want)
	}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("counts %v, want %v", counts, want)
		}
	}
	if at := time.Date(2026, 12, 4, 21, 0, 2, 0, time.UTC); !last.Equal(at) {
		t.Errorf("last = %s, want the watch's start %s", last, at)
	}
}

func TestCountsSummaries(t *testing.T) {
	c := Counts{"list works.work.karmada.io": 41, "get (non-resource /api)": 1, "get (non-resource /apis)": 1, "watch deployments.apps": 2,
		"create events": 3, "patch resourcebindings.work.karmada.io/status": 1}
	if got, want := c.ByVerb(), "create 3, discovery 2, list 41, patch 1, watch 2"; got != want {
		t.Errorf("ByVerb = %q, want %q", got, want)
	}
	if c.Match("", "discovery") != 2 || c.Match("", "get") != 0 || c.Writes("") != 4 || c.Writes("works") != 0 || c.Reads("works") != 41 {
		t.Errorf("discovery %d, get %d, writes %d, Work writes %d, Work reads %d; want 2, 0, 4, 0, 41",
			c.Match("", "discovery"), c.Match("", "get"), c.Writes(""), c.Writes("works"), c.Reads("works"))
	}
}

// First finds the user's first request of that verb and resource, a watch by its start,
// past requests of other users and other resources.
func TestFirstFindsTheUsersFirstRequestOfAKey(t *testing.T) {
	log := `{"stage":"ResponseStarted","verb":"watch","user":{"username":"other"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:00.000000Z"}
{"stage":"ResponseStarted","verb":"watch","user":{"username":"c"},"objectRef":{"resource":"resourcebindings","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:01.000000Z"}
{"stage":"RequestReceived","verb":"watch","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:01.500000Z"}
{"stage":"ResponseStarted","verb":"watch","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:02.000000Z"}
{"stage":"ResponseStarted","verb":"watch","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:03.000000Z"}
`
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	at, err := First(path, "c", 0, "watch works.work.karmada.io")
	if want := time.Date(2026, 12, 4, 21, 0, 2, 0, time.UTC); err != nil || !at.Equal(want) {
		t.Errorf("First = %s, %v; want %s", at, err, want)
	}
	if at, err := First(path, "c", 0, "list works.work.karmada.io"); err != nil || !at.IsZero() {
		t.Errorf("First of a request never made = %s, %v; want zero", at, err)
	}
}
