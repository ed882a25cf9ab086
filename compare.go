package resourcedir

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// compare answers "how faithful is resourcedir for my tenant?": it reads
// the tenant's directory, loads it into a resourcedir, sends both the same
// read-only list queries built from the data, and reports, rule by rule,
// where the answers differ. Only GETs ever reach the tenant.

// Rules that a difference is put under whatever the query was about: a
// refused operator refuses every query that uses it, and a TotalPages
// rounded another way shows on any page size that does not divide the
// total.
const (
	ruleTotalPages = "TotalPages is the ceiling of TotalResults / pageSize"
	ruleOperator   = "operator %s is accepted"
)

// cmpQuery is one list query and the rule it checks.
type cmpQuery struct {
	Rule  string
	Op    string // the operator it uses, "" for none
	Query string // the raw query string
}

// cmpAnswer is what compare reads of a list answer.
type cmpAnswer struct {
	Status       int
	TotalResults int      `json:",omitempty"`
	TotalPages   int      `json:",omitempty"`
	Ids          []string `json:",omitempty"`
	Message      string   `json:",omitempty"` // an error's Message, or why the body could not be read
}

func (a cmpAnswer) String() string {
	if a.Status != http.StatusOK {
		return fmt.Sprintf("%d %s", a.Status, a.Message)
	}
	ids := a.Ids
	more := ""
	if len(ids) > 5 {
		ids, more = ids[:5], fmt.Sprintf(" and %d more", len(a.Ids)-5)
	}
	return fmt.Sprintf("200 TotalResults %d TotalPages %d Ids [%s]%s", a.TotalResults, a.TotalPages, strings.Join(ids, " "), more)
}

// readAnswer reads a list answer; Ids are compared in lower case.
func readAnswer(status int, body []byte) cmpAnswer {
	a := cmpAnswer{Status: status}
	if status != http.StatusOK {
		var e struct{ Message string }
		if json.Unmarshal(body, &e) == nil && e.Message != "" {
			a.Message = e.Message
		} else {
			a.Message = fmt.Sprintf("%.120q", body)
		}
		return a
	}
	var p struct {
		TotalResults int
		TotalPages   int
		ResourceList []struct{ Id string }
	}
	if err := json.Unmarshal(body, &p); err != nil {
		a.Message = "the body is not a list answer: " + err.Error()
		return a
	}
	a.TotalResults, a.TotalPages = p.TotalResults, p.TotalPages
	a.Ids = make([]string, len(p.ResourceList))
	for i, r := range p.ResourceList {
		a.Ids[i] = strings.ToLower(r.Id)
	}
	return a
}

// differRule says under which rule a difference between a (the tenant)
// and b falls, or "" when they agree.
func differRule(q cmpQuery, a, b cmpAnswer) string {
	switch {
	case a.Status != b.Status:
		if q.Op != "" {
			return fmt.Sprintf(ruleOperator, q.Op)
		}
		return q.Rule
	case a.Status != http.StatusOK:
		return "" // both refused it
	case a.Message != b.Message:
		return q.Rule
	case a.TotalResults != b.TotalResults || !slices.Equal(a.Ids, b.Ids):
		return q.Rule
	case a.TotalPages != b.TotalPages:
		return ruleTotalPages
	}
	return ""
}

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

func cmpAnyValue(string) bool    { return true }
func cmpNonEmpty(v string) bool  { return v != "" }
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

// cmpRuleReport is one rule's verdict.
type cmpRuleReport struct {
	Rule     string
	Queries  int
	Differ   int
	Examples []cmpExample `json:",omitempty"`
}

type cmpExample struct {
	Query       string
	Tenant      cmpAnswer
	Resourcedir cmpAnswer
}

// cmpReport is the whole verdict; -report json writes it as it is.
type cmpReport struct {
	From      string // the tenant's base URL (credentials never appear in it)
	Against   string // what it was compared with
	Resources int
	Queries   int
	Differs   bool
	Rules     []cmpRuleReport
	Probes    []cmpProbe
	Filters   string // the -filters that fits the tenant
	Advice    string
}

const maxExamples = 3

// compareDirectories sends every query to a (the tenant) and b, and every
// probe to both, and builds the report.
func compareDirectories(ctx context.Context, a, b *directoryReader, queries []cmpQuery, probes []cmpProbe) (*cmpReport, error) {
	rep := &cmpReport{Queries: len(queries)}
	byRule := map[string]*cmpRuleReport{}
	rule := func(name string) *cmpRuleReport {
		if byRule[name] == nil {
			byRule[name] = &cmpRuleReport{Rule: name}
		}
		return byRule[name]
	}
	ask := func(d *directoryReader, q string) (cmpAnswer, error) {
		status, body, err := d.list(ctx, q)
		if err != nil {
			return cmpAnswer{}, err
		}
		return readAnswer(status, body), nil
	}
	for _, q := range queries {
		checks := []string{q.Rule}
		if q.Op != "" {
			checks = append(checks, fmt.Sprintf(ruleOperator, q.Op))
		}
		ansA, err := ask(a, q.Query)
		if err != nil {
			return nil, err
		}
		ansB, err := ask(b, q.Query)
		if err != nil {
			return nil, err
		}
		if ansA.Status == http.StatusOK && ansB.Status == http.StatusOK {
			checks = append(checks, ruleTotalPages)
		}
		for _, c := range checks {
			rule(c).Queries++
		}
		if d := differRule(q, ansA, ansB); d != "" {
			r := rule(d) // counted among checks above
			r.Differ++
			if len(r.Examples) < maxExamples {
				r.Examples = append(r.Examples, cmpExample{Query: q.Query, Tenant: ansA, Resourcedir: ansB})
			}
		}
	}
	// The rules in the order they are built, then the operators by name.
	rank := func(name string) int {
		if i := slices.IndexFunc(cmpRules, func(r cmpRule) bool { return r.name == name }); i >= 0 {
			return i
		}
		return len(cmpRules)
	}
	for _, r := range byRule {
		rep.Rules = append(rep.Rules, *r)
		rep.Differs = rep.Differs || r.Differ > 0
	}
	slices.SortFunc(rep.Rules, func(x, y cmpRuleReport) int {
		if c := rank(x.Rule) - rank(y.Rule); c != 0 {
			return c
		}
		return strings.Compare(x.Rule, y.Rule)
	})
	accepted := 0
	for i := range probes {
		p := &probes[i]
		ansA, err := ask(a, p.Query)
		if err != nil {
			return nil, err
		}
		ansB, err := ask(b, p.Query)
		if err != nil {
			return nil, err
		}
		p.Tenant = ansA
		p.Accepted = ansA.Status == http.StatusOK
		p.Resourcedir = ansB
		p.SameAnswer = p.Accepted && differRule(cmpQuery{Rule: p.Construct}, ansA, ansB) == ""
		if p.Accepted {
			accepted++
		}
	}
	rep.Probes = probes
	switch accepted {
	case 0:
		rep.Filters = string(dialectAssetic)
		rep.Advice = "the tenant refuses every construct the real service does not document: -filters assetic (the default) fits it."
	case len(probes):
		rep.Filters = string(dialectKendo)
		rep.Advice = "the tenant accepts Kendo's whole grammar: -filters kendo fits it."
	default:
		rep.Filters = string(dialectAssetic)
		rep.Advice = "the tenant accepts some of what the real service does not document (see the probes): keep -filters assetic, so that a client relying on the rest fails here first, or use kendo knowing it accepts more than the tenant."
	}
	return rep, nil
}

// writeText writes the report for people.
func (rep *cmpReport) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "resourcedir compare: %d queries against %s (%d resources) and %s\n\n", rep.Queries, rep.From, rep.Resources, rep.Against)
	agree, differ := 0, 0
	for _, r := range rep.Rules {
		verdict := "agrees "
		if r.Differ > 0 {
			verdict = "DIFFERS"
			differ++
		} else {
			agree++
		}
		fmt.Fprintf(&b, "%s  %s (%d queries", verdict, r.Rule, r.Queries)
		if r.Differ > 0 {
			fmt.Fprintf(&b, ", %d differ", r.Differ)
		}
		b.WriteString(")\n")
		for _, e := range r.Examples {
			fmt.Fprintf(&b, "    GET /api/v2/resource?%s\n      tenant:      %s\n      resourcedir: %s\n", e.Query, e.Tenant, e.Resourcedir)
		}
	}
	b.WriteString("\nFilter dialect:\n")
	for _, p := range rep.Probes {
		verdict := "refuses"
		if p.Accepted {
			verdict = "accepts"
			switch {
			case p.SameAnswer:
				verdict += " (answering as resourcedir does)"
			case p.Resourcedir.Status == http.StatusOK:
				verdict += " (answering otherwise than resourcedir)"
			}
		}
		fmt.Fprintf(&b, "  the tenant %s %s: %d\n", verdict, p.Construct, p.Tenant.Status)
	}
	fmt.Fprintf(&b, "  So %s\n\n%d rules agree, %d differ.\n", rep.Advice, agree, differ)
	if differ > 0 {
		b.WriteString("A difference means a client tested against resourcedir may behave otherwise against the tenant: check the\nqueries above by hand, and write your client's tests so they do not depend on that rule.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// localResourcedir serves a resourcedir seeded with seed on a loopback port
// of its own, as -seed seeds one; stop ends it.
func localResourcedir(seed []byte) (base string, stop func(), err error) {
	resources, err := decodeSeed(seed)
	if err != nil {
		return "", nil, fmt.Errorf("compare: the tenant's directory does not seed a resourcedir: %s", describeError(err))
	}
	cfg := defaultConfig()
	cfg.Filters = string(dialectKendo) // the probes need answers to compare with
	cfg.JournalSize = journalOff
	cfg.seedResources = resources
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("compare: a local resourcedir: %w", err)
	}
	srv := &http.Server{Handler: newServer(cfg, newStore(nil), nil), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at stop
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// runCompare is `resourcedir compare -from URL [-auth user:token]
// [-queries N] [-rand-seed S] [-filters D] [-rate R] [-report json] [-b URL [-b-auth user:token]]`.
func runCompare(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	cannot := func(err error) error { return &exitError{2, fmt.Errorf("compare: %w", err)} }
	var o importOptions
	fs := flag.NewFlagSet("resourcedir compare", flag.ContinueOnError)
	importFlags(fs, &o)
	n := fs.Int("queries", 300, "how many list queries to send to each")
	seed := fs.Uint64("rand-seed", 1, "the same `seed` and data give the same queries")
	report := fs.String("report", "text", "report `format`: text, or json for machines")
	against := fs.String("b", "", "compare with the resourcedir at this base `URL` instead of one in this process")
	againstAuth := fs.String("b-auth", "", "HTTP Basic credentials for -b, `user:token` (when it runs with -auth)")
	running := fs.String("filters", string(dialectAssetic), "the filter `dialect` you run resourcedir with: assetic or kendo; a tenant that accepts another is a difference")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: resourcedir compare -from URL [-auth user:token] [-queries N] [-rand-seed S] [-filters D] [-rate R] [-report json] [-b URL [-b-auth user:token]]\n\n"+
			"Reads the tenant's directory, loads it into a resourcedir, sends both the same read-only list queries and\n"+
			"reports by rule where they answer differently. Only GET /api/v2/resource is sent to the tenant.\n"+
			"Exits 0 when nothing differs, 1 when something does, 2 when it could not compare.")
		fs.PrintDefaults()
	}
	if err := parseSubcommand(fs, args, 0, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return cannot(err)
	}
	switch {
	case *n < 1:
		return cannot(fmt.Errorf("-queries must be at least 1, not %d", *n))
	case *report != "text" && *report != "json":
		return cannot(fmt.Errorf("-report must be text or json, not %q", *report))
	case *againstAuth != "" && *against == "":
		return cannot(errors.New("-b-auth is for the server -b names; give -b too"))
	case *againstAuth != "" && !strings.Contains(*againstAuth, ":"):
		return cannot(errors.New("-b-auth must be user:token"))
	}
	if _, err := parseDialect(*running); err != nil {
		return cannot(fmt.Errorf("-filters: %w", err))
	}
	tenant, err := o.reader(environ)
	if err != nil {
		return cannot(err)
	}
	var b *directoryReader
	if *against != "" {
		if b, err = newDirectoryReader(*against, *againstAuth, 0); err != nil {
			return cannot(fmt.Errorf("-b: %w", err))
		}
	}
	items, err := tenant.readAll(ctx, stderr)
	if err != nil {
		return cannot(err)
	}
	againstName := ""
	if b != nil {
		againstName = b.base
	} else {
		file, err := importSeedFile(items, nil)
		if err != nil {
			return cannot(err)
		}
		base, stop, err := localResourcedir(file)
		if err != nil {
			return &exitError{2, err}
		}
		defer stop()
		if b, err = newDirectoryReader(base, "", 0); err != nil {
			return cannot(err)
		}
		againstName = "resourcedir in this process"
	}
	data := newCmpData(items)
	got, err := compareDirectories(ctx, tenant, b, buildQueries(data, *n, *seed), buildProbes(data))
	if err != nil {
		return cannot(err)
	}
	got.From, got.Against, got.Resources = tenant.base, againstName, len(items)
	if *report == "json" {
		out, err := json.MarshalIndent(got, "", "  ")
		if err == nil {
			_, err = stdout.Write(append(out, '\n'))
		}
		if err != nil {
			return cannot(err)
		}
	} else if err := got.writeText(stdout); err != nil {
		return cannot(err)
	}
	var differs []string
	if got.Differs {
		differs = append(differs, "resourcedir answers some queries otherwise than the tenant")
	}
	if tenant := got.tenantDialect(); tenant != *running {
		differs = append(differs, fmt.Sprintf("the tenant's filter dialect is %s, not the -filters %s you run resourcedir with", tenant, *running))
	}
	if len(differs) > 0 {
		return &exitError{1, fmt.Errorf("compare: %s (see the report)", strings.Join(differs, "; "))}
	}
	return nil
}

// tenantDialect names what the tenant accepted of the probes: assetic
// (none), kendo (all) or "partly kendo", which no -filters matches.
func (rep *cmpReport) tenantDialect() string {
	accepted := 0
	for _, p := range rep.Probes {
		if p.Accepted {
			accepted++
		}
	}
	switch accepted {
	case 0:
		return string(dialectAssetic)
	case len(rep.Probes):
		return string(dialectKendo)
	}
	return "partly kendo"
}
