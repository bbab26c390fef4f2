// SPDX-License-Identifier: Apache-2.0

package localplane

import "syscall"

// childProcAttr puts the child in its own process group, and has the kernel send it
// SIGTERM should the parent die without stopping it (say, on SIGKILL).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
