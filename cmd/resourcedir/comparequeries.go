package main

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

	"github.com/resourcedir/resourcedir"
)

// cmpFields are the fields filters and sorts take, in the server's order:
// the text ones first, then StatusId.
var cmpFields, cmpTextFields = func() (names []string, text int) {
	var others []string
	for _, p := range resourcedir.Properties() {
		switch {
		case p.KendoOnly: // not documented: the tenant section reports it
		case p.Text:
			names = append(names, p.Name)
		case p.Field:
			others = append(others, p.Name)
		}
	}
	return append(names, others...), len(names)
}()

// cmpData is what the queries are built from: each field's values.
type cmpData struct {
	total  int
	values map[string][]string // non-null values, as text, by field
}

func newCmpData(items []map[string]json.RawMessage) *cmpData {
	d := &cmpData{total: len(items), values: map[string][]string{}}
	for _, item := range items {
		for _, f := range cmpFields {
			raw, ok := importLookup(item, f)
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

// cmpFilterQuery is the query string of one filter.
func cmpFilterQuery(filter string) string { return "requestParams.filters=" + url.QueryEscape(filter) }

// cmpSwapCase turns upper case to lower and lower to upper.
func cmpSwapCase(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsUpper(r) {
			return unicode.ToLower(r)
		}
		return unicode.ToUpper(r)
	}, s)
}

// cmpNonASCII reports text with something beyond ASCII.
func cmpNonASCII(s string) bool { return strings.ContainsFunc(s, isNonASCII) }

func isNonASCII(r rune) bool { return r >= utf8.RuneSelf }

// cmpBuilder makes the queries of each rule from the data, with a seeded
// RNG: the same data and seed give the same queries.
type cmpBuilder struct {
	rng  *rand.Rand
	data *cmpData
	k    map[string]int // per rule: how many queries it made, to walk the fields
}

// value picks a value that keep accepts of a text field (all but StatusId),
// walking the fields from the rule's counter so that each gets its turn.
func (b *cmpBuilder) value(rule string, keep func(string) bool) (string, string, bool) {
	start := b.k[rule]
	b.k[rule]++
	// A value is at most 1,000 bytes: filters are limited to 4 KiB.
	fits := func(v string) bool { return len(v) <= 1000 && keep(v) }
	for i := range cmpTextFields {
		f := cmpFields[(start+i)%cmpTextFields]
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
	return "", "", false
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

// page is a page of size within the data, at random.
func (b *cmpBuilder) page(size int) string {
	return pageQuery(size, 1+b.rng.IntN(max(1, (b.data.total+size-1)/size)))
}

// sortPage is a page of a size that sorts are checked on.
func (b *cmpBuilder) sortPage() string { return b.page([]int{20, 50, 500}[b.rng.IntN(3)]) }

func pageQuery(size, page int) string {
	return "requestParams.pageSize=" + strconv.Itoa(size) + "&requestParams.page=" + strconv.Itoa(page)
}

// cmpRule is a rule and how to make one query that checks it.
type cmpRule struct {
	name string
	make func(b *cmpBuilder, name string) (cmpQuery, bool)
}

// opRule checks op on the fields' values, changed by how.
func opRule(name, op string, keep func(string) bool, how func(b *cmpBuilder, v string) string) cmpRule {
	return cmpRule{name, func(b *cmpBuilder, name string) (cmpQuery, bool) {
		f, v, ok := b.value(name, keep)
		if !ok {
			return cmpQuery{}, false
		}
		return cmpQuery{name, op, cmpFilterQuery(f + "~" + op + "~" + cmpQuote(how(b, v)))}, true
	}}
}

func cmpExact(_ *cmpBuilder, v string) string { return v }

// sortRule checks a sort on each field in turn, in direction dir.
func sortRule(name, dir string) cmpRule {
	return cmpRule{name, func(b *cmpBuilder, name string) (cmpQuery, bool) {
		f := cmpFields[b.k[name]%len(cmpFields)]
		b.k[name]++
		return cmpQuery{name, "", "requestParams.sorts=" + f + "-" + dir + "&" + b.sortPage()}, true
	}}
}

var cmpRules = []cmpRule{
	opRule("eq matches the value", "eq", cmpAnyValue, cmpExact),
	opRule("eq is case-insensitive", "eq", cmpHasLetter, func(_ *cmpBuilder, v string) string { return cmpSwapCase(v) }),
	opRule("neq is the exact negation of eq, null included", "neq", cmpAnyValue, cmpExact),
	opRule("lt compares by code point, ignoring case", "lt", cmpNonEmpty, cmpExact),
	opRule("lte compares by code point, ignoring case", "lte", cmpNonEmpty, cmpExact),
	opRule("gt compares by code point, ignoring case", "gt", cmpNonEmpty, cmpExact),
	opRule("gte compares by code point, ignoring case", "gte", cmpNonEmpty, cmpExact),
	opRule("startswith matches a prefix", "startswith", cmpNonEmpty, func(b *cmpBuilder, v string) string { return b.part(v, "prefix") }),
	opRule("endswith matches a suffix", "endswith", cmpNonEmpty, func(b *cmpBuilder, v string) string { return b.part(v, "suffix") }),
	opRule("contains matches a substring", "contains", cmpNonEmpty, func(b *cmpBuilder, v string) string { return b.part(v, "middle") }),
	opRule("contains is case-insensitive", "contains", cmpHasLetter, func(b *cmpBuilder, v string) string { return cmpSwapCase(b.part(v, "middle")) }),
	opRule("doesnotcontain is the exact negation of contains, null included", "doesnotcontain", cmpNonEmpty, func(b *cmpBuilder, v string) string { return b.part(v, "middle") }),
	opRule("notsubstringof is doesnotcontain", "notsubstringof", cmpNonEmpty, func(b *cmpBuilder, v string) string { return b.part(v, "middle") }),
	opRule("eq '' matches only the empty string", "eq", cmpAnyValue, func(*cmpBuilder, string) string { return "" }),
	opRule("'' in a value is one quote", "eq", func(v string) bool { return strings.Contains(v, "'") }, cmpExact),
	opRule("non-ASCII values match", "eq", cmpNonASCII, cmpExact),
	opRule("non-ASCII substrings match", "contains", cmpNonASCII, func(b *cmpBuilder, v string) string {
		r := []rune(v)
		i := slices.IndexFunc(r, isNonASCII)
		return string(r[max(0, i-1):min(len(r), i+2)])
	}),
	{"symbol forms (= < <= > >=) are eq lt lte gt gte", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		f, v, ok := b.value(name, cmpNonEmpty)
		sym := []string{"=", "<", "<=", ">", ">="}[b.rng.IntN(5)]
		return cmpQuery{name, "", cmpFilterQuery(f + sym + cmpQuote(v))}, ok
	}},
	{"StatusId compares integers", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		op := []string{"eq", "neq", "lt", "lte", "gt", "gte"}[b.rng.IntN(6)]
		return cmpQuery{name, op, cmpFilterQuery("StatusId~" + op + "~" + strconv.Itoa(1+b.rng.IntN(2)))}, true
	}},
	{"~and~ keeps what both conditions match", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		f1, v1, ok1 := b.value(name, cmpNonEmpty)
		f2, v2, ok2 := b.value(name, cmpNonEmpty)
		return cmpQuery{name, "", cmpFilterQuery(f1 + "~contains~" + cmpQuote(b.part(v1, "middle")) + "~and~" + f2 + "~neq~" + cmpQuote(v2))}, ok1 && ok2
	}},
	{"~or~ keeps what either condition matches", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		f1, v1, ok1 := b.value(name, cmpAnyValue)
		f2, v2, ok2 := b.value(name, cmpNonEmpty)
		return cmpQuery{name, "", cmpFilterQuery("(" + f1 + "~eq~" + cmpQuote(v1) + ")~or~" + f2 + "~startswith~" + cmpQuote(b.part(v2, "prefix")))}, ok1 && ok2
	}},
	sortRule("sort puts null first ascending", "asc"),
	sortRule("sort puts null last descending", "desc"),
	{"without a sort the order is creation order", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		return cmpQuery{name, "", b.sortPage()}, true
	}},
	{ruleTotalPages, func(b *cmpBuilder, name string) (cmpQuery, bool) {
		return cmpQuery{name, "", b.page(b.pageSize())}, true
	}},
	{"a page past the end is empty, with the true totals", func(b *cmpBuilder, name string) (cmpQuery, bool) {
		size := b.pageSize()
		return cmpQuery{name, "", pageQuery(size, (b.data.total+size-1)/size+1+b.rng.IntN(3))}, true
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
	// Resourcedir is the other's answer (in this process, -filters kendo);
	// SameAnswer: the tenant accepted the construct and answered the same.
	Resourcedir cmpAnswer
	SameAnswer  bool
}

func buildProbes(data *cmpData) []cmpProbe {
	v := func(f string) string {
		if vals := data.values[f]; len(vals) > 0 {
			return vals[0]
		}
		return "x"
	}
	return []cmpProbe{
		{Construct: "a unary operator (isnull)", Query: cmpFilterQuery("Email~isnull")},
		{Construct: "a null value (eq null)", Query: cmpFilterQuery("Fax~eq~null")},
		{Construct: "~and~ and ~or~ in one filter", Query: cmpFilterQuery("(FirstName~eq~" + cmpQuote(v("FirstName")) + "~or~Surname~eq~" + cmpQuote(v("Surname")) + ")~and~Status~eq~'Active'")},
		{Construct: "doesnotstartwith", Query: cmpFilterQuery("DisplayName~doesnotstartwith~'a'")},
		{Construct: "doesnotendwith", Query: cmpFilterQuery("DisplayName~doesnotendwith~'a'")},
	}
}
