package resourcedir

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The filter language of requestParams.filters: Kendo's DataSourceRequest
// filter string, whole (-filters kendo) or as far as the real service
// documents it (-filters assetic, the default). Filters run against every
// resource in the store, so parsing does all the work it can (folding, null
// and StatusId normalisation) and match stays a few comparisons with no
// allocation.

// Limits keep a hostile filter from costing more than a few microseconds to
// parse or from making match walk a huge tree per resource.
const (
	maxFilterBytes      = 4096
	maxFilterConditions = 128
	maxFilterDepth      = 16
)

type filterOp uint8

const (
	opEq filterOp = iota
	opNeq
	opLt
	opLte
	opGt
	opGte
	opStartsWith
	opEndsWith
	opContains
	opDoesNotContain
	opDoesNotStartWith
	opDoesNotEndWith
	opIsNull
	opIsNotNull
	opIsEmpty
	opIsNotEmpty
	opIsNullOrEmpty
	opIsNotNullOrEmpty
	numFilterOps
)

// opNames are the canonical spellings of the operators.
var opNames = [numFilterOps]string{
	opEq: "eq", opNeq: "neq", opLt: "lt", opLte: "lte", opGt: "gt", opGte: "gte",
	opStartsWith: "startswith", opEndsWith: "endswith", opContains: "contains",
	opDoesNotContain: "doesnotcontain", opDoesNotStartWith: "doesnotstartwith", opDoesNotEndWith: "doesnotendwith",
	opIsNull: "isnull", opIsNotNull: "isnotnull", opIsEmpty: "isempty", opIsNotEmpty: "isnotempty",
	opIsNullOrEmpty: "isnullorempty", opIsNotNullOrEmpty: "isnotnullorempty",
}

// opTwin maps each negative operator to the positive one it negates (and a
// positive one to itself), so that exact negation, null included, holds by
// construction rather than by keeping two sets of comparisons in step.
var opTwin = [numFilterOps]filterOp{
	opEq: opEq, opNeq: opEq,
	opLt: opLt, opLte: opLte, opGt: opGt, opGte: opGte,
	opStartsWith: opStartsWith, opEndsWith: opEndsWith,
	opContains: opContains, opDoesNotContain: opContains,
	opDoesNotStartWith: opStartsWith, opDoesNotEndWith: opEndsWith,
	opIsNull: opIsNull, opIsNotNull: opIsNull,
	opIsEmpty: opIsEmpty, opIsNotEmpty: opIsEmpty,
	opIsNullOrEmpty: opIsNullOrEmpty, opIsNotNullOrEmpty: opIsNullOrEmpty,
}

func (o filterOp) String() string {
	if o < numFilterOps {
		return opNames[o]
	}
	return "op" + strconv.Itoa(int(o))
}

// kendoOnly reports the operators Kendo's grammar has and the real
// service's help does not document.
func (o filterOp) kendoOnly() bool {
	return o.unary() || o == opDoesNotStartWith || o == opDoesNotEndWith
}

func (o filterOp) unary() bool { return o >= opIsNull && o < numFilterOps }

// comparison reports the operators that compare StatusId as a number.
func (o filterOp) comparison() bool { return o <= opGte }

func lookupOp(name string) (filterOp, bool) {
	if o := slices.IndexFunc(opNames[:], func(n string) bool { return strings.EqualFold(n, name) }); o >= 0 {
		return filterOp(o), true
	}
	// The contract's alias, after OData's "not substringof".
	if strings.EqualFold(name, "notsubstringof") {
		return opDoesNotContain, true
	}
	return 0, false
}

// filterDialect is the grammar a server accepts (-filters): assetic, what the
// real service documents, so that a client relying on more fails here first;
// or kendo, the whole grammar, for clients built on Kendo's query library.
type filterDialect string

const (
	dialectAssetic filterDialect = "assetic"
	dialectKendo   filterDialect = "kendo"
)

// ParseDialect reads a filter dialect's name as -filters takes it:
// assetic or kendo, in any case.
func ParseDialect(name string) (string, error) {
	d, err := parseDialect(name)
	return string(d), err
}

// parseDialect is ParseDialect for the server, which keeps the type.
func parseDialect(s string) (filterDialect, error) {
	switch d := filterDialect(strings.ToLower(strings.TrimSpace(s))); d {
	case dialectAssetic, dialectKendo:
		return d, nil
	}
	return "", fmt.Errorf("unknown filter dialect %q: use assetic (what the real service documents) or kendo (the whole Kendo grammar)", s)
}

type filterValueKind uint8

const (
	valueNone filterValueKind = iota // unary operators
	valueString
	valueInt
)

// filterNode is a parsed filter: *filterCond or *filterLogic.
type filterNode interface {
	match(r row) bool
}

// row is what a filter reads of a resource: each field's folded text, and
// ok=false for null. StatusId reads as "1" or "2", never null.
type row interface {
	folded(f field) (string, bool)
}

type filterCond struct {
	Field field
	Op    filterOp
	Kind  filterValueKind
	Str   string // valueString: the unescaped value; valueInt: its decimal text
	Fold  string // fold(Str), computed once at parse time
	Int   int64  // valueInt only
}

type filterLogic struct {
	Or    bool         // false: and
	Terms []filterNode // at least 2; never a *filterLogic with the same Or (flattened)
}

func (c *filterCond) match(r row) bool {
	// Only a hand-built condition can be out of range; it matches nothing
	// rather than panicking in a list request.
	if c.Op >= numFilterOps || c.Field >= numFields {
		return false
	}
	v, ok := r.folded(c.Field)
	if t := opTwin[c.Op]; t != c.Op {
		return !c.test(t, v, ok)
	}
	return c.test(c.Op, v, ok)
}

// test evaluates a positive operator.
func (c *filterCond) test(op filterOp, v string, ok bool) bool {
	switch op {
	case opIsNull:
		return !ok
	case opIsEmpty:
		return ok && v == ""
	case opIsNullOrEmpty:
		return !ok || v == ""
	}
	if !ok {
		return false
	}
	if c.Field == fieldStatusID && c.Kind == valueInt && op.comparison() {
		return comparisonHolds(op, cmp.Compare(int64(v[0]-'0'), c.Int))
	}
	switch op {
	case opStartsWith:
		return strings.HasPrefix(v, c.Fold)
	case opEndsWith:
		return strings.HasSuffix(v, c.Fold)
	case opContains:
		return strings.Contains(v, c.Fold)
	}
	return comparisonHolds(op, strings.Compare(v, c.Fold))
}

// comparisonHolds reports whether a comparison operator accepts a value
// that compares to the operand as c (-1, 0, +1) does.
func comparisonHolds(op filterOp, c int) bool {
	switch op {
	case opEq:
		return c == 0
	case opLt:
		return c < 0
	case opLte:
		return c <= 0
	case opGt:
		return c > 0
	case opGte:
		return c >= 0
	}
	return false
}

// match stops at the first term that decides: one that matches an or,
// or one that fails an and.
func (l *filterLogic) match(r row) bool {
	for _, t := range l.Terms {
		if t.match(r) == l.Or {
			return l.Or
		}
	}
	return !l.Or
}
