package resourcedir

// The filter language's tokens: what the parser reads, each with its
// character position for the messages.

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// charAtByte gives the 1-based rune position of the character holding byte
// offset b, counting each invalid byte as one character as range does.
func charAtByte(s string, b int) int {
	n := 0
	for i := range s {
		if i > b {
			break
		}
		n++
	}
	if b >= len(s) { // the end: the character after the last
		n++
	}
	return n
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tTilde
	tAnd // ~and~, read as one token so that it can never be a unary operand
	tOr  // ~or~
	tLParen
	tRParen
	tSym    // = < <= > >=
	tString // a quoted value; text is unescaped
	tInt    // -?[0-9]+; text as written
	tWord   // field names, operators, null, undefined…
	tErr    // a lexical error; text says what
)

type token struct {
	kind     tokKind
	off, end int // bytes of s
	text     string
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// identEnd returns the end of the run of identifier characters at off.
func identEnd(s string, off int) int {
	for off < len(s) {
		r, n := utf8.DecodeRuneInString(s[off:])
		if r == utf8.RuneError && n <= 1 || r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		off += n
	}
	return off
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func skipSpace(s string, off int) int {
	for off < len(s) && isSpace(s[off]) {
		off++
	}
	return off
}

func lexToken(s string, off int) token {
	off = skipSpace(s, off)
	if off >= len(s) {
		return token{kind: tEOF, off: len(s), end: len(s)}
	}
	switch c := s[off]; c {
	case '~':
		if t, ok := lexLogic(s, off); ok {
			return t
		}
		return token{kind: tTilde, off: off, end: off + 1}
	case '(':
		return token{kind: tLParen, off: off, end: off + 1}
	case ')':
		return token{kind: tRParen, off: off, end: off + 1}
	case '=', '<', '>':
		end := off + 1
		if c != '=' && end < len(s) && s[end] == '=' {
			end++
		}
		return token{kind: tSym, off: off, end: end, text: s[off:end]}
	case '\'':
		return lexString(s, off)
	case '"':
		// Said plainly: JSON and most languages quote with ", the filter
		// language does not.
		return token{kind: tErr, off: off, end: off + 1, text: `unexpected character "\"": values are in single quotes ('Ada'), not double quotes`}
	case '-':
		end := identEnd(s, off+1)
		if allDigits(s[off+1 : end]) {
			return token{kind: tInt, off: off, end: end, text: s[off:end]}
		}
	default:
		if end := identEnd(s, off); end > off {
			if allDigits(s[off:end]) {
				return token{kind: tInt, off: off, end: end, text: s[off:end]}
			}
			return token{kind: tWord, off: off, end: end, text: s[off:end]}
		}
	}
	_, n := utf8.DecodeRuneInString(s[off:])
	return token{kind: tErr, off: off, end: off + n, text: fmt.Sprintf("unexpected character %q", s[off:off+n])}
}

// lexLogic reads ~and~ or ~or~ (any case, spaces allowed inside) at off.
func lexLogic(s string, off int) (token, bool) {
	w := skipSpace(s, off+1)
	we := identEnd(s, w)
	e := skipSpace(s, we)
	if e >= len(s) || s[e] != '~' {
		return token{}, false
	}
	switch word := s[w:we]; {
	case strings.EqualFold(word, "and"):
		return token{kind: tAnd, off: off, end: e + 1, text: word}, true
	case strings.EqualFold(word, "or"):
		return token{kind: tOr, off: off, end: e + 1, text: word}, true
	}
	return token{}, false
}

// lexString reads a quoted value at off, where a doubled quote is one quote.
// The service's own help writes three quotes for one, so a run of n quotes is
// read by what follows it: before the end, ~, ) or a space the run is
// doubling (n/2 quotes, and an odd run's last quote closes the value);
// before anything else an odd run of 3 or more is (n-1)/2 quotes inside the
// value. A single quote before anything else closes the value: reading it
// as nothing would silently turn 'O'Brien' into OBrien.
func lexString(s string, off int) token {
	var b []byte // nil until the value needs unescaping
	seg := off + 1
	for {
		j := strings.IndexByte(s[seg:], '\'')
		if j < 0 {
			return token{kind: tErr, off: len(s), end: len(s),
				text: fmt.Sprintf("expected ' to close the value that starts at character %d", charAtByte(s, off))}
		}
		j += seg
		k := j
		for k < len(s) && s[k] == '\'' {
			k++
		}
		n := k - j
		closes := n%2 == 1 // odd runs close before the end, ~, ) or a space
		if k < len(s) && s[k] != '~' && s[k] != ')' && !isSpace(s[k]) {
			closes = n == 1
		}
		if closes && b == nil && n == 1 { // nothing to unescape
			return token{kind: tString, off: off, end: k, text: s[seg:j]}
		}
		b = append(b, s[seg:j+n/2]...) // the value so far and n/2 of the run's quotes
		if closes {
			return token{kind: tString, off: off, end: k, text: string(b)}
		}
		seg = k // at the end, the search finds no closing quote
	}
}
