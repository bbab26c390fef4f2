// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"fmt"
)

// The sandbox's pattern matcher. It gives the results of gopher-lua's own (package pm),
// which Karmada runs customizations on, including where those differ from Lua 5.1's ("%f"
// is the letter f, "$" is an anchor only as a pattern's last character, a set's range of
// two non-letters never matches), so that a script writes the same object under either
// controller. What it changes is the cost: gopher-lua's matcher cannot be stopped once
// started (".-.-.-b" over 400 characters ran 55 s past a 1 s deadline) and its gsub
// copied the whole subject for every match (200,000 matches made tens of GiB). This one
// counts its steps against the call's budget and looks at the deadline as it goes, and
// gsub builds its result once.
//
// A pattern is parsed into a sequence of items, compiled into a small program and run by
// a backtracking machine (as in https://swtch.com/~rsc/regexp/regexp2.html).

const (
	// endOfPattern stands for a character read past the pattern's end, as gopher-lua's
	// scanner gives it: a class or a %b delimiter made of it matches nothing.
	endOfPattern = -1
	// maxMatchDepth bounds the machine's recursion, which grows by one for each
	// character a repetition takes. gopher-lua allows 10^6 (a Go stack of about a GiB);
	// past the bound the call fails with gopher-lua's error text.
	maxMatchDepth = 200_000
	// checkEvery is how many steps pass between looks at the budget and the clock.
	checkEvery = 1024
)

// patternError ends a match with a message for the script; the library function that
// started the match turns it into a Lua error.
type patternError string

func failPattern(format string, args ...any) {
	panic(patternError(fmt.Sprintf(format, args...)))
}

type classKind uint8

const (
	anyChar classKind = iota
	oneChar
	namedClass // %a, %d, ...: ch is the letter
	setOf
	rangeOf
	noChar
)

type class struct {
	kind    classKind
	ch      int
	negate  bool
	members []class
	lo, hi  int
}

func (c *class) matches(ch int) bool {
	switch c.kind {
	case anyChar:
		return true
	case oneChar:
		return c.ch == ch
	case namedClass:
		return classMatches(ch, c.ch)
	case setOf:
		for i := range c.members {
			if c.members[i].matches(ch) {
				return !c.negate
			}
		}
		return c.negate
	case rangeOf:
		return c.lo <= ch && ch <= c.hi
	}
	return false
}

// classMatches tells whether ch is in the class named by letter cl ("a" letters, "A" all
// else); any other cl names itself.
func classMatches(ch, cl int) bool {
	var in bool
	switch cl {
	case 'a', 'A':
		in = isAlpha(ch)
	case 'c', 'C':
		in = ch <= 0x1f && ch >= 0 || ch == 0x7f
	case 'd', 'D':
		in = isDigit(ch)
	case 'l', 'L':
		in = 'a' <= ch && ch <= 'z'
	case 'p', 'P':
		in = 0x21 <= ch && ch <= 0x7e && !isAlpha(ch) && !isDigit(ch)
	case 's', 'S':
		in = ch == ' ' || '\t' <= ch && ch <= '\r'
	case 'u', 'U':
		in = 'A' <= ch && ch <= 'Z'
	case 'w', 'W':
		in = isAlpha(ch) || isDigit(ch)
	case 'x', 'X':
		in = isDigit(ch) || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F'
	case 'z', 'Z':
		in = ch == 0
	default:
		return ch == cl
	}
	if 'A' <= cl && cl <= 'Z' {
		return !in
	}
	return in
}

func isDigit(ch int) bool { return '0' <= ch && ch <= '9' }
func isAlpha(ch int) bool { return 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' }

// Pattern items.
type itemKind uint8

const (
	single itemKind = iota
	repeat          // op is one of * + - ?
	positionCapture
	textCapture
	backReference // n is the capture's number
	balanced      // %bxy: open, close
)

type item struct {
	kind        itemKind
	class       class
	op          byte
	sub         *sequence
	n           int
	open, close int
}

type sequence struct {
	anchored, tailAnchored bool
	items                  []item
}

type parser struct {
	p string
	i int
}

func parsePattern(p string) *sequence {
	ps := &parser{p: p}
	return ps.sequence(true)
}

// next returns the next character or endOfPattern, and moves past it.
func (ps *parser) next() int {
	if ps.i >= len(ps.p) {
		return endOfPattern
	}
	ps.i++
	return int(ps.p[ps.i-1])
}

func (ps *parser) sequence(top bool) *sequence {
	seq := &sequence{}
	if top && ps.i < len(ps.p) && ps.p[ps.i] == '^' {
		ps.i++
		seq.anchored = true
	}
	for ps.i < len(ps.p) {
		c := ps.p[ps.i]
		switch c {
		case '%':
			if ps.i+1 < len(ps.p) {
				switch d := ps.p[ps.i+1]; {
				case d == '0':
					failPattern("invalid capture index at %d", ps.i+1)
				case '1' <= d && d <= '9':
					seq.items = append(seq.items, item{kind: backReference, n: int(d - '0')})
					ps.i += 2
					continue
				case d == 'b':
					ps.i += 2
					open := ps.next()
					seq.items = append(seq.items, item{kind: balanced, open: open, close: ps.next()})
					continue
				}
			}
			seq.items = append(seq.items, item{kind: single, class: ps.class(true)})
		case '.', '[', ']':
			seq.items = append(seq.items, item{kind: single, class: ps.class(true)})
		case ')':
			if top {
				failPattern("invalid ')' at %d", ps.i)
			}
			return seq
		case '(':
			ps.i++
			if ps.i < len(ps.p) && ps.p[ps.i] == ')' {
				ps.i++
				seq.items = append(seq.items, item{kind: positionCapture})
				continue
			}
			sub := ps.sequence(false)
			if ps.i >= len(ps.p) || ps.p[ps.i] != ')' {
				failPattern("unfinished capture at %d", ps.i)
			}
			ps.i++
			seq.items = append(seq.items, item{kind: textCapture, sub: sub})
		case '*', '+', '-', '?':
			ps.i++
			if n := len(seq.items); n > 0 && seq.items[n-1].kind == single {
				seq.items[n-1] = item{kind: repeat, class: seq.items[n-1].class, op: c}
				continue
			}
			seq.items = append(seq.items, item{kind: single, class: class{kind: oneChar, ch: int(c)}})
		case '$':
			if top && ps.i == len(ps.p)-1 {
				seq.tailAnchored = true
			} else {
				seq.items = append(seq.items, item{kind: single, class: class{kind: oneChar, ch: '$'}})
			}
			ps.i++
		default:
			ps.i++
			seq.items = append(seq.items, item{kind: single, class: class{kind: oneChar, ch: int(c)}})
		}
	}
	return seq
}

// class parses one character class; in a set, "." and "[" stand for themselves.
func (ps *parser) class(inPattern bool) class {
	c := ps.next()
	switch {
	case c == '%':
		return class{kind: namedClass, ch: ps.next()}
	case c == '.' && inPattern:
		return class{kind: anyChar}
	case c == '[' && inPattern:
		return ps.set()
	}
	return class{kind: oneChar, ch: c}
}

func (ps *parser) set() class {
	set := class{kind: setOf}
	if ps.i < len(ps.p) && ps.p[ps.i] == '^' {
		set.negate = true
		ps.i++
	}
	inRange := false
	for {
		if ps.i >= len(ps.p) {
			failPattern("unexpected EOS")
		}
		c := ps.p[ps.i]
		// "]" ends the set and "-" makes a range only after its first member.
		if c == ']' && len(set.members) > 0 {
			ps.i++
			break
		}
		if c == '-' && len(set.members) > 0 {
			ps.i++
			inRange = true
			continue
		}
		set.members = append(set.members, ps.class(false))
		if inRange {
			n := len(set.members)
			lo, hi := set.members[n-2], set.members[n-1]
			r := class{kind: noChar}
			if lo.kind == oneChar && hi.kind == oneChar {
				r = class{kind: rangeOf, lo: lo.ch, hi: hi.ch}
			}
			set.members = append(set.members[:n-2], r)
			inRange = false
		}
	}
	if inRange {
		set.members = append(set.members, class{kind: oneChar, ch: '-'})
	}
	return set
}

// The machine's program.
type opKind uint8

const (
	opChar opKind = iota
	opMatch
	opTailMatch
	opJump
	opSplit // try x, then y
	opSave  // captures[x] = position
	opSavePosition
	opBalanced
	opBackReference
)

type instruction struct {
	op    opKind
	class *class
	x, y  int
}

type program struct {
	code     []instruction
	anchored bool
}

func compilePattern(pat string) *program {
	seq := parsePattern(pat)
	c := &compiler{code: []instruction{{op: opSave, x: 0}}, capture: 2}
	c.sequence(seq)
	if seq.tailAnchored {
		c.code = append(c.code, instruction{op: opSave, x: 1}, instruction{op: opTailMatch})
	}
	c.code = append(c.code, instruction{op: opSave, x: 1}, instruction{op: opMatch})
	return &program{code: c.code, anchored: seq.anchored}
}

type compiler struct {
	code    []instruction
	capture int
}

func (c *compiler) sequence(seq *sequence) {
	for i := range seq.items {
		it := &seq.items[i]
		at := len(c.code)
		switch it.kind {
		case single:
			c.code = append(c.code, instruction{op: opChar, class: &it.class})
		case repeat:
			switch it.op {
			case '*':
				c.code = append(c.code, instruction{op: opSplit, x: at + 1, y: at + 3},
					instruction{op: opChar, class: &it.class}, instruction{op: opJump, x: at})
			case '+':
				c.code = append(c.code, instruction{op: opChar, class: &it.class}, instruction{op: opSplit, x: at, y: at + 2})
			case '-':
				c.code = append(c.code, instruction{op: opSplit, x: at + 3, y: at + 1},
					instruction{op: opChar, class: &it.class}, instruction{op: opJump, x: at})
			case '?':
				c.code = append(c.code, instruction{op: opSplit, x: at + 1, y: at + 2}, instruction{op: opChar, class: &it.class})
			}
		case positionCapture:
			c.code = append(c.code, instruction{op: opSavePosition, x: c.capture})
			c.capture += 2
		case textCapture:
			first := c.capture
			c.capture += 2
			c.code = append(c.code, instruction{op: opSave, x: first})
			c.sequence(it.sub)
			c.code = append(c.code, instruction{op: opSave, x: first + 1})
		case balanced:
			c.code = append(c.code, instruction{op: opBalanced, x: it.open, y: it.close})
		case backReference:
			c.code = append(c.code, instruction{op: opBackReference, x: it.n})
		}
	}
}

// A match's captures, as gopher-lua keeps them: positions in pairs, the whole match first;
// a position capture's pair holds the 1-based position twice, flagged.
type captures struct {
	at         []int
	isPosition []bool
}

func (c *captures) set(i, pos int) (int, bool) {
	for i >= len(c.at) {
		c.at = append(c.at, 0)
		c.isPosition = append(c.isPosition, false)
	}
	old, oldPos := c.at[i], c.isPosition[i]
	c.at[i], c.isPosition[i] = pos, false
	return old, oldPos
}

func (c *captures) setPosition(i, pos int) {
	for i+1 >= len(c.at) {
		c.at = append(c.at, 0)
		c.isPosition = append(c.isPosition, false)
	}
	c.at[i], c.at[i+1] = pos, pos
	c.isPosition[i], c.isPosition[i+1] = true, true
}

// count is the number of captures' slots, gopher-lua's CaptureLength.
func (c *captures) count() int { return len(c.at) }

// A matcher runs a program over a subject.
type matcher struct {
	src    string
	prog   *program
	caps   captures
	budget *budget
	steps  int
}

func newMatcher(b *budget, src, pat string) *matcher {
	return &matcher{src: src, prog: compilePattern(pat), budget: b}
}

// step counts one step of matching; every checkEvery steps it charges them to the call
// and ends the match past the call's step bound or deadline.
func (m *matcher) step() {
	m.steps++
	if m.steps >= checkEvery {
		m.flushSteps()
	}
}

func (m *matcher) flushSteps() {
	n := m.steps
	m.steps = 0
	if m.budget == nil {
		return
	}
	if err := m.budget.chargeSteps(n); err != nil {
		m.budget.exceed(err)
		panic(patternError(err.Error()))
	}
	if m.budget.pastDeadline() {
		panic(patternError(m.budget.err.Error()))
	}
}

// matchAt tries a match at sp and returns where it ends.
func (m *matcher) matchAt(sp int) (int, bool) {
	m.caps.at, m.caps.isPosition = m.caps.at[:0], m.caps.isPosition[:0]
	ok, end := m.run(0, sp, 0)
	return end, ok
}

func (m *matcher) run(pc, sp, depth int) (bool, int) {
	depth++
	if depth > maxMatchDepth {
		failPattern("pattern/input too complex")
	}
	code := m.prog.code
	for {
		m.step()
		in := &code[pc]
		switch in.op {
		case opChar:
			if sp >= len(m.src) || !in.class.matches(int(m.src[sp])) {
				return false, sp
			}
			pc++
			sp++
		case opMatch:
			return true, sp
		case opTailMatch:
			return sp >= len(m.src), sp
		case opJump:
			pc = in.x
		case opSplit:
			if ok, end := m.run(in.x, sp, depth); ok {
				return true, end
			}
			pc = in.y
		case opSave:
			old, oldPos := m.caps.set(in.x, sp)
			if ok, end := m.run(pc+1, sp, depth); ok {
				return true, end
			}
			m.caps.at[in.x], m.caps.isPosition[in.x] = old, oldPos
			return false, sp
		case opSavePosition:
			m.caps.setPosition(in.x, sp+1)
			pc++
		case opBalanced:
			if sp >= len(m.src) || int(m.src[sp]) != in.x {
				return false, sp
			}
			open := 1
			for sp++; ; sp++ {
				if sp >= len(m.src) {
					return false, sp
				}
				m.step()
				if int(m.src[sp]) == in.y {
					open--
				}
				if open == 0 {
					break
				}
				if int(m.src[sp]) == in.x {
					open++
				}
			}
			pc++
			sp++
		case opBackReference:
			i := in.x * 2
			if i >= m.caps.count()-1 {
				failPattern("invalid capture index")
			}
			from, to := m.caps.at[i], m.caps.at[i+1]
			if from > to || to > len(m.src) {
				failPattern("invalid capture index")
			}
			text := m.src[from:to]
			if len(m.src)-sp < len(text) || m.src[sp:sp+len(text)] != text {
				return false, sp
			}
			pc++
			sp += len(text)
		}
	}
}

// A found match: where it starts and ends, and its captures, which are the matcher's own
// and hold only until it matches again.
type found struct {
	start, end int
	caps       *captures
}

// find returns the matches from offset on, at most limit of them (limit < 1: all), as
// gopher-lua's pm.Find: after a match the search goes on where it ended, or one further
// for an empty one; an anchored pattern is tried at offset only. each is called with
// every match instead of keeping them, when set.
func (m *matcher) find(offset, limit int, each func(found) bool) {
	n := 0
	for sp := offset; sp <= len(m.src); {
		end, ok := m.matchAt(sp)
		start := sp
		sp++
		if ok {
			if sp < end {
				sp = end
			}
			n++
			if !each(found{start: start, end: end, caps: &m.caps}) {
				return
			}
		}
		if n == limit || m.prog.anchored {
			return
		}
	}
}
