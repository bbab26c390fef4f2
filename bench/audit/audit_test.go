// SPDX-License-Identifier: Apache-2.0

package audit

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Server times come from the controller's completed requests of one kind only; other
// users, other kinds and earlier stages are not counted, and the counts agree.
func TestAuditServerTimesAreTheControllersCompletedRequestsOfOneKind(t *testing.T) {
	log := `{"stage":"RequestReceived","verb":"update","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"requestReceivedTimestamp":"2026-12-04T21:00:00.000000Z","stageTimestamp":"2026-12-04T21:00:00.000000Z"}
{"stage":"ResponseComplete","verb":"update","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"requestReceivedTimestamp":"2026-12-04T21:00:00.000000Z","stageTimestamp":"2026-12-04T21:00:00.012500Z"}
{"stage":"ResponseComplete","verb":"update","user":{"username":"other"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"requestReceivedTimestamp":"2026-12-04T21:00:00.000000Z","stageTimestamp":"2026-12-04T21:00:01.000000Z"}
{"stage":"ResponseComplete","verb":"create","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"requestReceivedTimestamp":"2026-12-04T21:00:00.000000Z","stageTimestamp":"2026-12-04T21:00:02.000000Z"}
{"stage":"ResponseComplete","verb":"update","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"requestReceivedTimestamp":"2026-12-04T21:00:05.000000Z","stageTimestamp":"2026-12-04T21:00:05.003000Z"}
`
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	times, err := ServerTimes(path, "c", 0, -1, "update works.work.karmada.io")
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{12500 * time.Microsecond, 3 * time.Millisecond}; len(times) != 2 || times[0] != want[0] || times[1] != want[1] {
		t.Errorf("server times %v, want %v", times, want)
	}
	counts, err := Read(path, "c", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if counts["update works.work.karmada.io"] != 2 || counts["create works.work.karmada.io"] != 1 || counts.Total() != 3 {
		t.Errorf("counts %v, want 2 updates and 1 create of works", counts)
	}
}

func TestCountsSummaries(t *testing.T) {
	c := Counts{"list works.work.karmada.io": 41, "get (non-resource /api)": 1, "get (non-resource /apis)": 1, "watch deployments.apps": 2}
	if got, want := c.ByVerb(), "discovery 2, list 41, watch 2"; got != want {
		t.Errorf("ByVerb = %q, want %q", got, want)
	}
	if got := (Counts{}).String(); got != "none" {
		t.Errorf("String of none = %q", got)
	}
	if got, want := c.String(), "list works.work.karmada.io 41, watch deployments.apps 2, get (non-resource /api) 1, get (non-resource /apis) 1"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

// The last request is the user's own, by when the server finished it: a later request of
// another user, or a stage before the end, does not move it.
func TestLastIsTheUsersLastCompletedRequest(t *testing.T) {
	log := `{"stage":"ResponseComplete","verb":"list","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:01.000000Z"}
{"stage":"ResponseStarted","verb":"watch","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:02.000000Z"}
{"stage":"ResponseStarted","verb":"get","user":{"username":"c"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:04.000000Z"}
{"stage":"ResponseComplete","verb":"create","user":{"username":"other"},"objectRef":{"resource":"works","apiGroup":"work.karmada.io"},"stageTimestamp":"2026-12-04T21:00:09.000000Z"}
`
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	last, err := Last(path, "c", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 12, 4, 21, 0, 2, 0, time.UTC); !last.Equal(want) {
		t.Errorf("Last = %s, want the watch's start %s", last, want)
	}
}
