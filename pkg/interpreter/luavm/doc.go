// Package luavm runs the Lua scripts of resource interpreter customizations in a sandbox:
// a bounded pool of gopher-lua states, each call limited in time, with only the libraries a
// script needs to rewrite an object (base without the loaders, raw access and metatables;
// table, string, math; os.time and os.date; and Karmada's "kube" module). Nothing in the
// sandbox reaches files, the environment or processes.
//
// Objects cross into Lua as tables and come back as JSON-shaped Go values; an empty table
// becomes the empty object or array that the input had at that place, as Karmada does.
package luavm
