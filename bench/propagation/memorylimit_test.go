// SPDX-License-Identifier: Apache-2.0

package propagation

import "testing"

// The limit is the full fleet's: 90% of 8 KiB for each of 102,000 Works, in MiB.
func TestMemoryLimitIsNinetyPercentOfTheFullSizesBudget(t *testing.T) {
	full := scaleLoad{Bindings: 10000, Clusters: 10, WideClusters: 2000}
	if got, want := memoryLimitFor(full), "GOMEMLIMIT=717MiB"; got != want {
		t.Errorf("memoryLimitFor(%v) = %q, want %q", full, got, want)
	}
}
