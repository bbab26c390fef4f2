// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"fmt"
	"strings"
	"unicode"
)

// MetricNames returns the metric names a PromQL expression selects, in order of first
// appearance, with Grafana's variables ($job, ${job}, $__rate_interval, [[job]]) allowed
// anywhere PromQL takes a value.
//
// It scans tokens rather than parsing: Prometheus's own parser lives in a module that
// brings much of Prometheus's dependency tree with it, and naming the selected metrics
// needs only this. In PromQL an identifier is a metric name unless it is a keyword (an
// operator, a modifier, an aggregation, Inf, NaN), a function (followed by "(") or a
// label name (inside "{...}", or in the "(...)" after by, without, on, ignoring,
// group_left or group_right). Strings, "{...}" matchers, "[...]" ranges and Grafana's
// variables are skipped whole. A matcher on __name__ is refused: it names a metric this
// scan would miss.
func MetricNames(expr string) ([]string, error) {
	s := scanner{src: []rune(expr)}
	var names []string
	seen := map[string]bool{}
	for {
		tok, err := s.next()
		if err != nil {
			return nil, fmt.Errorf("%w in %q", err, expr)
		}
		switch {
		case tok == "":
			return names, nil
		case !isIdentStart(rune(tok[0])):
			continue
		case labelListKeywords[tok]:
			if s.peek() == '(' {
				if err := s.skipGroup('(', ')'); err != nil {
					return nil, fmt.Errorf("%w in %q", err, expr)
				}
			}
		case keywords[strings.ToLower(tok)]:
		case s.peek() == '(':
			// a function or an aggregation
		default:
			if !seen[tok] {
				seen[tok] = true
				names = append(names, tok)
			}
		}
	}
}

// labelListKeywords take a parenthesised list of label names.
var labelListKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// keywords are PromQL's other reserved words (compared in lower case, as PromQL does):
// binary operators, modifiers, Inf and NaN, and the aggregation operators, which may be
// followed by "by (...)" rather than "(" and are keywords, not functions, to its parser.
var keywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"inf": true, "nan": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

type scanner struct {
	src []rune
	pos int
}

// next returns the next token: an identifier, or one rune of anything else; "" at the end.
// Strings, matchers, ranges, numbers, durations, comments and Grafana variables are
// consumed without being returned.
func (s *scanner) next() (string, error) {
	for s.pos < len(s.src) {
		r := s.src[s.pos]
		switch {
		case unicode.IsSpace(r):
			s.pos++
		case r == '#':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.pos++
			}
		case r == '"' || r == '\'' || r == '`':
			if err := s.skipString(r); err != nil {
				return "", err
			}
		case r == '{':
			start := s.pos
			if err := s.skipGroup('{', '}'); err != nil {
				return "", err
			}
			if strings.Contains(string(s.src[start:s.pos]), "__name__") {
				return "", fmt.Errorf("a __name__ matcher")
			}
		case r == '[':
			if err := s.skipGroup('[', ']'); err != nil {
				return "", err
			}
		case r == '$':
			s.skipVariable()
		case unicode.IsDigit(r) || r == '.':
			// a number or a duration (5m, 1e3, 0x1f): letters and digits after a digit
			for s.pos < len(s.src) && (isIdentPart(s.src[s.pos]) || s.src[s.pos] == '.') {
				s.pos++
			}
		case isIdentStart(r):
			start := s.pos
			for s.pos < len(s.src) && isIdentPart(s.src[s.pos]) {
				s.pos++
			}
			return string(s.src[start:s.pos]), nil
		default:
			s.pos++
			return string(r), nil
		}
	}
	return "", nil
}

// peek returns the next rune that is not white space, or 0 at the end.
func (s *scanner) peek() rune {
	for i := s.pos; i < len(s.src); i++ {
		if !unicode.IsSpace(s.src[i]) {
			return s.src[i]
		}
	}
	return 0
}

// skipGroup consumes from the next open rune to its matching close, strings included.
func (s *scanner) skipGroup(open, close rune) error {
	for s.pos < len(s.src) && s.src[s.pos] != open {
		s.pos++
	}
	depth := 0
	for s.pos < len(s.src) {
		switch r := s.src[s.pos]; r {
		case '"', '\'', '`':
			if err := s.skipString(r); err != nil {
				return err
			}
			continue
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				s.pos++
				return nil
			}
		}
		s.pos++
	}
	return fmt.Errorf("an unclosed %q", open)
}

func (s *scanner) skipString(quote rune) error {
	for s.pos++; s.pos < len(s.src); s.pos++ {
		switch s.src[s.pos] {
		case '\\':
			if quote != '`' {
				s.pos++
			}
		case quote:
			s.pos++
			return nil
		}
	}
	return fmt.Errorf("an unterminated string")
}

// skipVariable consumes a Grafana variable: $name or ${name} or ${name:format}.
func (s *scanner) skipVariable() {
	s.pos++
	if s.pos < len(s.src) && s.src[s.pos] == '{' {
		for s.pos < len(s.src) && s.src[s.pos] != '}' {
			s.pos++
		}
		s.pos++
		return
	}
	for s.pos < len(s.src) && isIdentPart(s.src[s.pos]) {
		s.pos++
	}
}

func isIdentStart(r rune) bool {
	return r == '_' || r == ':' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
}

func isIdentPart(r rune) bool {
	return isIdentStart(r) || (r >= '0' && r <= '9')
}
