// SPDX-License-Identifier: Apache-2.0

//go:build !unix

package render

import (
	"testing"
	"time"
)

func reportCPUPerOp(*testing.B, time.Duration) {}

func processCPU() time.Duration { return 0 }
