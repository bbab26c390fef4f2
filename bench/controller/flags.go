// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"strconv"
	"strings"
)

// Flag finds --name=V or --name V (or one dash) in args, a manager's flags: V, "true"
// for a flag given alone, or "" when args do not set it.
func Flag(args []string, name string) string {
	for i, a := range args {
		a = strings.TrimLeft(a, "-")
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				return args[i+1]
			}
			return "true"
		}
	}
	return ""
}

// flagInt is Flag's value as a number, def when args do not set one.
func flagInt(args []string, name string, def int) int {
	if n, err := strconv.Atoi(Flag(args, name)); err == nil {
		return n
	}
	return def
}

// Concurrency is how many Works the manager with args writes at once: its
// --concurrent-resourcebinding-syncs × --cluster-sync-concurrency, 5 × 8 by default.
// A plain client creating Works as many at once is the ceiling it is held against.
func Concurrency(args []string) int {
	return flagInt(args, "concurrent-resourcebinding-syncs", 5) * flagInt(args, "cluster-sync-concurrency", 8)
}
