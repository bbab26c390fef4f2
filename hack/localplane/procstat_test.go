package localplane

import (
	"os"
	"testing"
)

func TestReadMemoryAndCPUOfThisProcess(t *testing.T) {
	mem, err := ReadMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if mem.RSS <= 0 || mem.PeakRSS < mem.RSS {
		t.Errorf("ReadMemory = %+v, want 0 < RSS <= PeakRSS", mem)
	}
	if _, err := ReadCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}
