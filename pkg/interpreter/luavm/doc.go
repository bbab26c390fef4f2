// SPDX-License-Identifier: Apache-2.0

// Package luavm runs the Lua scripts of resource interpreter customizations in a sandbox:
// a bounded pool of gopher-lua states with only the libraries a script needs to rewrite an
// object (base without the loaders, raw access and metatables; table, string, math;
// os.time and os.date; and Karmada's "kube" module). Nothing in the sandbox reaches files,
// the environment or processes.
//
// Scripts are other teams' code, so each call has a budget (budget.go) of time,
// instructions, memory built and library work, counted the same on every run; the pattern
// functions are the sandbox's own (pattern.go), with gopher-lua's results but bounded work;
// and a call runs on its state's goroutine, so that its caller never waits past the
// deadline. No script can end the process, hold a worker or take its memory.
//
// Objects cross into Lua as tables and come back as JSON-shaped Go values; an empty table
// becomes the empty object or array that the input had at that place, as Karmada does.
package luavm
