// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"bytes"
	"encoding/json"
)

// canonicalManifest returns raw as rendering encodes a manifest: keys sorted, no spaces,
// numbers as written. The API server hands manifests back as Go's encoder writes them,
// which is already that form, so raw itself is returned whenever alreadyCanonical can
// tell; only what it cannot vouch for is decoded and re-encoded.
func canonicalManifest(raw []byte) ([]byte, bool) {
	if alreadyCanonical(raw) {
		return raw, true
	}
	return canonicalJSON(raw)
}

// canonicalJSON re-encodes raw as rendering encodes a manifest. The API server may hand a
// manifest back with keys in another order.
func canonicalJSON(raw []byte) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}

// alreadyCanonical tells, without allocating, whether raw is one JSON value exactly as
// canonicalJSON would write it: nothing outside strings but the value's own syntax, the
// keys of every object strictly increasing, and strings that encoding/json writes as
// they are (printable ASCII without <, > and &, no escapes). Whatever it is not sure
// of, it says no to, and canonicalJSON decides.
func alreadyCanonical(raw []byte) bool {
	s := canonicalScan{b: raw}
	return s.value() && s.i == len(raw)
}

type canonicalScan struct {
	b []byte
	i int
}

func (s *canonicalScan) next() (byte, bool) {
	if s.i >= len(s.b) {
		return 0, false
	}
	return s.b[s.i], true
}

func (s *canonicalScan) value() bool {
	c, ok := s.next()
	if !ok {
		return false
	}
	switch c {
	case '{':
		return s.object()
	case '[':
		return s.array()
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	return s.number()
}

func (s *canonicalScan) object() bool {
	s.i++
	if c, ok := s.next(); ok && c == '}' {
		s.i++
		return true
	}
	var previous []byte
	for first := true; ; first = false {
		if c, ok := s.next(); !ok || c != '"' {
			return false
		}
		key, ok := s.str()
		// encoding/json sorts a map's keys as strings, bytewise; without escapes the raw
		// key is that string. Equal keys would be merged: not canonical either.
		if !ok || (!first && bytes.Compare(previous, key) >= 0) {
			return false
		}
		previous = key
		if c, ok := s.next(); !ok || c != ':' {
			return false
		}
		s.i++
		if !s.value() {
			return false
		}
		if closed, ok := s.separator('}'); !ok || closed {
			return ok
		}
	}
}

func (s *canonicalScan) array() bool {
	s.i++
	if c, ok := s.next(); ok && c == ']' {
		s.i++
		return true
	}
	for {
		if !s.value() {
			return false
		}
		if closed, ok := s.separator(']'); !ok || closed {
			return ok
		}
	}
}

// separator reads what follows a member: a comma (another one comes) or closer.
func (s *canonicalScan) separator(closer byte) (closed, ok bool) {
	c, ok := s.next()
	if !ok || (c != ',' && c != closer) {
		return false, false
	}
	s.i++
	return c == closer, true
}

// str reads a string at s.i (its opening quote) and returns its content.
func (s *canonicalScan) str() ([]byte, bool) {
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c == '\\', c < 0x20, c >= 0x80, c == '<', c == '>', c == '&':
			// Escapes, control characters, non-ASCII (U+2028, U+2029 and invalid UTF-8
			// are rewritten) and the HTML characters encoding/json escapes.
			return nil, false
		}
	}
	return nil, false
}

func (s *canonicalScan) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?: a json.Number is written
// back as it was read.
func (s *canonicalScan) number() bool {
	if c, ok := s.next(); ok && c == '-' {
		s.i++
	}
	c, ok := s.next()
	switch {
	case !ok:
		return false
	case c == '0':
		s.i++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return false
	}
	if c, ok := s.next(); ok && c == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if c, ok := s.next(); ok && (c == 'e' || c == 'E') {
		s.i++
		if c, ok := s.next(); ok && (c == '+' || c == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *canonicalScan) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}
