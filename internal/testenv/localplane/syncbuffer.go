// SPDX-License-Identifier: Apache-2.0

package localplane

import (
	"bytes"
	"sync"
)

// SyncBuffer collects output written from several goroutines (a child process's stdout
// and stderr), for assertions on logs and failure messages.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
