// SPDX-License-Identifier: Apache-2.0

package recent

import (
	"testing"
	"time"
)

func TestAUIDIsForgottenAfterItsTimeAndSwept(t *testing.T) {
	clock := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	u := NewUIDs(10 * time.Minute)
	u.now = func() time.Time { return clock }

	u.Add("a")
	u.Add("")
	if !u.Has("a") || u.Has("b") || u.Has("") {
		t.Fatal("a should be held, b and the empty UID not")
	}
	clock = clock.Add(10*time.Minute + time.Second)
	if u.Has("a") {
		t.Fatal("a is held past its time")
	}
	u.Add("b")
	if u.Len() != 1 || !u.Has("b") {
		t.Fatalf("%d UIDs held, want only b: expired ones must be swept", u.Len())
	}
}
