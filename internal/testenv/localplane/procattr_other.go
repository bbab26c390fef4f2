// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package localplane

import "syscall"

// childProcAttr puts the child in its own process group.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
