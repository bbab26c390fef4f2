// SPDX-License-Identifier: Apache-2.0

package benchkit

import (
	"fmt"
	"os"
	"time"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// Process is a controller running as a child process (localplane.Process), its output
// going to a log file.
type Process struct {
	*localplane.Process
	LogPath string
}

// StartProcess runs argv[0] with argv[1:], output to logPath.
func StartProcess(argv []string, logPath string) (*Process, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	proc, err := localplane.StartProcess(argv[0], argv[1:], f, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	go func() {
		<-proc.Done()
		f.Close()
	}()
	return &Process{Process: proc, LogPath: logPath}, nil
}

// StartShell runs command through /bin/sh with exec, so that the process measured is the
// command itself, not a shell.
func StartShell(command, logPath string) (*Process, error) {
	return StartProcess([]string{"/bin/sh", "-c", "exec " + command}, logPath)
}

// Stop sends SIGTERM, waits up to grace, then kills. Only having to kill it is an error:
// how the process exited on SIGTERM is not this program's concern.
func (p *Process) Stop(grace time.Duration) error {
	if err := p.Process.Stop(grace); err != nil && err != p.Err() {
		return err
	}
	return nil
}

// LogTail returns the last n lines of the process log.
func (p *Process) LogTail(n int) string { return localplane.LogTail(p.LogPath, n) }
