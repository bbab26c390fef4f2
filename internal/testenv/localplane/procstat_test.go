// SPDX-License-Identifier: Apache-2.0

package localplane

import (
	"os"
	"os/exec"
	"testing"
	"time"
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

func TestChildrenCPUByCommSplitsChildrenByCommand(t *testing.T) {
	busy := exec.Command("yes")
	idle := exec.Command("sleep", "60")
	for _, c := range []*exec.Cmd{busy, idle} {
		if err := c.Start(); err != nil {
			t.Skipf("cannot start %s: %v", c.Path, err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	}
	// CPU time is counted in clock ticks: wait until the busy child has used one.
	deadline := time.Now().Add(time.Minute)
	for {
		byComm, err := ChildrenCPUByComm("yes", "sleep", "etcd")
		if err != nil {
			t.Fatal(err)
		}
		if byComm["yes"] > 0 {
			if _, ok := byComm["sleep"]; !ok {
				t.Errorf("ChildrenCPUByComm = %v, want an entry for the sleep child", byComm)
			}
			if _, ok := byComm["etcd"]; ok {
				t.Errorf("ChildrenCPUByComm = %v, want no entry for a command with no child", byComm)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the busy child used no CPU in a minute: %v", byComm)
		}
		time.Sleep(10 * time.Millisecond)
	}
	total, err := ChildrenCPU("yes", "sleep")
	if err != nil {
		t.Fatal(err)
	}
	if total <= 0 {
		t.Errorf("ChildrenCPU(yes, sleep) = %v, want the busy child's CPU in the sum", total)
	}
}
