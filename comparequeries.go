package resourcedir

// The queries compare sends: built from the tenant's own data, one rule
// of the filter language, sorting or paging each.

import (
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// cmpData is what the queries are built from: each field's values.
type cmpData struct {
	total  int
	values [numFields][]string // non-null values, as text
}

func newCmpData(items []map[string]json.RawMessage) *cmpData {
	d := &cmpData{total: len(items)}
	for _, item := range items {
		for f := range numFields {
			raw, ok := importLookup(item, fieldNames[f])
			if !ok {
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) == nil {
				d.values[f] = append(d.values[f], s)
				continue
			}
			var n json.Number
			if json.Unmarshal(raw, &n) == nil {
				d.values[f] = append(d.values[f], n.String())
			}
		}
	}
	return d
}

// cmpQuote writes a filter value, doubling quotes.
func cmpQuote(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }

func cmpFilterQuery(filter string, extra ...string) string {
	q := "requestParams.filters=" + url.QueryEscape(filter)
	for _, e := range extra {
		q += "&" + e
	}
	return q
}

// cmpSwapCase turns upper case to lower and lower to upper.
func cmpSwapCase(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsUpper(r) {
			return unicode.ToLower(r)
		}
		return unicode.ToUpper(r)
	}, s)
}

// cmpIsASCII reports text with nothing beyond ASCII.
func cmpIsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// cmpBuilder makes the queries of each rule from the data, with a seeded
// RNG: the same data and seed give the same queries.
type cmpBuilder struct {
	rng  *rand.Rand
	data *cmpData
	k    map[string]int // per rule: how many queries it made, to walk the fields
}

// cmpTextFields are the fields whose values are text (StatusId is a number).
var cmpTextFields = func() []field {
	var fs []field
	for f := range numFields {
		if f != fieldStatusID {
			fs = append(fs, f)
		}
	}
	return fs
}()

// value picks a value of a field from the data, walking the fields from
// the rule's counter so that every field gets its turn; ok is false when no
// field has a value that keep accepts.
func (b *cmpBuilder) value(rule string, fields []field, keep func(string) bool) (field, string, bool) {
	start := b.k[rule]
	b.k[rule]++
	// A value is at most 1,000 bytes: filters are limited to 4 KiB.
	fits := func(v string) bool { return len(v) <= 1000 && keep(v) }
	for i := range fields {
		f := fields[(start+i)%len(fields)]
		vals := b.data.values[f]
		if len(vals) == 0 {
			continue
		}
		// A few tries at random, then the first that fits.
		for range 8 {
			if v := vals[b.rng.IntN(len(vals))]; fits(v) {
				return f, v, true
			}
		}
		if j := slices.IndexFunc(vals, fits); j >= 0 {
			return f, vals[j], true
		}
	}
	return 0, "", false
}

func cmpAnyValue(string) bool { return true }

func cmpNonEmpty(v string) bool { return v != "" }

func cmpHasLetter(v string) bool { return strings.IndexFunc(v, unicode.IsLetter) >= 0 }

// part cuts a piece of v: a prefix, a suffix or a middle.
func (b *cmpBuilder) part(v string, where string) string {
	r := []rune(v)
	n := 1 + b.rng.IntN(len(r))
	switch where {
	case "prefix":
		return string(r[:n])
	case "suffix":
		return string(r[len(r)-n:])
	}
	i := b.rng.IntN(len(r) - n + 1)
	return string(r[i : i+n])
}

// pageSize is a page size around the edges of the data.
func (b *cmpBuilder) pageSize() int {
	sizes := []int{1, 2, 3, 7, 20, 50, 499, 500, max(1, b.data.total-1), max(1, b.data.total), b.data.total + 1}
	return min(500, sizes[b.rng.IntN(len(sizes))])
}

func (b *cmpBuilder) sortPage() string {
	size := []int{20, 50, 500}[b.rng.IntN(3)]
	pages := max(1, (b.data.total+size-1)/size)
	return "requestParams.pageSize=" + strconv.Itoa(size) + "&requestParams.page=" + strconv.Itoa(1+b.rng.IntN(pages))
}

// cmpRule is a rule and how to make one query that checks it.
type cmpRule struct {
	name string
	make func(b *cmpBuilder, name string) (cmpQuery, bool)
}

// opRule checks op on the fields' values, changed by how.
func opRule(name, op string, fields []field, keep func(string) bool, how func(b *cmpBuilder, v string) string) cmpRule {
	return cmpRule{name, func(b *cmpBuilder, name string) (cmpQuery, bool) {
		f, v, ok := b.value(name, fields, keep)
		if !ok {
			return cmpQuery{}, false
		}
		return cmpQuery{name, op, cmpFilterQuery(f.String() + "~" + op + "~" + cmpQuote(how(b, v)))}, true
	}}
}

func cmpExact(_ *cmpBuilder, v string) string { return v }

var cmpRules = []cmpRule{
	opRule("eq matches the value", "eq", cmpTextFields, cmpAnyValue, cmpExact),
	opRule("eq is case-insensitive", "eq", cmpTextFields, cmpHasLetter, func(_ *cmpBuilder, v string) string { return cmpSwapCase(v) }),
	opRule("neq is the exact negation of eq, null included", "neq", cmpTextFields, cmpAnyValue, cmpExact),
	opRule("lt compares by code point, ignoring case", "lt", cmpTextFields, cmpNonEmpty, cmpExact),
	opRule("lte compares by code point, ignoring case", "lte", cmpTextFields, cmpNonEmpty, cmpExact),
	opRule("gt compares by code point, ignoring case", "gt", cmpTextFields, cmpNonEmpty, cmpExact),
	opRule("gte compares by code point, ignoring case", "gte", cmpTextFields, cmpNonEmpty, cmpExact),
	opRule("startswith matches a prefix", "startswith", cmpTextFields, cmpNonEmpty, func(b *cmpBuilder, v string) string { return b.part(v, "prefix") }),
	opRule("endswith matches a suffix", "endswith", cmpTextFields, cmpNonEmpty, func(b *cmpBuilder, v string) string { return b.part(v, "suffix") }),
	opRule("contains matches a substring", "contains", cmpTextFields, cmpNonEmpty, func(b *cmpBuilder, v string) string { return b.part(v, "middle") }),
	opRule("contains is case-insensitive", "contains", cmpTextFields, cmpHasLetter, func(b *cmpBuilder, v string) string { return cmpSwapCase(b.part(v, "middle")) }),
	opRule("doesnotcontain is the exact negation of contains, null included", "doesnotcontain", cmpTextFields, cmpNonEmpty, func(b *cmpBuilder, v string) string { return b.part(v, "middle") }),
	opRule("notsubstringof is doesnotcontain", "notsubstringof", cmpTextFields, cmpNonEmpty, func(b *cmpBuilder, v string) string { return b.part(v, "middle") }),
	opRule("eq '' matches only the empty string", "eq", cmpTextFields, cmpAnyValue, func(*cmpBuilder, string) string { return "" }),
	opRule("'' in a value is one quote", "eq", cmpTextFields, func(v string) bool { return strings.Contains(v, "'") }, cmpExact),
	opRule("non-ASCII values match", "eq", cmpTextFields, func(v string) bool { return !cmpIsASCII(v) }, cmpExact),
	opRule("non-ASCII substrings match", "contains", cmpTextFields, func(v string) bool { return !cmpIsASCII(v) }, func(b *cmpBuilder, v string) string {
		r := []rune(v)
		i := slices.IndexFunc(r, func(c rune) bool { return c >= utf8.RuneSelf })
		return string(r[max(0, i-1):min(len(r), i+2)])
	}),
	{"symbol forms (= < <= > >=) are eq lt lte gt gte", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		f, v, ok := b.value(name, cmpTextFields, cmpNonEmpty)
		sym := []string{"=", "<", "<=", ">", ">="}[b.rng.IntN(5)]
		return cmpQuery{name, "", cmpFilterQuery(f.String() + sym + cmpQuote(v))}, ok
	}},
	{"StatusId compares integers", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		op := []string{"eq", "neq", "lt", "lte", "gt", "gte"}[b.rng.IntN(6)]
		return cmpQuery{name, op, cmpFilterQuery("StatusId~" + op + "~" + strconv.Itoa(1+b.rng.IntN(2)))}, true
	}},
	{"~and~ keeps what both conditions match", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		f1, v1, ok1 := b.value(name, cmpTextFields, cmpNonEmpty)
		f2, v2, ok2 := b.value(name, cmpTextFields, cmpNonEmpty)
		return cmpQuery{name, "", cmpFilterQuery(f1.String() + "~contains~" + cmpQuote(b.part(v1, "middle")) + "~and~" + f2.String() + "~neq~" + cmpQuote(v2))}, ok1 && ok2
	}},
	{"~or~ keeps what either condition matches", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		f1, v1, ok1 := b.value(name, cmpTextFields, cmpAnyValue)
		f2, v2, ok2 := b.value(name, cmpTextFields, cmpNonEmpty)
		return cmpQuery{name, "", cmpFilterQuery("(" + f1.String() + "~eq~" + cmpQuote(v1) + ")~or~" + f2.String() + "~startswith~" + cmpQuote(b.part(v2, "prefix")))}, ok1 && ok2
	}},
	{"sort puts null first ascending", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		f := field(b.k[name] % int(numFields))
		b.k[name]++
		return cmpQuery{name, "", "requestParams.sorts=" + f.String() + "-asc&" + b.sortPage()}, true
	}},
	{"sort puts null last descending", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		f := field(b.k[name] % int(numFields))
		b.k[name]++
		return cmpQuery{name, "", "requestParams.sorts=" + f.String() + "-desc&" + b.sortPage()}, true
	}},
	{"without a sort the order is creation order", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		return cmpQuery{name, "", b.sortPage()}, true
	}},
	{ruleTotalPages, func(b *cmpBuilder, name string) (cmpQuery, bool) {
		size := b.pageSize()
		pages := max(1, (b.data.total+size-1)/size)
		return cmpQuery{name, "", "requestParams.pageSize=" + strconv.Itoa(size) + "&requestParams.page=" + strconv.Itoa(1+b.rng.IntN(pages))}, true
	}},
	{"a page past the end is empty, with the true totals", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		size := b.pageSize()
		pages := (b.data.total + size - 1) / size
		return cmpQuery{name, "", "requestParams.pageSize=" + strconv.Itoa(size) + "&requestParams.page=" + strconv.Itoa(pages+1+b.rng.IntN(3))}, true
	}},
	{"pageSize above 500 is clamped to 500", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		return cmpQuery{name, "", "requestParams.pageSize=" + []string{"501", "1000", "100000"}[b.rng.IntN(3)]}, true
	}},
	{"pageSize defaults to 20 and page to 1", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		return cmpQuery{name, "", []string{"", "requestParams.page=2", "requestParams.pageSize=5"}[b.rng.IntN(3)]}, true
	}},
	{"page and pageSize below 1 are refused", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		return cmpQuery{name, "", []string{"requestParams.page=0", "requestParams.pageSize=0", "requestParams.page=-1", "requestParams.pageSize=x"}[b.rng.IntN(4)]}, true
	}},
	{"malformed filters are refused", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		bad := []string{"DisplayName~eq~'unterminated", "NoSuchField~eq~'x'", "DisplayName~like~'x'", "DisplayName~eq~", "DisplayName~eq~'x'~and~", "DisplayName eq 'x'"}
		return cmpQuery{name, "", cmpFilterQuery(bad[b.rng.IntN(len(bad))])}, true
	}},
}

// buildQueries makes n queries, taking the rules in turn so that every rule
// is checked when n allows.
func buildQueries(data *cmpData, n int, seed uint64) []cmpQuery {
	b := &cmpBuilder{rng: rand.New(rand.NewPCG(seed, 0x636f6d70617265)), data: data, k: map[string]int{}}
	var out []cmpQuery
	seen := map[string]bool{}
	for misses := 0; len(out) < n && misses < 50*len(cmpRules); {
		for _, r := range cmpRules {
			if len(out) == n {
				break
			}
			q, ok := r.make(b, r.name)
			if !ok || seen[q.Query] {
				misses++
				continue
			}
			seen[q.Query] = true
			out = append(out, q)
		}
	}
	return out
}

// cmpProbe is a construct of Kendo's grammar the real service does not
// document: whether the tenant accepts it decides the -filters that fits.
type cmpProbe struct {
	Construct string
	Query     string
	Tenant    cmpAnswer
	Accepted  bool
	// Resourcedir is the answer of the resourcedir compared with (in this
	// process, -filters kendo); SameAnswer says the tenant accepted the
	// construct and answered the same.
	Resourcedir cmpAnswer
	SameAnswer  bool
}

func buildProbes(data *cmpData) []cmpProbe {
	v := func(f field) string {
		if vals := data.values[f]; len(vals) > 0 {
			return vals[0]
		}
		return "x"
	}
	return []cmpProbe{
		{Construct: "a unary operator (isnull)", Query: cmpFilterQuery("Email~isnull")},
		{Construct: "a null value (eq null)", Query: cmpFilterQuery("Fax~eq~null")},
		{Construct: "~and~ and ~or~ in one filter", Query: cmpFilterQuery("(FirstName~eq~" + cmpQuote(v(fieldFirstName)) + "~or~Surname~eq~" + cmpQuote(v(fieldSurname)) + ")~and~Status~eq~'Active'")},
		{Construct: "doesnotstartwith", Query: cmpFilterQuery("DisplayName~doesnotstartwith~'a'")},
		{Construct: "doesnotendwith", Query: cmpFilterQuery("DisplayName~doesnotendwith~'a'")},
	}
}
