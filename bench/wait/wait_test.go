// SPDX-License-Identifier: Apache-2.0

package wait

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A condition met returns nil, its error comes back with what was waited for, and a
// wait out of time is ErrTimeout, which IgnoreTimeout drops; a cancelled caller gets its
// own context's error.
func TestPollSaysWhyAWaitEnded(t *testing.T) {
	ctx := context.Background()
	calls := 0
	if err := Poll(ctx, time.Millisecond, time.Minute, "third call", func(context.Context) (bool, error) { calls++; return calls == 3, nil }); err != nil || calls != 3 {
		t.Errorf("Poll = %v after %d calls, want nil after 3", err, calls)
	}
	boom := errors.New("boom")
	if err := Poll(ctx, time.Millisecond, time.Minute, "failing", func(context.Context) (bool, error) { return false, boom }); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "failing: ") {
		t.Errorf("Poll with a failing condition = %v", err)
	}
	never := func(context.Context) (bool, error) { return false, nil }
	if err := Poll(ctx, time.Millisecond, 20*time.Millisecond, "never", never); !errors.Is(err, ErrTimeout) || IgnoreTimeout(err) != nil {
		t.Errorf("Poll out of time = %v, want ErrTimeout", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := Poll(cancelled, time.Millisecond, time.Minute, "cancelled", never); !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Errorf("Poll with its caller cancelled = %v, want context.Canceled", err)
	}
}
