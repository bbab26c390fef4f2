// SPDX-License-Identifier: Apache-2.0

package overridepolicy

import (
	"fmt"
	"strconv"
	"strings"
)

// pointerTokens splits an RFC 6901 JSON pointer into its unescaped reference tokens.
// The empty pointer names the whole document and has no tokens.
func pointerTokens(pointer string) ([]string, error) {
	if pointer == "" {
		return nil, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, fmt.Errorf("JSON pointer %q does not start with /", pointer)
	}
	tokens := strings.Split(pointer[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
	}
	return tokens, nil
}

// pointerGet returns the value doc holds at pointer, and false when there is none.
// doc is decoded JSON: maps, slices and scalars.
func pointerGet(doc any, pointer string) (any, bool, error) {
	tokens, err := pointerTokens(pointer)
	if err != nil {
		return nil, false, err
	}
	cur := doc
	for _, t := range tokens {
		next, ok := child(cur, t)
		if !ok {
			return nil, false, nil
		}
		cur = next
	}
	return cur, true, nil
}

// pointerReplace replaces the existing value doc holds at pointer, which must not be
// the empty pointer.
func pointerReplace(doc any, pointer string, value any) error {
	tokens, err := pointerTokens(pointer)
	if err != nil {
		return err
	}
	if len(tokens) == 0 {
		return fmt.Errorf("cannot replace the whole object")
	}
	parent := doc
	for _, t := range tokens[:len(tokens)-1] {
		next, ok := child(parent, t)
		if !ok {
			return fmt.Errorf("path %q not found", pointer)
		}
		parent = next
	}
	last := tokens[len(tokens)-1]
	if _, ok := child(parent, last); !ok {
		return fmt.Errorf("path %q not found", pointer)
	}
	switch p := parent.(type) {
	case map[string]any:
		p[last] = value
	case []any:
		i, _ := strconv.Atoi(last)
		p[i] = value
	}
	return nil
}

func child(node any, token string) (any, bool) {
	switch n := node.(type) {
	case map[string]any:
		v, ok := n[token]
		return v, ok
	case []any:
		i, err := strconv.Atoi(token)
		if err != nil || i < 0 || i >= len(n) || strconv.Itoa(i) != token {
			return nil, false
		}
		return n[i], true
	default:
		return nil, false
	}
}
