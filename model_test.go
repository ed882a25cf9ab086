package resourcedir

// Named after no source file: a randomised model of the whole API.

// TestModel drives the server with thousands of random requests and checks
// every answer against a reference model: a plain slice of the resources the
// contract says should exist, scanned and evaluated with
// straightforward code on strings and maps. Nothing in the model uses the
// package's parser, matcher, comparator or validation; only the HTTP surface
// is shared. After every step the store's invariants must hold too.
//
// A failure prints its seed; reproduce it with
//
//	go test -run 'TestModel$' -model.seed=N [-model.steps=M]
//
// RESOURCEDIR_LONG=1 runs many more steps over several random seeds.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

var (
	modelSeed     = flag.Uint64("model.seed", 0, "seed of TestModel (0: a fixed seed; under RESOURCEDIR_LONG, two fixed and four random ones)")
	modelSeedSize = flag.Int("model.seedsize", 300, "resources in the seed every namespace of TestModel starts from")
	modelSteps    = flag.Int("model.steps", 0, "steps per seed of TestModel (0: 2000, or 40000 under RESOURCEDIR_LONG)")
)

func TestModel(t *testing.T) {
	t.Parallel()
	steps := *modelSteps
	if steps == 0 {
		steps = 2000
		if longTests() {
			steps = 40000
		}
	}
	seeds := []uint64{20251121}
	switch {
	case *modelSeed != 0:
		seeds = []uint64{*modelSeed}
	case longTests():
		seeds = []uint64{1, 20251121}
		for range 4 {
			seeds = append(seeds, uint64(time.Now().UnixNano())^rand.Uint64())
		}
	case testing.Short():
		steps /= 3
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runModel(t, seed, steps)
		})
	}
}

// The model's view of the contract.

// mStringFields are the string properties of a resource other than Id and
// Status, in wire order.
var mStringFields = []string{"DisplayName", "FirstName", "Surname", "Company", "Position",
	"ContractorOrganization", "ExternalID", "Phone", "Mobile", "Fax", "Email", "AddressComment"}

// mWireOrder is the property order of a resource on the wire.
var mWireOrder = []string{"Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Status",
	"StatusId", "ContractorOrganization", "Types", "ExternalID", "Phone", "Mobile", "Fax", "Email", "AddressComment", "Address"}

// mEditable are the keys a PUT body must carry.
var mEditable = []string{"Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Phone",
	"Mobile", "Fax", "Email", "AddressComment", "ExternalID", "Status", "Types"}

// mFilterFields are the fields a filter or a sort may name (the model
// runs -filters kendo, which takes ContractorOrganization).
var mFilterFields = []string{"Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Status",
	"StatusId", "ContractorOrganization", "ExternalID", "Phone", "Mobile", "Fax", "Email", "AddressComment"}

var mTypeIDs = map[string]int{"Team": 2, "Customer": 4, "Contractor": 8, "Employee": 16, "Company": 32}

type mResource struct {
	id      string
	vals    map[string]*string // mStringFields; nil is null
	status  string             // Active or Inactive
	types   []string           // canonical names
	address any                // decoded JSON object, or nil
}

func (m *mResource) statusID() int {
	if m.status == "Inactive" {
		return 2
	}
	return 1
}

// get returns a filterable field's value; false means null.
func (m *mResource) get(f string) (string, bool) {
	switch f {
	case "Id":
		return m.id, true
	case "Status":
		return m.status, true
	case "StatusId":
		return strconv.Itoa(m.statusID()), true
	}
	v := m.vals[f]
	if v == nil {
		return "", false
	}
	return *v, true
}

// wire is the resource as the responses should carry it, decoded the way
// encoding/json decodes into an any.
func (m *mResource) wire(links bool) map[string]any {
	out := map[string]any{"Id": m.id, "Status": m.status, "StatusId": float64(m.statusID()), "Address": m.address}
	for _, f := range mStringFields {
		if v := m.vals[f]; v != nil {
			out[f] = *v
		} else {
			out[f] = nil
		}
	}
	types := []any{}
	for _, name := range m.types {
		e := map[string]any{"Id": float64(mTypeIDs[name]), "Type": name}
		if links {
			e["_links"], e["_embedded"] = []any{}, nil
		}
		types = append(types, e)
	}
	out["Types"] = types
	if links {
		out["_links"], out["_embedded"] = []any{}, nil
	}
	return out
}

// Request bodies are generated as a list of properties, so the model can
// judge them without parsing JSON.

type propKind uint8

const (
	pNull  propKind = iota
	pValue          // a string, a Types array or an Address object
	pWrong          // a JSON value of the wrong type
)

type mTypeEntry struct {
	raw  string
	name string // canonical type; "" when the entry is invalid
}

type mProp struct {
	name    string // canonical property name ("" for an unknown property)
	key     string // as written
	kind    propKind
	str     string       // pValue of a string property
	raw     string       // pWrong, unknown properties, Address objects
	entries []mTypeEntry // pValue of Types
	address any          // pValue of Address, decoded
}

type mBody struct {
	props  []mProp
	broken string // when set, the body is this malformed text
}

func (b *mBody) find(name string) *mProp {
	for i := range b.props {
		if b.props[i].name == name {
			return &b.props[i]
		}
	}
	return nil
}

func (b *mBody) set(p mProp) {
	if q := b.find(p.name); q != nil {
		*q = p
		return
	}
	b.props = append(b.props, p)
}

func (b *mBody) remove(name string) {
	b.props = slices.DeleteFunc(b.props, func(p mProp) bool { return p.name == name })
}

func (b *mBody) render() []byte {
	if b.broken != "" {
		return []byte(b.broken)
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, p := range b.props {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(p.key)
		buf.Write(k)
		buf.WriteByte(':')
		switch {
		case p.kind == pNull:
			buf.WriteString("null")
		case p.kind == pWrong || p.name == "" || p.name == "Address":
			buf.WriteString(p.raw)
		case p.name == "Types":
			buf.WriteByte('[')
			for j, e := range p.entries {
				if j > 0 {
					buf.WriteByte(',')
				}
				buf.WriteString(e.raw)
			}
			buf.WriteByte(']')
		default:
			v, _ := json.Marshal(p.str)
			buf.Write(v)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// judge applies the create or update rules of the contract to a body. It
// returns the resource the body describes (without Id) and the properties
// at fault; the body is valid when faults is empty.
func judge(b *mBody, update bool) (res *mResource, faults []string) {
	res = &mResource{vals: map[string]*string{}, status: "Active", types: []string{}}
	fault := func(p string) {
		if !slices.Contains(faults, p) {
			faults = append(faults, p)
		}
	}
	if update {
		for _, k := range mEditable {
			if b.find(k) == nil {
				fault(k)
			}
		}
	}
	for _, p := range b.props {
		switch p.name {
		case "", "Id":
		case "Status":
			switch {
			case p.kind == pWrong:
				fault("Status")
			case p.kind == pNull:
				if update {
					fault("Status")
				}
			case strings.EqualFold(p.str, "Active"):
				res.status = "Active"
			case strings.EqualFold(p.str, "Inactive"):
				res.status = "Inactive"
			default:
				fault("Status")
			}
		case "Types":
			switch p.kind {
			case pWrong:
				fault("Types")
			case pValue:
				for _, e := range p.entries {
					if e.name == "" {
						fault("Types")
					} else if !slices.Contains(res.types, e.name) {
						res.types = append(res.types, e.name)
					}
				}
			}
		case "Address":
			switch {
			case update:
			case p.kind == pWrong:
				fault("Address")
			case p.kind == pValue:
				res.address = p.address
			}
		default:
			switch p.kind {
			case pWrong:
				fault(p.name)
			case pValue:
				s := p.str
				res.vals[p.name] = &s
			}
		}
	}
	length := func(f string) int {
		if v := res.vals[f]; v != nil {
			return utf8.RuneCountInString(*v)
		}
		return 0
	}
	part := func(f string) string {
		if v := res.vals[f]; v != nil {
			return strings.TrimSpace(*v)
		}
		return ""
	}
	if length("FirstName") > 50 {
		fault("FirstName")
	}
	if length("Surname") > 50 {
		fault("Surname")
	}
	if length("Company") > 100 {
		fault("Company")
	}
	first, surname, company := part("FirstName"), part("Surname"), part("Company")
	if first == "" && surname == "" && company == "" {
		fault("Company")
	}
	if part("DisplayName") != "" {
		if length("DisplayName") > 100 {
			fault("DisplayName")
		}
	} else {
		var parts []string
		for _, p := range []string{first, surname, company} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		if gen := strings.Join(parts, " "); gen != "" {
			if utf8.RuneCountInString(gen) > 100 {
				fault("DisplayName")
			} else {
				res.vals["DisplayName"] = &gen
			}
		}
	}
	return res, faults
}

// Random generation.

type gen struct {
	r     *rand.Rand
	model *[]*mResource
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// uuid returns a random GUID from the seeded stream, so that a run repeats.
func (g *gen) uuid() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	u, err := uuid.NewRandomFromReader(bytes.NewReader(b[:]))
	if err != nil {
		panic(err)
	}
	return u.String()
}

func pick[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

// caseOf writes a property or field name in a random case: names are
// matched case-insensitively.
func (g *gen) caseOf(s string) string {
	switch g.r.IntN(8) {
	case 0:
		return strings.ToLower(s)
	case 1:
		return strings.ToUpper(s)
	case 2:
		b := []rune(s)
		for i := range b {
			if g.chance(0.5) {
				b[i] = []rune(strings.ToUpper(string(b[i])))[0]
			}
		}
		return string(b)
	}
	return s
}

var (
	poolFirst   = []string{"Ada", "ada", "ADA", "Grace", "Émile", "émile", "Zoë", "Søren", "O'Brien", "İlkay", "Straße", " Ada ", "\tAlan", "", "  ", strings.Repeat("é", 50), strings.Repeat("é", 51)}
	poolSurname = []string{"Lovelace", "lovelace", "Hopper", "Zola", "zola", "d'Arc", "x''y", "Ünal", "", " ", strings.Repeat("s", 50), strings.Repeat("ş", 51)}
	poolCompany = []string{"Acme", "acme", "ACME", "Analytical Engines", "Globex (UK) & Co", "a~b(c)&d", "50%off", "", "   ", strings.Repeat("c", 100), strings.Repeat("c", 101)}
	poolDisplay = []string{"Ada Lovelace", "ada lovelace", "Zola", "Émile Zola", "The 'Boss'", "", "  ", strings.Repeat("d", 100), strings.Repeat("ď", 101)}
	poolEmail   = []string{"ada@example.org", "ADA@example.org", "grace@navy.mil", "o'brien@x.ie", "", " "}
	poolMisc    = []string{"", "x", "X", "Engineer", "engineer", "+44 20 7946 0000", "020 7946 0000", "ext-1", "EXT-1", "Zürich", "~(&)'", "é", "E"}
	poolStatus  = []string{"Active", "active", "ACTIVE", "Inactive", "inactive", "iNaCtIvE"}
	poolWrong   = []string{"5", "true", "{}", "[]", `["x"]`, "1.5"}
	poolBroken  = []string{"", "   ", "[]", "null", `"x"`, "5", "{", `{"FirstName":"Ada"`, `{"FirstName":}`, `{"FirstName":"Ada"} {}`, `{"FirstName" "Ada"}`}
)

func (g *gen) poolFor(f string) []string {
	switch f {
	case "FirstName":
		return poolFirst
	case "Surname":
		return poolSurname
	case "Company":
		return poolCompany
	case "DisplayName":
		return poolDisplay
	case "Email":
		return poolEmail
	}
	return poolMisc
}

func (g *gen) stringProp(f string, wrong float64) mProp {
	p := mProp{name: f, key: g.caseOf(f)}
	switch {
	case g.chance(wrong):
		p.kind, p.raw = pWrong, pick(g, poolWrong)
	case g.chance(0.2):
		p.kind = pNull
	default:
		p.kind, p.str = pValue, pick(g, g.poolFor(f))
	}
	return p
}

func (g *gen) typesProp(wrong float64) mProp {
	p := mProp{name: "Types", key: g.caseOf("Types")}
	switch {
	case g.chance(wrong):
		p.kind, p.raw = pWrong, pick(g, []string{`"Employee"`, `{"Type":"Team"}`, "5", "true"})
		return p
	case g.chance(0.15):
		p.kind = pNull
		return p
	}
	p.kind = pValue
	names := []string{"Team", "Customer", "Contractor", "Employee", "Company"}
	for range g.r.IntN(4) {
		if g.chance(wrong) {
			p.entries = append(p.entries, mTypeEntry{raw: pick(g, []string{
				`{"Type":"Boss"}`, `{"Id":2}`, `{"Type":null}`, `{"Type":16}`, `"Employee"`, `null`, `{}`, `[{"Type":"Team"}]`})})
			continue
		}
		name := pick(g, names)
		key, _ := json.Marshal(g.caseOf("Type"))
		val, _ := json.Marshal(g.caseOf(name))
		raw := fmt.Sprintf(`{%s:%s}`, key, val)
		switch g.r.IntN(3) {
		case 0:
			raw = fmt.Sprintf(`{"Id":%d,%s:%s,"_links":[]}`, g.r.IntN(64), key, val)
		case 1:
			raw = fmt.Sprintf(`{%s:%s,"Extra":{"a":[1,2]}}`, key, val)
		}
		p.entries = append(p.entries, mTypeEntry{raw: raw, name: name})
	}
	return p
}

func (g *gen) addressProp(wrong float64) mProp {
	p := mProp{name: "Address", key: g.caseOf("Address")}
	switch {
	case g.chance(wrong):
		p.kind, p.raw = pWrong, pick(g, []string{`"1 Main St"`, "[1,2]", "5", "false"})
	case g.chance(0.3):
		p.kind = pNull
	default:
		p.kind = pValue
		p.raw = pick(g, []string{
			`{}`,
			`{"Street": "1 Main St", "City": "Zürich", "Zip": 8000}`,
			`{"Lines":["a","b"],"Nested":{"x":null,"y":[true,1.5e3]},"Note":"~'&<>"}`,
			`{ "City" : "Paris" , "Country" : "FR" }`,
		})
		if err := json.Unmarshal([]byte(p.raw), &p.address); err != nil {
			panic(err)
		}
	}
	return p
}

// extras are properties the contract says are ignored.
func (g *gen) extras(b *mBody) {
	for range g.r.IntN(3) {
		key := pick(g, []string{"Foo", "StatusId", "_links", "_embedded", "Bar"})
		raw := pick(g, []string{"1", "[]", "null", `"x"`, `{"Company":"x"}`})
		if slices.ContainsFunc(b.props, func(p mProp) bool { return strings.EqualFold(p.key, key) }) {
			continue
		}
		b.props = append(b.props, mProp{key: g.caseOf(key), raw: raw})
	}
}

func (g *gen) shuffle(b *mBody) {
	g.r.Shuffle(len(b.props), func(i, j int) { b.props[i], b.props[j] = b.props[j], b.props[i] })
}

func (g *gen) createBody() *mBody {
	b := &mBody{}
	if g.chance(0.02) {
		b.broken = pick(g, poolBroken)
		return b
	}
	wrong := 0.0
	if g.chance(0.1) {
		wrong = 0.15
	}
	for _, f := range mStringFields {
		if g.chance(0.6) {
			b.set(g.stringProp(f, wrong))
		}
	}
	if g.chance(0.7) {
		p := mProp{name: "Status", key: g.caseOf("Status")}
		switch {
		case g.chance(wrong):
			p.kind, p.raw = pWrong, pick(g, poolWrong)
		case g.chance(0.1):
			p.kind = pNull
		case g.chance(0.05):
			p.kind, p.str = pValue, pick(g, []string{"Deleted", "", " Active", "1"})
		default:
			p.kind, p.str = pValue, pick(g, poolStatus)
		}
		b.set(p)
	}
	if g.chance(0.6) {
		b.set(g.typesProp(wrong))
	}
	if g.chance(0.3) {
		b.set(g.addressProp(wrong))
	}
	if g.chance(0.1) {
		// An Id on create is ignored.
		b.set(mProp{name: "Id", key: g.caseOf("Id"), kind: pValue, str: pick(g, []string{g.uuid(), "nope", ""})})
	}
	g.extras(b)
	g.shuffle(b)
	return b
}

// updateBody returns a full-replacement body for cur with some properties
// changed and, now and then, a rule broken.
func (g *gen) updateBody(id string, cur *mResource) *mBody {
	b := &mBody{}
	if g.chance(0.015) {
		b.broken = pick(g, poolBroken)
		return b
	}
	wrong := 0.0
	if g.chance(0.08) {
		wrong = 0.15
	}
	idProp := mProp{name: "Id", key: g.caseOf("Id"), kind: pValue, str: id}
	switch {
	case g.chance(0.5):
		idProp.str = strings.ToUpper(id)
	case g.chance(0.03):
		idProp.str = g.uuid()
	case g.chance(0.02):
		idProp.kind = pNull
	case g.chance(0.02):
		idProp.kind, idProp.raw = pWrong, "5"
	}
	b.set(idProp)
	for _, f := range mStringFields {
		if f == "ContractorOrganization" && g.chance(0.3) {
			continue // optional in a PUT: left out, it becomes null
		}
		if cur != nil && g.chance(0.5) {
			p := mProp{name: f, key: g.caseOf(f), kind: pNull}
			if v := cur.vals[f]; v != nil {
				p.kind, p.str = pValue, *v
			}
			b.set(p)
			continue
		}
		b.set(g.stringProp(f, wrong))
	}
	status := mProp{name: "Status", key: g.caseOf("Status"), kind: pValue, str: pick(g, poolStatus)}
	switch {
	case g.chance(wrong):
		status.kind, status.raw = pWrong, pick(g, poolWrong)
	case g.chance(0.03):
		status.kind = pNull
	case g.chance(0.03):
		status.str = "Deleted"
	}
	b.set(status)
	b.set(g.typesProp(wrong))
	if g.chance(0.2) {
		// Ignored on update; only values that are not of the wrong type,
		// whose fate the contract leaves open.
		b.set(g.addressProp(0))
	}
	if g.chance(0.08) {
		for range 1 + g.r.IntN(2) {
			b.remove(pick(g, mEditable))
		}
	}
	g.extras(b)
	g.shuffle(b)
	return b
}

// Filters.

type mFilter struct {
	// a logic node
	or    bool
	terms []*mFilter
	// a condition
	field, op string
	kind      byte // 's' string, 'i' integer, 'n' null, 0 none (unary)
	str       string
	num       int
	symbol    bool   // written = < <= > >= instead of ~op~
	operand   string // ignored operand after a unary operator
}

var (
	mBinaryOps = []string{"eq", "neq", "lt", "lte", "gt", "gte", "startswith", "endswith", "contains", "doesnotcontain", "notsubstringof"}
	mUnaryOps  = []string{"isnull", "isnotnull", "isempty", "isnotempty", "isnullorempty", "isnotnullorempty"}
	mSymbols   = map[string]string{"eq": "=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
)

func (g *gen) filter(depth int) *mFilter {
	if depth < 3 && g.chance(0.35) {
		n := &mFilter{or: g.chance(0.5)}
		for range 2 + g.r.IntN(2) {
			n.terms = append(n.terms, g.filter(depth+1))
		}
		return n
	}
	return g.cond()
}

// sample returns a field value of a random resource of the model, so that
// filters hit.
func (g *gen) sample(f string) (string, bool) {
	if len(*g.model) == 0 {
		return "", false
	}
	return pick(g, *g.model).get(f)
}

func (g *gen) cond() *mFilter {
	f := pick(g, mFilterFields)
	if g.chance(0.3) {
		f = pick(g, []string{"DisplayName", "FirstName", "Surname", "Company", "ExternalID", "Email", "Status", "Id"})
	}
	c := &mFilter{field: f}
	if g.chance(0.2) {
		c.op = pick(g, mUnaryOps)
		if g.chance(0.2) {
			c.operand = pick(g, []string{"undefined", "null"})
		}
		return c
	}
	if f == "StatusId" {
		c.op = pick(g, []string{"eq", "neq", "lt", "lte", "gt", "gte"})
		c.kind, c.num = 'i', g.r.IntN(5)-1
		c.symbol = mSymbols[c.op] != "" && g.chance(0.3)
		return c
	}
	c.op = pick(g, mBinaryOps)
	if c.op == "eq" && g.chance(0.5) || c.op == "neq" && g.chance(0.3) {
		c.op = pick(g, []string{"eq", "eq", "neq"})
	}
	c.symbol = mSymbols[c.op] != "" && g.chance(0.3)
	if (c.op == "eq" || c.op == "neq") && !c.symbol && g.chance(0.08) {
		c.kind = 'n'
		return c
	}
	c.kind = 's'
	v, ok := g.sample(f)
	switch {
	case !ok || g.chance(0.25):
		v = pick(g, slices.Concat(g.poolFor(f), []string{"a", "o'", "'", "''x", "z", "~and~", "%20"}))
	case g.chance(0.3):
		v = g.caseOf(v)
	}
	if r := []rune(v); len(r) > 1 && (c.op != "eq" && c.op != "neq") && g.chance(0.6) {
		i := g.r.IntN(len(r))
		j := i + g.r.IntN(len(r)-i) + 1
		v = string(r[i:j])
	}
	c.str = v
	return c
}

// render writes the filter in Kendo syntax, with random but equivalent
// spellings: names in any case, symbol forms, redundant parentheses.
func (g *gen) render(n *mFilter, parentAnd bool) string {
	var s string
	if n.terms != nil {
		sep := "~and~"
		if n.or {
			sep = "~or~"
		}
		parts := make([]string, len(n.terms))
		for i, t := range n.terms {
			parts[i] = g.render(t, !n.or)
		}
		s = strings.Join(parts, g.caseOf(sep))
		if n.or && parentAnd || g.chance(0.15) {
			s = "(" + s + ")"
		}
		return s
	}
	var b strings.Builder
	b.WriteString(g.caseOf(n.field))
	if n.symbol {
		b.WriteString(mSymbols[n.op])
	} else {
		b.WriteString("~" + g.caseOf(n.op))
		if n.kind != 0 || n.operand != "" {
			b.WriteByte('~')
		}
	}
	switch n.kind {
	case 's':
		b.WriteString("'" + strings.ReplaceAll(n.str, "'", "''") + "'")
	case 'i':
		b.WriteString(strconv.Itoa(n.num))
	case 'n':
		b.WriteString(g.caseOf("null"))
	case 0:
		b.WriteString(n.operand)
	}
	s = b.String()
	if g.chance(0.05) {
		s = "(" + s + ")"
	}
	return s
}

// evalFilter is the model's reading of section 5: case-insensitive text,
// positive operators never match null, negative ones are their exact
// negation.
func evalFilter(n *mFilter, m *mResource) bool {
	if n.terms != nil {
		for _, t := range n.terms {
			if evalFilter(t, m) == n.or {
				return n.or
			}
		}
		return !n.or
	}
	switch n.op {
	case "neq":
		return !evalPositive(n, "eq", m)
	case "doesnotcontain", "notsubstringof":
		return !evalPositive(n, "contains", m)
	case "isnotnull":
		return !evalPositive(n, "isnull", m)
	case "isnotempty":
		return !evalPositive(n, "isempty", m)
	case "isnotnullorempty":
		return !evalPositive(n, "isnullorempty", m)
	}
	return evalPositive(n, n.op, m)
}

func evalPositive(n *mFilter, op string, m *mResource) bool {
	v, ok := m.get(n.field)
	switch op {
	case "isnull":
		return !ok
	case "isempty":
		return ok && v == ""
	case "isnullorempty":
		return !ok || v == ""
	}
	if n.kind == 'n' { // eq null is isnull
		return !ok
	}
	if !ok {
		return false
	}
	if n.kind == 'i' {
		id := m.statusID()
		switch op {
		case "eq":
			return id == n.num
		case "lt":
			return id < n.num
		case "lte":
			return id <= n.num
		case "gt":
			return id > n.num
		case "gte":
			return id >= n.num
		}
		panic(op)
	}
	a, b := []rune(strings.ToLower(v)), []rune(strings.ToLower(n.str))
	switch op {
	case "eq":
		return slices.Equal(a, b)
	case "lt":
		return slices.Compare(a, b) < 0
	case "lte":
		return slices.Compare(a, b) <= 0
	case "gt":
		return slices.Compare(a, b) > 0
	case "gte":
		return slices.Compare(a, b) >= 0
	case "startswith":
		return len(a) >= len(b) && slices.Equal(a[:len(b)], b)
	case "endswith":
		return len(a) >= len(b) && slices.Equal(a[len(a)-len(b):], b)
	case "contains":
		for i := 0; i+len(b) <= len(a); i++ {
			if slices.Equal(a[i:i+len(b)], b) {
				return true
			}
		}
		return false
	}
	panic(op)
}

var mBadFilters = []string{
	"Foo~eq~'x'", "FirstName~equals~'x'", "FirstName~eq~'x", "FirstName~eq~'x'~and~", "(FirstName~eq~'x'",
	"FirstName~eq~'x')", "FirstName~eq~x", "~eq~'x'", "FirstName~gt~null", "FirstName~eq~'a'~xor~Surname~eq~'b'",
	"FirstName~eq~", "Types~eq~'Team'", "Address~isnull", "StatusId~eq~'one'",
}

type mSort struct {
	field string
	desc  bool
}

// modelList answers a list request from the model: every resource that
// matches, stably sorted (creation order breaks ties).
func modelList(model []*mResource, filter *mFilter, sorts []mSort) []*mResource {
	var out []*mResource
	for _, m := range model {
		if filter == nil || evalFilter(filter, m) {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b *mResource) int {
		for _, k := range sorts {
			var c int
			if k.field == "StatusId" {
				c = a.statusID() - b.statusID()
			} else {
				va, oka := a.get(k.field)
				vb, okb := b.get(k.field)
				switch {
				case oka && okb:
					c = slices.Compare([]rune(strings.ToLower(va)), []rune(strings.ToLower(vb)))
				case oka:
					c = 1
				case okb:
					c = -1
				}
			}
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return out
}

// The run.

type modelRun struct {
	t     *testing.T
	seed  uint64
	steps int
	step  int
	g     *gen
	store *store // the current namespace's
	srv   *Server
	snap  *snapshotter
	model []*mResource // the current namespace's
	trace []string     // the last requests, for the failure report
	stats map[string]int
	// Each step picks one of modelSpaces; the model of each is kept apart,
	// and requests go to /ns/{name} unless it is the default.
	spaces map[string]*modelSpace
	cur    string
	// seedModel is the seed every namespace starts from and resets to.
	seedModel []*mResource
}

// seedForModel returns n valid create bodies from g as a seed, and the model's
// resources for them (without their Ids, which the server generates).
func seedForModel(g *gen, n int) ([]byte, []*mResource) {
	var items [][]byte
	var model []*mResource
	for len(model) < n {
		b := g.createBody()
		if b.broken != "" {
			continue
		}
		b.remove("Id") // a seed keeps a given Id; a create ignores it
		want, faults := judge(b, false)
		if len(faults) > 0 {
			continue
		}
		if _, err := decodeSeed(append(append([]byte("["), b.render()...), ']')); err != nil {
			continue // a property a create ignores, which a seed refuses
		}
		items = append(items, b.render())
		model = append(model, want)
	}
	return append(append([]byte("["), bytes.Join(items, []byte(","))...), ']'), model
}

// adminReset resets the namespace: back to the seed, as every test starts.
func (run *modelRun) adminReset() {
	if code, body := run.do(http.MethodPost, "/__admin/reset", nil); code != http.StatusOK {
		run.fatalf("reset: %d %s", code, body)
	}
	run.model = slices.Clone(run.seedModel)
}

// clear empties the namespace, seed included, until the next reset.
func (run *modelRun) clear() {
	if code, body := run.do(http.MethodDelete, "/__admin/resources", nil); code != http.StatusOK {
		run.fatalf("clear: %d %s", code, body)
	}
	run.model = nil
}

// modelSpaces are the namespaces the model test spreads its steps over.
var modelSpaces = []string{defaultNamespace, "model-a", "model-b"}

type modelSpace struct {
	store *store
	model []*mResource
}

// use makes name the namespace the next steps act on.
func (run *modelRun) use(name string) {
	run.spaces[run.cur].model = run.model
	run.cur = name
	sp := run.spaces[name]
	if sp == nil {
		ns, _, err := run.srv.addNamespace(name, nil)
		if err != nil {
			run.fatalf("namespace %s: %v", name, err)
		}
		sp = &modelSpace{store: ns.store, model: slices.Clone(run.seedModel)}
		run.spaces[name] = sp
	}
	run.store, run.model = sp.store, sp.model
}

func runModel(t *testing.T, seed uint64, steps int) {
	// Every namespace starts from a seed, shared by all of them, which the
	// steps write over; generated Ids come from the seed too, so that a
	// failure repeats exactly, orders by Id included.
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	seedBody, seedModel := seedForModel(g, *modelSeedSize)
	seedResources, err := decodeSeed(seedBody)
	if err != nil {
		t.Fatalf("the model's seed: %v", err)
	}
	store := newStore(&seed)
	logger := slog.New(slog.DiscardHandler)
	cfg := kendoConfig()
	cfg.seedResources = seedResources
	srv := newServer(cfg, store, nil)
	seedIDs, _ := store.all()
	for i, r := range seedIDs {
		seedModel[i].id = r.id()
	}
	run := &modelRun{
		t: t, seed: seed, steps: steps, store: store, srv: srv,
		snap:      newSnapshotter(filepath.Join(t.TempDir(), "model.gob"), srv, logger),
		stats:     map[string]int{},
		spaces:    map[string]*modelSpace{defaultNamespace: {store: store, model: slices.Clone(seedModel)}},
		cur:       defaultNamespace,
		seedModel: seedModel,
		model:     slices.Clone(seedModel),
	}
	g.model = &run.model
	run.g = g
	t.Logf("seed %d, %d steps", seed, steps)
	counts := map[string]int{}
	for run.step = 1; run.step <= steps; run.step++ {
		run.use(modelSpaces[run.g.r.IntN(len(modelSpaces))])
		x := run.g.r.IntN(1000)
		if len(run.model) > len(run.seedModel)+400 {
			x = 993 // keep lists cheap: reset now and then
		}
		switch {
		case x < 340:
			counts["create"]++
			run.create()
		case x < 640:
			counts["update"]++
			run.update()
		case x < 990:
			counts["list"]++
			run.list()
		case x < 993:
			counts["snapshot"]++
			run.snapshotRoundTrip()
		case x < 995:
			counts["reset"]++
			run.adminReset()
		case x < 997:
			counts["clear"]++
			run.clear()
		default:
			counts["compare"]++
			run.compareAll()
		}
		if err := checkStore(run.store); err != nil {
			run.fatalf("store invariants broken: %v", err)
		}
	}
	for _, name := range modelSpaces {
		run.use(name)
		run.compareAll()
	}
	t.Logf("operations: %v; answers: %v; %d resources at the end", counts, run.stats, len(run.model))
}

func (run *modelRun) note(s string) {
	if len(run.trace) == 12 {
		run.trace = run.trace[1:]
	}
	run.trace = append(run.trace, fmt.Sprintf("step %d: %s", run.step, s))
}

func (run *modelRun) fatalf(format string, args ...any) {
	run.t.Helper()
	run.t.Fatalf("seed %d, step %d: %s\n\nreproduce: go test -run 'TestModel$' -model.seed=%d -model.steps=%d\nlast requests:\n  %s",
		run.seed, run.step, fmt.Sprintf(format, args...), run.seed, run.step, strings.Join(run.trace, "\n  "))
}

func (run *modelRun) do(method, target string, body []byte) (int, []byte) {
	run.t.Helper()
	if run.cur != defaultNamespace {
		target = "/ns/" + run.cur + target
	}
	var req *http.Request
	if body != nil {
		req = httptest.NewRequest(method, target, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	rec := httptest.NewRecorder()
	run.srv.ServeHTTP(rec, req)
	run.stats[fmt.Sprintf("%s %d", method, rec.Code)]++
	shown := string(body)
	if len(shown) > 300 {
		shown = shown[:300] + "…"
	}
	answer := rec.Body.String()
	if len(answer) > 300 {
		answer = answer[:300] + "…"
	}
	run.note(fmt.Sprintf("%s %s %s\n      -> %d %s", method, target, shown, rec.Code, answer))
	if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		run.fatalf("Content-Type %q", ct)
	}
	if rec.Header().Get("X-Request-Id") == "" {
		run.fatalf("no X-Request-Id")
	}
	return rec.Code, rec.Body.Bytes()
}

// checkError checks a 400's shape and that ModelState names every property
// the model found at fault.
func (run *modelRun) checkError(body []byte, faults []string) {
	run.t.Helper()
	var e struct {
		Message    *string
		ModelState map[string][]string
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Message == nil || *e.Message == "" {
		run.fatalf("error body %s is not {Message, ModelState}", body)
	}
	for _, f := range faults {
		named := false
		for k := range e.ModelState {
			if strings.EqualFold(k, f) || strings.HasPrefix(strings.ToLower(k), strings.ToLower(f)+"[") {
				named = true
			}
		}
		if !named {
			run.fatalf("the 400 does not name %s (model faults %v): %s", f, faults, body)
		}
	}
}

// checkResource compares one resource object of a response with the model.
// With raw, the property order is checked too.
func (run *modelRun) checkResource(got map[string]any, raw json.RawMessage, want *mResource, links bool) {
	run.t.Helper()
	if w := want.wire(links); !reflect.DeepEqual(got, w) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(w)
		run.fatalf("resource differs from the model:\n got %s\nwant %s", gj, wj)
	}
	if raw == nil {
		return
	}
	order := slices.Clone(mWireOrder)
	if links {
		order = append(order, "_links", "_embedded")
	}
	if keys, _ := topKeys(raw); !slices.Equal(keys, order) {
		run.fatalf("property order %v, want %v", keys, order)
	}
}

// decodeObject decodes one resource object of a response.
func (run *modelRun) decodeObject(raw []byte) map[string]any {
	run.t.Helper()
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		run.fatalf("resource %s: %v", raw, err)
	}
	return got
}

// topKeys returns the keys of a JSON object in the order written.

func (run *modelRun) find(id string) *mResource {
	for _, m := range run.model {
		if m.id == id {
			return m
		}
	}
	return nil
}

func (run *modelRun) create() {
	b := run.g.createBody()
	code, body := run.do(http.MethodPost, "/api/v2/resource", b.render())
	if b.broken != "" {
		if code != http.StatusBadRequest {
			run.fatalf("malformed body %q: status %d, want 400", b.broken, code)
		}
		run.checkError(body, nil)
		return
	}
	want, faults := judge(b, false)
	if len(faults) > 0 {
		if code != http.StatusBadRequest {
			run.fatalf("create with faults %v: status %d, want 400", faults, code)
		}
		run.checkError(body, faults)
		return
	}
	if code != http.StatusCreated {
		run.fatalf("valid create: status %d, want 201", code)
	}
	var resp struct {
		Data  []json.RawMessage
		Total *int
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Data) != 1 || resp.Total == nil || *resp.Total != 1 {
		run.fatalf("create response %s is not {Data: [one], Total: 1}", body)
	}
	if keys, _ := topKeys(body); !slices.Equal(keys, []string{"Data", "Total"}) {
		run.fatalf("create response keys %v", keys)
	}
	var idOnly struct{ Id string }
	json.Unmarshal(resp.Data[0], &idOnly)
	u, err := uuid.Parse(idOnly.Id)
	if err != nil || u.String() != idOnly.Id || u.Version() != 4 || u.Variant() != uuid.RFC4122 {
		run.fatalf("generated Id %q is not a lower-case v4 GUID", idOnly.Id)
	}
	if run.find(idOnly.Id) != nil {
		run.fatalf("generated Id %s is already in use", idOnly.Id)
	}
	want.id = idOnly.Id
	run.checkResource(run.decodeObject(resp.Data[0]), resp.Data[0], want, false)
	run.model = append(run.model, want)
}

func (run *modelRun) update() {
	g := run.g
	var id, pathID string
	var cur *mResource
	switch x := g.r.IntN(100); {
	case x < 88 && len(run.model) > 0:
		cur = pick(g, run.model)
		id, pathID = cur.id, cur.id
		if g.chance(0.3) {
			pathID = strings.ToUpper(id)
		}
	case x < 94:
		id = g.uuid()
		pathID = id
	default:
		pathID = pick(g, []string{"nope", "123", "0000", g.uuid() + "0", "xyz-" + g.uuid()[4:]})
		b := g.updateBody(g.uuid(), nil)
		code, body := run.do(http.MethodPut, "/api/v2/resource/"+pathID, b.render())
		if code != http.StatusBadRequest {
			run.fatalf("PUT on the non-GUID %q: status %d, want 400", pathID, code)
		}
		run.checkError(body, nil)
		return
	}
	b := g.updateBody(id, cur)
	want, faults := judge(b, true)
	if b.broken == "" {
		switch p := b.find("Id"); {
		case p == nil:
		case p.kind != pValue || !strings.EqualFold(p.str, id):
			faults = append(faults, "Id")
		}
	}
	if cur == nil && (b.broken != "" || len(faults) > 0) {
		// An unknown GUID with a faulty body: which answer wins is not
		// the contract's business; send a valid body instead.
		b = &mBody{props: []mProp{
			{name: "Company", key: "Company", kind: pValue, str: "Acme"},
			{name: "Status", key: "Status", kind: pValue, str: "Active"},
			{name: "Types", key: "Types", kind: pNull},
		}}
		for _, k := range mEditable {
			if b.find(k) == nil {
				b.props = append(b.props, mProp{name: k, key: k, kind: pNull})
			}
		}
		b.find("Id").kind, b.find("Id").str = pValue, id
		want, faults = judge(b, true)
	}
	code, body := run.do(http.MethodPut, "/api/v2/resource/"+pathID, b.render())
	switch {
	case b.broken != "":
		if code != http.StatusBadRequest {
			run.fatalf("malformed body %q: status %d, want 400", b.broken, code)
		}
		run.checkError(body, nil)
	case len(faults) > 0:
		if code != http.StatusBadRequest {
			run.fatalf("update with faults %v: status %d, want 400", faults, code)
		}
		run.checkError(body, faults)
	case cur == nil:
		if code != http.StatusNotFound {
			run.fatalf("update of the unknown %s: status %d, want 404", id, code)
		}
		run.checkError(body, nil)
	default:
		if code != http.StatusOK {
			run.fatalf("valid update: status %d, want 200", code)
		}
		want.id, want.address = cur.id, cur.address
		run.checkResource(run.decodeObject(body), body, want, true)
		// A new value, not *cur = *want: the namespaces' models share the
		// seed's resources until they write over them.
		run.model[slices.Index(run.model, cur)] = want
	}
}

func (run *modelRun) list() {
	g := run.g
	values := url.Values{}
	bad := false
	var filter *mFilter
	var sorts []mSort
	if g.chance(0.8) {
		switch {
		case g.chance(0.04):
			setParam(values, g.caseOf(paramName("filters")), pick(g, mBadFilters))
			bad = true
		case g.chance(0.03):
			setParam(values, g.caseOf(paramName("filters")), pick(g, []string{"", "  "}))
		default:
			filter = g.filter(0)
			setParam(values, g.caseOf(paramName("filters")), g.render(filter, false))
		}
	}
	if g.chance(0.4) {
		var parts []string
		for _, f := range g.r.Perm(len(mFilterFields))[:1+g.r.IntN(3)] {
			k := mSort{field: mFilterFields[f]}
			dir := pick(g, []string{"", "-asc", "-desc", "-DESC", "-Asc"})
			k.desc = strings.EqualFold(dir, "-desc")
			sorts = append(sorts, k)
			parts = append(parts, g.caseOf(k.field)+dir)
		}
		if g.chance(0.03) {
			parts = append(parts, pick(g, []string{"Foo", "Types", "Address"}))
			bad = true
		}
		setParam(values, g.caseOf(paramName("sorts")), strings.Join(parts, "~"))
	}
	page, pageSize := 1, 20
	if g.chance(0.7) {
		pageSize = pick(g, []int{1, 2, 3, 5, 7, 10, 20, 50})
		if g.chance(0.05) {
			pageSize = pick(g, []int{500, 501, 10000}) // clamped to 500
		}
		setParam(values, g.caseOf(paramName("pageSize")), strconv.Itoa(pageSize))
		pageSize = min(pageSize, 500)
	}
	if g.chance(0.7) {
		n := len(modelList(run.model, filter, nil))
		page = 1 + g.r.IntN(n/pageSize+2)
		if g.chance(0.02) {
			page = 1 << 40
		}
		setParam(values, g.caseOf(paramName("page")), strconv.Itoa(page))
	}
	if g.chance(0.03) {
		setParam(values, g.caseOf(paramName(pick(g, []string{"page", "pageSize"}))), pick(g, []string{"0", "-1", "abc", "1.5", "2x"}))
		bad = true
	}
	if g.chance(0.05) {
		setParam(values, "requestParams.other", "x")
	}
	code, body := run.do(http.MethodGet, "/api/v2/resource?"+values.Encode(), nil)
	if bad {
		if code != http.StatusBadRequest {
			run.fatalf("bad list parameters: status %d, want 400", code)
		}
		run.checkError(body, nil)
		return
	}
	if code != http.StatusOK {
		run.fatalf("list: status %d, want 200", code)
	}
	var resp struct {
		TotalResults, TotalPages, Page *int
		ResourceList                   []map[string]any
	}
	if err := json.Unmarshal(body, &resp); err != nil || resp.TotalResults == nil || resp.TotalPages == nil || resp.Page == nil || resp.ResourceList == nil {
		run.fatalf("list response is not {TotalResults, TotalPages, Page, ResourceList}: %v", err)
	}
	if keys, _ := topKeys(body); !slices.Equal(keys, []string{"TotalResults", "TotalPages", "Page", "ResourceList", "_links", "_embedded"}) {
		run.fatalf("list response keys %v", keys)
	}
	all := modelList(run.model, filter, sorts)
	var want []*mResource
	if page-1 <= len(all)/pageSize {
		want = all[min((page-1)*pageSize, len(all)):min(page*pageSize, len(all))]
	}
	wantPages := (len(all) + pageSize - 1) / pageSize
	switch {
	case len(want) > 0:
		run.stats["list: a non-empty page"]++
	case len(all) > 0:
		run.stats["list: matches, page past them"]++
	}
	if *resp.TotalResults != len(all) || *resp.TotalPages != wantPages || *resp.Page != page || len(resp.ResourceList) != len(want) {
		run.fatalf("list: TotalResults %d TotalPages %d Page %d items %d; model: %d %d %d %d\nmodel ids: %v",
			*resp.TotalResults, *resp.TotalPages, *resp.Page, len(resp.ResourceList), len(all), wantPages, page, len(want), mIDs(want))
	}
	for i, got := range resp.ResourceList {
		if got["Id"] != want[i].id {
			var ids []any
			for _, got := range resp.ResourceList {
				ids = append(ids, got["Id"])
			}
			run.fatalf("list order:\n got %v\nwant %v", ids, mIDs(want))
		}
		run.checkResource(got, nil, want[i], true)
	}
	if len(resp.ResourceList) > 0 && g.chance(0.05) {
		var raw struct{ ResourceList []json.RawMessage }
		json.Unmarshal(body, &raw)
		run.checkResource(resp.ResourceList[0], raw.ResourceList[0], want[0], true)
	}
}

func paramName(s string) string { return "requestParams." + s }

// setParam sets a query parameter, replacing any spelling of its name in
// another case: which of two would win is not the contract's business.
func setParam(v url.Values, name, value string) {
	for k := range v {
		if strings.EqualFold(k, name) {
			delete(v, k)
		}
	}
	v.Set(name, value)
}

func mIDs(ms []*mResource) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.id
	}
	return out
}

// compareAll lists everything, page by page, and compares it with the model.
func (run *modelRun) compareAll() {
	var got []map[string]any
	for page := 1; ; page++ {
		code, body := run.do(http.MethodGet, fmt.Sprintf("/api/v2/resource?requestParams.pageSize=500&requestParams.page=%d", page), nil)
		var resp struct {
			TotalResults int
			ResourceList []map[string]any
		}
		if code != http.StatusOK || json.Unmarshal(body, &resp) != nil {
			run.fatalf("full list: status %d", code)
		}
		if resp.TotalResults != len(run.model) {
			run.fatalf("full list: TotalResults %d, model %d", resp.TotalResults, len(run.model))
		}
		if len(resp.ResourceList) == 0 {
			break
		}
		got = append(got, resp.ResourceList...)
	}
	if len(got) != len(run.model) {
		run.fatalf("full list: %d resources, model %d", len(got), len(run.model))
	}
	for i, res := range got {
		run.checkResource(res, nil, run.model[i], true)
	}
}

// snapshotRoundTrip writes the snapshot and loads it back into the store,
// which must then answer exactly as before.
func (run *modelRun) snapshotRoundTrip() {
	run.note("snapshot write and load")
	if _, err := run.snap.write(); err != nil {
		run.fatalf("snapshot write: %v", err)
	}
	run.store.resetTo(run.store.seed)
	if err := run.snap.load(); err != nil {
		run.fatalf("snapshot load: %v", err)
	}
	// Every namespace came back from the file, each with a new store but
	// the default one.
	cur := run.cur
	for name, sp := range run.spaces {
		if ns := run.srv.lookupNamespace(name); ns != nil {
			sp.store = ns.store
		} else {
			run.fatalf("namespace %s is not back after the snapshot load", name)
		}
	}
	for _, name := range modelSpaces {
		if run.spaces[name] == nil {
			continue
		}
		run.use(name)
		if err := checkStore(run.store); err != nil {
			run.fatalf("namespace %s after loading the snapshot: %v", name, err)
		}
		run.compareAll()
	}
	run.use(cur)
}

func longTests() bool { return os.Getenv("RESOURCEDIR_LONG") != "" }
