// SPDX-License-Identifier: Apache-2.0

// Package recent remembers object UIDs for a while: long enough to outlast any informer
// cache lag, short enough to stay small. The controller uses it to tell a stale cached
// copy of something it already finished with from the real thing.
package recent

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// UIDs is a set of UIDs, each kept for a fixed time after it was added. It is safe for
// concurrent use.
type UIDs struct {
	keep time.Duration
	now  func() time.Time

	mu        sync.Mutex
	added     map[types.UID]time.Time
	lastPrune time.Time
}

// NewUIDs returns an empty set that keeps each UID for keep.
func NewUIDs(keep time.Duration) *UIDs {
	return &UIDs{keep: keep, now: time.Now, added: map[types.UID]time.Time{}}
}

// Add remembers uid from now on; the empty UID is ignored.
func (u *UIDs) Add(uid types.UID) {
	if uid == "" {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	// Expired entries go at most once a minute: a sweep per Add would cost O(n) each.
	if now.Sub(u.lastPrune) > time.Minute {
		for id, at := range u.added {
			if now.Sub(at) > u.keep {
				delete(u.added, id)
			}
		}
		u.lastPrune = now
	}
	u.added[uid] = now
}

// Has tells whether uid was added less than the keep time ago.
func (u *UIDs) Has(uid types.UID) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	at, ok := u.added[uid]
	return ok && u.now().Sub(at) <= u.keep
}

// Len is how many UIDs are held, expired ones not yet swept included.
func (u *UIDs) Len() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.added)
}
