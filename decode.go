package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The one JSON reader of request bodies. Nearly every body is one small
// object, so a single validating pass over the bytes does the work that
// encoding/json would do with reflection and a token per value, and it says
// where a body broke in its own words.

// maxJSONDepth is how deeply a body may nest; encoding/json's own limit.
const maxJSONDepth = 10000

// utf8BOM is what some Windows tools put before UTF-8 text; ASP.NET skips it.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// afterBOM is where the JSON of body starts: past a byte-order mark. The
// mark stays in body, so that positions in messages are those of the body
// as sent.
func afterBOM(body []byte) int {
	if bytes.HasPrefix(body, utf8BOM) {
		return len(utf8BOM)
	}
	return 0
}

// jsonDocument is what a whole body must be, for the messages that say
// it is not.
type jsonDocument struct {
	open     byte   // '{' or '['
	subject  string // "The request body"
	expected string // "a JSON object"
	value    string // "JSON object", as in "data after the JSON object"
}

var (
	objectBody = jsonDocument{'{', "The request body", "a JSON object", "JSON object"}
	seedBody   = jsonDocument{'[', "The seed", "a JSON array of resources", "JSON array"}
)

// start returns where the document's value starts, after a byte-order
// mark and white space, or why body is not such a document.
func (d jsonDocument) start(s scanner) (int, error) {
	i := s.space(afterBOM(s.b))
	if i == len(s.b) {
		return 0, &jsonError{fmt.Sprintf("%s is empty; expected %s.", d.subject, d.expected)}
	}
	if s.b[i] != d.open {
		if _, err := s.value(i, 0); err != nil {
			return 0, err
		}
		return 0, &jsonError{fmt.Sprintf("%s must be %s, not %s.", d.subject, d.expected, jsonKind(s.b[i]))}
	}
	return i, nil
}

// finish checks that only white space follows the value that ends at end.
func (d jsonDocument) finish(s scanner, end int) error {
	if rest := s.space(end); rest != len(s.b) {
		return &jsonError{fmt.Sprintf("%s has data after the %s, at byte %d.", d.subject, d.value, rest)}
	}
	return nil
}

// jsonError is a body that is not the JSON expected; its text is the whole
// sentence a client is told.
type jsonError struct{ msg string }

func (e *jsonError) Error() string { return e.msg }

func syntaxErrorAt(offset int, format string, args ...any) *jsonError {
	return &jsonError{fmt.Sprintf("The request body is not valid JSON: %s (at byte %d).", fmt.Sprintf(format, args...), offset)}
}

func endsEarly(offset int) *jsonError {
	return &jsonError{fmt.Sprintf("The request body is not valid JSON: it ends early, at byte %d.", offset)}
}

// quoteChar describes an unexpected byte as encoding/json does.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

// scanner checks JSON in b. Offsets in its errors are offsets into b, so a
// seed item's faults point into the whole seed.
type scanner struct{ b []byte }

func (s scanner) space(i int) int {
	for ; i < len(s.b); i++ {
		switch s.b[i] {
		case ' ', '\t', '\r', '\n':
		default:
			return i
		}
	}
	return i
}

// value checks the value that starts at i (after white space) and returns
// its end.
func (s scanner) value(i, depth int) (int, error) {
	if i >= len(s.b) {
		return 0, endsEarly(len(s.b))
	}
	switch c := s.b[i]; {
	case c == '"':
		end, _, err := s.str(i)
		return end, err
	case c == '{':
		return s.object(i, depth+1, nil)
	case c == '[':
		return s.array(i, depth+1, nil)
	case c == '-' || c >= '0' && c <= '9':
		return s.number(i)
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	default:
		return 0, syntaxErrorAt(i, "invalid character %s looking for beginning of value", quoteChar(c))
	}
}

// object checks the object at b[i] == '{'; member, when not nil, is called
// for each member with its key as sent (quotes included) and its value's
// bounds.
func (s scanner) object(i, depth int, member func(key []byte, escaped bool, start, end int)) (int, error) {
	if depth > maxJSONDepth {
		return 0, syntaxErrorAt(i, "exceeded max depth")
	}
	i = s.space(i + 1)
	if i < len(s.b) && s.b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(s.b) {
			return 0, endsEarly(len(s.b))
		}
		if s.b[i] != '"' {
			return 0, syntaxErrorAt(i, "invalid character %s looking for beginning of object key string", quoteChar(s.b[i]))
		}
		keyEnd, escaped, err := s.str(i)
		if err != nil {
			return 0, err
		}
		key := s.b[i:keyEnd]
		if i = s.space(keyEnd); i >= len(s.b) {
			return 0, endsEarly(len(s.b))
		}
		if s.b[i] != ':' {
			return 0, syntaxErrorAt(i, "expected colon after object key")
		}
		start := s.space(i + 1)
		end, err := s.value(start, depth)
		if err != nil {
			return 0, err
		}
		if member != nil {
			member(key, escaped, start, end)
		}
		if i = s.space(end); i >= len(s.b) {
			return 0, endsEarly(len(s.b))
		}
		switch s.b[i] {
		case ',':
			i = s.space(i + 1)
		case '}':
			return i + 1, nil
		default:
			return 0, syntaxErrorAt(i, "invalid character %s after object key:value pair", quoteChar(s.b[i]))
		}
	}
}

// array checks the array at b[i] == '['; element, when not nil, is called
// for each element's bounds.
func (s scanner) array(i, depth int, element func(start, end int) error) (int, error) {
	if depth > maxJSONDepth {
		return 0, syntaxErrorAt(i, "exceeded max depth")
	}
	i = s.space(i + 1)
	if i < len(s.b) && s.b[i] == ']' {
		return i + 1, nil
	}
	for {
		start := i
		end, err := s.value(start, depth)
		if err != nil {
			return 0, err
		}
		if element != nil {
			if err := element(start, end); err != nil {
				return 0, err
			}
		}
		if i = s.space(end); i >= len(s.b) {
			return 0, endsEarly(len(s.b))
		}
		switch s.b[i] {
		case ',':
			i = s.space(i + 1)
		case ']':
			return i + 1, nil
		default:
			return 0, syntaxErrorAt(i, "invalid character %s after array element", quoteChar(s.b[i]))
		}
	}
}

// str checks the string at b[i] == '"' and returns its end (past the
// closing quote) and whether it holds escapes. Invalid UTF-8 is allowed: it
// reads as U+FFFD, as encoding/json reads it.
func (s scanner) str(i int) (end int, escaped bool, err error) {
	for i++; i < len(s.b); i++ {
		c := s.b[i]
		if plainStringByte[c] {
			continue
		}
		switch {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(s.b) {
				return 0, false, endsEarly(len(s.b))
			}
			i++
			switch s.b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 1; k <= 4; k++ {
					if i+k >= len(s.b) {
						return 0, false, endsEarly(len(s.b))
					}
					if !isHex(s.b[i+k]) {
						return 0, false, syntaxErrorAt(i+k, "invalid character %s in \\u hexadecimal character escape", quoteChar(s.b[i+k]))
					}
				}
				i += 4
			default:
				return 0, false, syntaxErrorAt(i, "invalid character %s in string escape code", quoteChar(s.b[i]))
			}
		default:
			return 0, false, syntaxErrorAt(i, "invalid character %s in string literal", quoteChar(c))
		}
	}
	return 0, false, endsEarly(len(s.b))
}

// plainStringByte tells the bytes that stand for themselves in a JSON string.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < len(t); c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number checks a number by JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s scanner) number(i int) (int, error) {
	digits := func(i int, what string) (int, error) {
		if i >= len(s.b) {
			return 0, endsEarly(len(s.b))
		}
		if !isDigit(s.b[i]) {
			return 0, syntaxErrorAt(i, "invalid character %s in %s", quoteChar(s.b[i]), what)
		}
		for i < len(s.b) && isDigit(s.b[i]) {
			i++
		}
		return i, nil
	}
	if s.b[i] == '-' {
		i++
	}
	var err error
	switch {
	case i >= len(s.b):
		return 0, endsEarly(len(s.b))
	case s.b[i] == '0':
		i++
	default:
		if i, err = digits(i, "numeric literal"); err != nil {
			return 0, err
		}
	}
	if i < len(s.b) && s.b[i] == '.' {
		if i, err = digits(i+1, "numeric literal"); err != nil {
			return 0, err
		}
	}
	if i < len(s.b) && (s.b[i] == 'e' || s.b[i] == 'E') {
		i++
		if i < len(s.b) && (s.b[i] == '+' || s.b[i] == '-') {
			i++
		}
		if i, err = digits(i, "exponent of numeric literal"); err != nil {
			return 0, err
		}
	}
	return i, nil
}

func (s scanner) literal(i int, lit string) (int, error) {
	for k := 1; k < len(lit); k++ {
		if i+k >= len(s.b) {
			return 0, endsEarly(len(s.b))
		}
		if s.b[i+k] != lit[k] {
			return 0, syntaxErrorAt(i+k, "invalid character %s in literal %s (expecting '%c')", quoteChar(s.b[i+k]), lit, lit[k])
		}
	}
	return i + len(lit), nil
}

// jsonKind names what a value that starts with c is, for messages.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	}
	return "a number"
}

// unquote reads the JSON string raw, which the scanner has checked, as
// encoding/json does: escapes decoded, invalid UTF-8 and lone surrogates
// read as U+FFFD.
func unquote(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		if utf8.Valid(inner) {
			return string(inner)
		}
		return string(bytes.ToValidUTF8(inner, []byte("\uFFFD")))
	}
	var b strings.Builder
	b.Grow(len(inner))
	for i := 0; i < len(inner); {
		c := inner[i]
		if c != '\\' {
			r, size := utf8.DecodeRune(inner[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(inner[i : i+size])
			}
			i += size
			continue
		}
		switch e := inner[i+1]; e {
		case 'u':
			r, size := decodeUEscape(inner[i:])
			b.WriteRune(r)
			i += size
			continue
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		default: // " \ /
			b.WriteByte(e)
		}
		i += 2
	}
	return b.String()
}

// decodeUEscape reads the \uXXXX escape at the start of b, with the second
// half of a surrogate pair when one follows; a lone surrogate is U+FFFD.
func decodeUEscape(b []byte) (r rune, size int) {
	r = hex4(b[2:6])
	if utf16.IsSurrogate(r) {
		if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
			if pair := utf16.DecodeRune(r, hex4(b[8:12])); pair != utf8.RuneError {
				return pair, 12
			}
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(n)
}

// compactJSON returns the checked value raw without insignificant white
// space, its strings as sent except that invalid UTF-8 and lone surrogate
// escapes become U+FFFD, so that what is stored can always be read back by a
// strict JSON reader.
func compactJSON(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '"':
			end := stringEnd(raw, i)
			out = appendCleanString(out, raw[i:end])
			i = end
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// appendCleanString appends the checked JSON string s, repairing invalid
// UTF-8 and lone surrogate escapes.
func appendCleanString(out, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && s[i+1] == 'u':
			r, size := decodeUEscape(s[i:])
			if r == utf8.RuneError && size == 6 && hex4(s[i+2:i+6]) != utf8.RuneError {
				out = append(out, `\ufffd`...)
			} else {
				out = append(out, s[i:i+size]...)
			}
			i += size
		case c == '\\':
			out = append(out, s[i:i+2]...)
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, s[i:i+size]...)
			}
			i += size
		}
	}
	return out
}

// The helpers below move over JSON that the scanner has already checked.

// stringEnd returns the end (just past the closing quote) of the checked
// string that starts at b[i].
func stringEnd(b []byte, i int) int {
	for i++; ; i++ {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return -1
		}
		i += k
		backslashes := 0
		for b[i-1-backslashes] == '\\' {
			backslashes++
		}
		if backslashes%2 == 0 {
			return i + 1
		}
	}
}

// elements calls visit with the bounds of each element of the checked array
// or object member values raw; for objects, key holds the member's key.
func elements(raw []byte, visit func(key []byte, start, end int)) {
	s := scanner{raw}
	if raw[0] == '{' {
		s.object(0, 1, func(key []byte, _ bool, start, end int) { visit(key, start, end) }) //nolint:errcheck // checked before
		return
	}
	s.array(0, 1, func(start, end int) error { visit(nil, start, end); return nil }) //nolint:errcheck // checked before
}
