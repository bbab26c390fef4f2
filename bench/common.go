// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/bench/benchkit"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// common holds the flags both subcommands share.
type common struct {
	jsonPath    string
	manager     string
	managerArgs string
	vs          string
	keep        bool
}

func (c *common) register(fs *flag.FlagSet, sub string) {
	fs.StringVar(&c.jsonPath, "json", filepath.Join("bench", "results", sub+".json"),
		"where to write the results as JSON (relative: to the repository root)")
	fs.StringVar(&c.manager, "manager", "",
		"controller-manager binary to measure (default: built from this tree into the work directory)")
	fs.StringVar(&c.managerArgs, "manager-args", "",
		"extra controller-manager flags, space-separated, appended to the defaults (e.g. \"--kube-api-qps=1000\")")
	fs.StringVar(&c.vs, "vs", "",
		"also run this command through the same load, for a side-by-side figure; {kubeconfig} is replaced by the "+
			"kubeconfig path, {metrics} and {probe} by free 127.0.0.1 addresses for its metrics and readiness endpoints")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (controller logs, audit logs, kubeconfigs)")
}

// session is what every run starts from.
type session struct {
	Machine benchkit.Machine  `json:"machine"`
	Flags   map[string]string `json:"flags"`
	Started time.Time         `json:"started"`
	Dir     string            `json:"-"`
	Binary  string            `json:"-"`
}

// parseFlags parses args into fs, printing usage on error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments %q\n", fs.Args())
		return errUsage
	}
	return nil
}

// start prints the machine and flags, makes the work directory and builds the manager.
func (c *common) start(ctx context.Context, fs *flag.FlagSet, sub string) (*session, error) {
	s := &session{Machine: benchkit.DescribeMachine(ctx), Flags: benchkit.FlagValues(fs), Started: time.Now()}
	fmt.Printf("bench %s — %s\n", sub, s.Started.Format(time.RFC3339))
	s.Machine.Print(os.Stdout)
	benchkit.PrintFlags(os.Stdout, s.Flags)
	if s.Machine.NProc <= 2 {
		fmt.Println("note:    few cores — the API server, etcd, the controller and this program share them; read ratios, not absolute times")
	}
	dir, err := os.MkdirTemp("", "bench-"+sub+"-")
	if err != nil {
		return nil, err
	}
	s.Dir = dir
	if c.manager != "" {
		if s.Binary, err = filepath.Abs(c.manager); err != nil {
			return nil, err
		}
		if _, err := os.Stat(s.Binary); err != nil {
			return nil, fmt.Errorf("--manager: %w", err)
		}
	} else {
		fmt.Println("building cmd/binding-controller-manager from this tree (CGO_ENABLED=0)…")
		if s.Binary, err = localplane.BuildManager(ctx, dir); err != nil {
			return nil, err
		}
	}
	fmt.Printf("work dir: %s\n\n", dir)
	return s, nil
}

// finish removes the work directory unless --keep.
func (c *common) finish(s *session) {
	if s == nil || s.Dir == "" {
		return
	}
	if c.keep {
		fmt.Printf("work directory kept: %s\n", s.Dir)
		return
	}
	_ = os.RemoveAll(s.Dir)
}

func (c *common) extraArgs() []string { return strings.Fields(c.managerArgs) }

// logf prints a progress line with the time of day.
func logf(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
