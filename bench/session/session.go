// SPDX-License-Identifier: Apache-2.0

// Package session is what every benchmark subcommand starts from: the flags they share,
// the machine and the flags printed first (absolute times depend on both), a work
// directory, and the controller-manager built from this tree.
package session

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// ErrUsage and ErrHelp end a subcommand whose flags were wrong or asked for help; the
// flag package has printed what to say.
var (
	ErrUsage = errors.New("usage")
	ErrHelp  = errors.New("help")
)

// Common holds the flags every subcommand has.
type Common struct {
	JSONPath    string
	manager     string
	managerArgs string
	keep        bool
}

// Register adds the common flags to fs; sub names the subcommand's default JSON file.
func (c *Common) Register(fs *flag.FlagSet, sub string) {
	fs.StringVar(&c.JSONPath, "json", filepath.Join("bench", "results", sub+".json"),
		"where to write the results as JSON (relative: to the repository root)")
	fs.StringVar(&c.manager, "manager", "",
		"controller-manager binary to measure (default: built from this tree into the work directory)")
	fs.StringVar(&c.managerArgs, "manager-args", "",
		"extra controller-manager flags, space-separated, appended to the defaults (e.g. \"--kube-api-qps=1000\")")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (controller logs, audit logs, kubeconfigs)")
}

// ManagerArgs are the --manager-args, split.
func (c *Common) ManagerArgs() []string { return strings.Fields(c.managerArgs) }

// Session is what every run starts from; reports embed it.
type Session struct {
	Machine Machine           `json:"machine"`
	Flags   map[string]string `json:"flags"`
	Started time.Time         `json:"started"`
	Dir     string            `json:"-"`
	Binary  string            `json:"-"`
	keep    bool
}

// Parse parses args into fs, printing usage on error.
func Parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ErrHelp
		}
		return ErrUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments %q\n", fs.Args())
		return ErrUsage
	}
	return nil
}

// Start prints the machine and flags, makes the work directory and builds the manager
// (or takes --manager). The caller ends the session with Finish, also on error.
func (c *Common) Start(ctx context.Context, fs *flag.FlagSet, sub string) (*Session, error) {
	s := &Session{Machine: describeMachine(ctx), Flags: flagValues(fs), Started: time.Now(), keep: c.keep}
	fmt.Printf("bench %s — %s\n", sub, s.Started.Format(time.RFC3339))
	s.Machine.Print(os.Stdout)
	printFlags(os.Stdout, s.Flags)
	if s.Machine.NProc <= 2 {
		fmt.Println("note:    few cores — the API server, etcd, the controller and this program share them; read ratios, not absolute times")
	}
	dir, err := os.MkdirTemp("", "bench-"+sub+"-")
	if err != nil {
		return s, err
	}
	s.Dir = dir
	if c.manager != "" {
		if s.Binary, err = filepath.Abs(c.manager); err != nil {
			return s, err
		}
		if _, err := os.Stat(s.Binary); err != nil {
			return s, fmt.Errorf("--manager: %w", err)
		}
	} else {
		fmt.Println("building cmd/binding-controller-manager from this tree (CGO_ENABLED=0)…")
		if s.Binary, err = localplane.BuildManager(ctx, dir); err != nil {
			return s, err
		}
	}
	fmt.Printf("work dir: %s\n\n", dir)
	return s, nil
}

// Finish removes the work directory unless --keep.
func (s *Session) Finish() {
	if s == nil || s.Dir == "" {
		return
	}
	if s.keep {
		fmt.Printf("work directory kept: %s\n", s.Dir)
		return
	}
	_ = os.RemoveAll(s.Dir)
}

// Logf prints a progress line with the time of day.
func Logf(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// SplitList splits a comma-separated flag value, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Sanitize makes s a name for a directory or namespace: lower case, [a-z0-9-].
func Sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}
