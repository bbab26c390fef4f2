package benchkit

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/hack/localplane"
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

// Exited tells whether the process has ended (and how).
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.Done():
		return true, p.Err()
	default:
		return false, nil
	}
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
func (p *Process) LogTail(n int) string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// WaitHTTP200 polls url until it answers 200, the process exits, or timeout passes.
func (p *Process) WaitHTTP200(ctx context.Context, url string, timeout time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	return Poll(ctx, 100*time.Millisecond, timeout, "waiting for "+url, func(ctx context.Context) (bool, error) {
		if exited, err := p.Exited(); exited {
			return false, fmt.Errorf("the process exited (%v); log tail:\n%s", err, p.LogTail(20))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// ProcMemory is what /proc/<pid>/status says about a process's memory, in bytes.
type ProcMemory struct {
	PeakRSS int64 `json:"peakRSSBytes"` // VmHWM
	RSS     int64 `json:"rssBytes"`     // VmRSS
}

// ReadProcMemory reads VmHWM and VmRSS of pid.
func ReadProcMemory(pid int) (ProcMemory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcMemory{}, err
	}
	defer f.Close()
	var m ProcMemory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "VmHWM:":
			m.PeakRSS = kb * 1024
		case "VmRSS:":
			m.RSS = kb * 1024
		}
	}
	return m, sc.Err()
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every Linux
// architecture Go supports without cgo to ask sysconf.
const clockTicks = 100

// ReadProcCPU returns the user+system CPU seconds pid has used.
func ReadProcCPU(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces; the fields after its closing paren are fixed.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64) // field 14 of stat
	stime, err2 := strconv.ParseFloat(f[12], 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return (utime + stime) / clockTicks, nil
}

// ControlPlaneCPU returns the user+system CPU seconds the kube-apiserver and etcd
// processes this program started have used: what a load cost the API server.
func ControlPlaneCPU() (float64, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	self := strconv.Itoa(os.Getpid())
	total := 0.0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(stat)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		comm, rest := s[open+1:closing], strings.Fields(s[closing+1:])
		if (comm != "kube-apiserver" && comm != "etcd") || len(rest) < 2 || rest[1] != self {
			continue
		}
		cpu, err := ReadProcCPU(pid)
		if err != nil {
			continue
		}
		total += cpu
	}
	return total, nil
}
