package resourcedir

import (
	"fmt"
	"strconv"
	"strings"
)

// Parsing the filter language and the sort parameter into the AST of
// filter.go. Positions in errors are characters, as a client counts them.

// filterError is a malformed or over-limit filter. Pos is the 1-based
// character (rune) position.
type filterError struct {
	Pos int
	Msg string
}

func (e *filterError) Error() string {
	return "filter: at character " + strconv.Itoa(e.Pos) + ": " + e.Msg
}

// parseFilter parses requestParams.filters in dialect d; "" (or only
// spaces) gives (nil, nil). Any dialect other than kendo is read as assetic,
// the stricter one.
func parseFilter(s string, d filterDialect) (filterNode, error) {
	p := &filterParser{s: s, kendo: d == dialectKendo}
	if len(s) > maxFilterBytes {
		return nil, p.fail(maxFilterBytes, "the filter is %d bytes long, over the limit of %d bytes", len(s), maxFilterBytes)
	}
	return p.parse()
}

// filtersError is what is wrong with one of the values of a repeated
// requestParams.filters: index is its position as sent, empty ones counted.
type filtersError struct {
	index int
	err   error
}

// parseFilters parses the values of a repeated requestParams.filters (the
// vendor's client sends a list as repeated parameters) each on its own, and
// joins them with ~and~ in the order sent; empty values are ignored. The
// limits hold for the joined whole: its text (the values joined by ~and~)
// and its conditions; its depth is its deepest value's. Every faulty value
// is reported.
func parseFilters(values []string, d filterDialect) (filterNode, []filtersError) {
	if n := len(joinNonBlank(values, "~and~")); n > maxFilterBytes {
		return nil, []filtersError{{-1, fmt.Errorf("the filters joined with ~and~ are %d bytes long, over the limit of %d bytes", n, maxFilterBytes)}}
	}
	var errs []filtersError
	var terms []filterNode
	conds := 0
	for i, v := range values {
		p := &filterParser{s: v, kendo: d == dialectKendo, conds: conds}
		n, err := p.parse()
		conds = p.conds
		switch l, isAnd := n.(*filterLogic); {
		case err != nil:
			errs = append(errs, filtersError{i, err})
		case isAnd && !l.Or:
			terms = append(terms, l.Terms...)
		case n != nil:
			terms = append(terms, n)
		}
	}
	switch {
	case errs != nil || len(terms) == 0:
		return nil, errs
	case len(terms) == 1:
		return terms[0], nil
	}
	return &filterLogic{Terms: terms}, nil
}

// filterParser is a recursive-descent parser with one token of lookahead,
// whose recursion is bounded by maxFilterDepth: it refuses the opening
// parenthesis that would go deeper before recursing. Positions are byte
// offsets, turned into character positions only for an error.
type filterParser struct {
	s     string
	tok   token
	prev  token // the token before tok, for hints
	conds int
	depth int
	kendo bool // the whole grammar; otherwise only what the real service documents
	// join is the first ~and~ or ~or~ read (kind tEOF before one): the
	// real service cannot combine the two in one filter.
	join token
}

func (p *filterParser) next() {
	p.prev = p.tok
	p.tok = lexToken(p.s, p.tok.end)
}

// fail makes an error at byte offset off.
func (p *filterParser) fail(off int, format string, args ...any) *filterError {
	return &filterError{Pos: charAtByte(p.s, off), Msg: fmt.Sprintf(format, args...)}
}

// notDocumented refuses, outside the kendo dialect, a construct of Kendo's
// grammar that the real service does not document: a client relying on it
// must fail here first, and be told where to find it.
func (p *filterParser) notDocumented(off int, construct string) error {
	return p.fail(off, "%s is not documented by the real service; -filters kendo accepts it", construct)
}

// operators lists the operators of the dialect, for an unknown one.
func (p *filterParser) operators() string {
	var names []string
	for o := range numFilterOps {
		if p.kendo || !o.kendoOnly() {
			names = append(names, opNames[o])
		}
	}
	return strings.Join(names, ", ") + " and notsubstringof"
}

// otherValues names the values besides quoted strings that the dialect
// takes.
func (p *filterParser) otherValues() string {
	if p.kendo {
		return ", an integer or null"
	}
	return " (or an integer for StatusId)"
}

// checkJoin records the join at p.tok and refuses, outside the kendo
// dialect, a filter that uses both ~and~ and ~or~.
func (p *filterParser) checkJoin() error {
	switch {
	case p.kendo || p.join.kind == p.tok.kind:
		return nil
	case p.join.kind == tEOF:
		p.join = p.tok
		return nil
	}
	return p.fail(p.tok.off, "%s after the %s at character %d: the real service cannot combine ~and~ and ~or~ in one filter; -filters kendo accepts it",
		tokNames[p.tok.kind], tokNames[p.join.kind], charAtByte(p.s, p.join.off))
}

// unexpected reports p.tok where format's construct was expected: the
// lexer's error when it is one, else format followed by what was found.
func (p *filterParser) unexpected(format string, args ...any) error {
	hint := ""
	switch p.tok.kind {
	case tErr:
		return p.fail(p.tok.off, "%s", p.tok.text)
	case tWord, tInt, tString, tLParen:
		// Text right after a value: most likely a single quote closed it early.
		if p.prev.kind == tString && p.tok.off == p.prev.end {
			hint = " (a ' inside a value is written '')"
		}
	}
	return p.fail(p.tok.off, format+", found %s%s", append(args, p.describe(), hint)...)
}

// parse reads the whole filter, without parseFilter's byte limit.
func (p *filterParser) parse() (filterNode, error) {
	p.tok = lexToken(p.s, 0)
	if p.tok.kind == tEOF {
		return nil, nil
	}
	n, err := p.parseLogic(true)
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		if p.tok.kind == tRParen {
			return nil, p.fail(p.tok.off, "unexpected ) with no ( before it")
		}
		return nil, p.unexpected("expected ~and~ or ~or~")
	}
	return n, nil
}

// tokNames name the tokens whose text a message need not show.
var tokNames = map[tokKind]string{tEOF: "the end of the filter", tString: "a quoted value", tAnd: "~and~", tOr: "~or~"}

// describe names p.tok for a message.
func (p *filterParser) describe() string {
	t := p.tok
	if name, ok := tokNames[t.kind]; ok {
		return name
	}
	switch t.kind {
	case tInt:
		return "the integer " + t.text
	case tTilde:
		// Show the word after it: "~xor" says more than "~".
		return strconv.Quote(p.s[t.off:identEnd(p.s, skipSpace(p.s, t.end))])
	}
	return strconv.Quote(p.s[t.off:t.end])
}

// parseLogic parses terms joined by ~or~ (or) or ~and~ (and), splicing
// nested groups of the same logic into this one.
func (p *filterParser) parseLogic(or bool) (filterNode, error) {
	sep := tAnd
	if or {
		sep = tOr
	}
	// A filter of one condition, the commonest, makes no list of terms.
	var terms []filterNode
	for {
		var t filterNode
		var err error
		if or {
			t, err = p.parseLogic(false)
		} else {
			t, err = p.parsePrimary()
		}
		if err != nil {
			return nil, err
		}
		if terms == nil && p.tok.kind != sep {
			return t, nil
		}
		if l, ok := t.(*filterLogic); ok && l.Or == or {
			terms = append(terms, l.Terms...)
		} else {
			terms = append(terms, t)
		}
		if p.tok.kind != sep {
			break
		}
		if err := p.checkJoin(); err != nil {
			return nil, err
		}
		p.next()
	}
	return &filterLogic{Or: or, Terms: terms}, nil
}

func (p *filterParser) parsePrimary() (filterNode, error) {
	switch p.tok.kind {
	case tLParen:
		open := p.tok.off
		if p.depth == maxFilterDepth {
			return nil, p.fail(open, "parentheses nested deeper than the limit of %d", maxFilterDepth)
		}
		p.depth++
		p.next()
		n, err := p.parseLogic(true)
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			if p.tok.kind == tEOF {
				return nil, p.fail(p.tok.off, "expected ) to close the ( at character %d", charAtByte(p.s, open))
			}
			return nil, p.unexpected("expected ~and~, ~or~ or )")
		}
		p.depth--
		p.next()
		return n, nil
	case tWord:
		return p.parseCond()
	case tRParen:
		return nil, p.fail(p.tok.off, "unexpected ), expected a condition such as DisplayName~eq~'Ada'")
	}
	return nil, p.unexpected("expected a condition such as DisplayName~eq~'Ada'%s", afterToken[p.prev.kind])
}

// afterToken says where a missing condition was expected, by the token
// before it.
var afterToken = map[tokKind]string{tAnd: " after ~and~", tOr: " after ~or~", tLParen: " after ("}

// symbolOps are the comparison operators written as symbols.
var symbolOps = map[string]filterOp{"=": opEq, "<": opLt, "<=": opLte, ">": opGt, ">=": opGte}

func (p *filterParser) parseCond() (filterNode, error) {
	ft := p.tok
	f, ok := lookupField(ft.text)
	if !ok {
		return nil, p.fail(ft.off, "unknown field %q; the fields are %s", ft.text, fieldList(p.kendo))
	}
	if !p.kendo && f.kendoOnly() {
		return nil, p.notDocumented(ft.off, "the field "+f.String())
	}
	p.conds++
	if p.conds > maxFilterConditions {
		return nil, p.fail(ft.off, "more than the limit of %d conditions", maxFilterConditions)
	}
	p.next()
	var op filterOp
	switch p.tok.kind {
	case tSym:
		op = symbolOps[p.tok.text]
		p.next()
		return p.parseValue(f, op)
	case tTilde:
		p.next()
		if p.tok.kind != tWord {
			return nil, p.unexpected("expected an operator such as eq after %s~", f)
		}
		op, ok = lookupOp(p.tok.text)
		if !ok {
			return nil, p.fail(p.tok.off, "unknown operator %q; the operators are %s", p.tok.text, p.operators())
		}
		if !p.kendo && op.kendoOnly() {
			return nil, p.notDocumented(p.tok.off, "the operator "+op.String())
		}
		p.next()
	default:
		return nil, p.unexpected("expected an operator such as ~eq~ after field %s", f)
	}
	if op.unary() {
		if p.tok.kind == tTilde {
			if err := p.skipOperand(op); err != nil {
				return nil, err
			}
		}
		return &filterCond{Field: f, Op: op}, nil
	}
	if p.tok.kind != tTilde {
		return nil, p.unexpected("expected ~ and a value after %s~%s", f, op)
	}
	p.next()
	return p.parseValue(f, op)
}

// skipOperand consumes the operand Kendo writes after a unary operator
// (undefined, null, an empty string, a number, a datetime), which means
// nothing; the lexer has already read ~and~ and ~or~ as logic.
func (p *filterParser) skipOperand(op filterOp) error {
	p.next()
	switch p.tok.kind {
	case tString, tInt:
		p.next()
		return nil
	case tWord:
		end := p.tok.end
		p.next()
		if p.tok.kind == tString && p.tok.off == end {
			p.next()
		}
		return nil
	}
	return p.unexpected("expected nothing or an ignored operand such as undefined after ~%s~", op)
}

func (p *filterParser) parseValue(f field, op filterOp) (filterNode, error) {
	t := p.tok
	c := &filterCond{Field: f, Op: op}
	switch t.kind {
	case tString:
		if f == fieldStatusID && op.comparison() {
			v, err := strconv.ParseInt(t.text, 10, 64)
			if err != nil {
				return nil, p.fail(t.off, "%s~%s compares integers (1 Active, 2 Inactive), found %q", f, op, t.text)
			}
			c.Kind, c.Int, c.Str = valueInt, v, strconv.FormatInt(v, 10)
			c.Fold = c.Str
			break
		}
		c.Kind, c.Str, c.Fold = valueString, t.text, fold(t.text)
	case tInt:
		if !p.kendo && f != fieldStatusID {
			return nil, p.notDocumented(t.off, fmt.Sprintf("the unquoted value %s for %s (integers are for StatusId; quote it: '%s')", t.text, f, t.text))
		}
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, p.fail(t.off, "the integer %s does not fit in 64 bits; quote it to compare it as text", t.text)
		}
		c.Kind, c.Int, c.Str, c.Fold = valueInt, v, t.text, t.text
	case tWord:
		if !strings.EqualFold(t.text, "null") {
			return nil, p.fail(t.off, "expected a value after %s~%s: a quoted string such as '%s'%s, found %q",
				f, op, t.text, p.otherValues(), t.text)
		}
		if !p.kendo {
			return nil, p.notDocumented(t.off, "the value null")
		}
		switch op {
		case opEq:
			c.Op = opIsNull
		case opNeq:
			c.Op = opIsNotNull
		default:
			return nil, p.fail(t.off, "null can only follow eq or neq (or use isnull and isnotnull), not %s", op)
		}
	default:
		return nil, p.unexpected("expected a value after %s~%s: a quoted string such as 'Ada'%s", f, op, p.otherValues())
	}
	p.next()
	return c, nil
}

type sortKey struct {
	Field field
	Desc  bool
}

// parseSorts parses requestParams.sorts: "DisplayName-asc~Surname-desc~Company"
// (direction optional, default asc, field and direction case-insensitive).
// A field given twice keeps its first position: the later key could never
// decide an order, and dropping it bounds the comparator's work to the
// number of fields.
func parseSorts(s string, d filterDialect) ([]sortKey, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var keys []sortKey
	var seen [numFields]bool
	for i, item := range strings.Split(s, "~") {
		name, dir, hasDir := strings.Cut(strings.TrimSpace(item), "-")
		name, dir = strings.TrimSpace(name), strings.TrimSpace(dir)
		if name == "" {
			return nil, fmt.Errorf("sorts: entry %d of %q has no field; write Field-asc or Field-desc joined by ~", i+1, s)
		}
		f, ok := lookupField(name)
		if !ok {
			return nil, fmt.Errorf("sorts: unknown field %q; the fields are %s", name, fieldList(d == dialectKendo))
		}
		if d != dialectKendo && f.kendoOnly() {
			return nil, fmt.Errorf("sorts: the field %s is not documented by the real service; -filters kendo sorts by it", f)
		}
		desc := hasDir && strings.EqualFold(dir, "desc")
		if hasDir && !desc && !strings.EqualFold(dir, "asc") {
			return nil, fmt.Errorf("sorts: unknown direction %q after %s; use asc or desc", dir, f)
		}
		if !seen[f] {
			seen[f] = true
			keys = append(keys, sortKey{Field: f, Desc: desc})
		}
	}
	return keys, nil
}

// fieldList names the fields that filters and sorts take in a dialect.
func fieldList(kendo bool) string {
	var names []string
	for f := range numFields {
		if kendo || !f.kendoOnly() {
			names = append(names, f.String())
		}
	}
	return strings.Join(names, ", ")
}

// kendoOnlyFields names the fields that only -filters kendo takes.
func kendoOnlyFields() string {
	var names []string
	for f := range numFields {
		if f.kendoOnly() {
			names = append(names, f.String())
		}
	}
	return strings.Join(names, ", ")
}
