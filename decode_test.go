package resourcedir

// Tests of decode.go: the JSON reader and resource decoding, with the
// fuzzers that compare it with encoding/json, and lone surrogate escapes.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// decodeResource reads a create or update body as the handlers do
// (decodeResourceInto), into a resourceInput of its own.
func decodeResource(body []byte) (*resourceInput, error) {
	in := &resourceInput{}
	if err := decodeResourceInto(body, in); err != nil {
		return nil, err
	}
	return in, nil
}

// apiBodyErrors are bodies that are not a JSON object, with a fragment of
// the Message that says what and where.
var apiBodyErrors = []struct {
	name, body, msg string
}{
	{"empty", ``, "The request body is empty; expected a JSON object."},
	{"white space", " \r\n\t", "The request body is empty; expected a JSON object."},
	{"ends early", `{"DisplayName":`, "The request body is not valid JSON: it ends early, at byte 15."},
	{"ends inside a string", `{"DisplayName":"Ada`, "it ends early, at byte"},
	{"no closing brace", `{"DisplayName":"Ada"`, "it ends early, at byte 20."},
	{"missing colon", `{"DisplayName" "Ada"}`, "The request body is not valid JSON: invalid character '\"' after object key (at byte 15)."},
	{"trailing comma", `{"Company":"C",}`, "not valid JSON: invalid character '}' looking for beginning of object key string (at byte 15)."},
	{"bare word", `nope`, "not valid JSON: invalid character 'o' in literal null (expecting 'u') (at byte 1)."},
	{"single quotes", `{'Company':'C'}`, "not valid JSON: invalid character '\\'' looking for beginning of object key string (at byte 1)."},
	{"raw control character in a string", "{\"Company\":\"a\x01b\"}", "not valid JSON: invalid character '\\x01' in string literal (at byte"},
	{"array", `[{"Company":"C"}]`, "The request body must be a JSON object, not an array."},
	{"string", `"{\"Company\":\"C\"}"`, "The request body must be a JSON object, not a string."},
	{"null", `null`, "The request body must be a JSON object, not null."},
	{"number", `42`, "The request body must be a JSON object, not a number."},
	{"boolean", `true`, "The request body must be a JSON object, not a boolean."},
	{"two objects", `{"Company":"C"} {"Company":"D"}`, "The request body has data after the JSON object, at byte 16."},
	{"garbage after the object", `{"Company":"C"}x`, "The request body has data after the JSON object, at byte 15."},
	{"garbage after white space", "{\"Company\":\"C\"}\n\t x", "The request body has data after the JSON object, at byte 18."},
}

func TestBodyNotAJSONObject(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	id, _ := a.on(t).create(`{"Company":"C"}`)
	for _, c := range apiBodyErrors {
		t.Run(c.name, func(t *testing.T) {
			a.on(t).do(http.MethodPost, "/api/v2/resource", c.body).wantError(t, http.StatusBadRequest, c.msg, nil)
			a.on(t).do(http.MethodPut, "/api/v2/resource/"+id, c.body).wantError(t, http.StatusBadRequest, c.msg, nil)
		})
	}
	if n := a.store.count(); n != 1 {
		t.Errorf("the store has %d resources, want 1", n)
	}
}

// TestDecodeTypesDuplicateKeys: a Types entry with "Type" under several
// spellings is read the same way every time, the last one winning as it does
// for the properties of the body.
func TestDecodeTypesDuplicateKeys(t *testing.T) {
	t.Parallel()
	body := []byte(`{"Company":"C","Types":[{"type":"Team","Type":"Employee","TYPE":"Customer"},{"Type":"Contractor","tYpE":null}]}`)
	for range 100 {
		in, err := decodeResource(body)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string][]string{"Types[1].Type": {"Type is required; it must be one of Team, Customer, Contractor, Employee, Company."}}; !reflect.DeepEqual(in.ms.props, want) {
			t.Fatalf("ModelState %v", in.ms.props)
		}
		if !slices.Equal(in.res.types, []requestorType{4}) {
			t.Fatalf("types %v, want [Customer]", in.res.types)
		}
	}
}

// TestDecodeAddressInvalidUTF8: an Address is stored as given, but the
// response must still be UTF-8, so invalid bytes become U+FFFD as they do in
// string properties.
func TestDecodeAddressInvalidUTF8(t *testing.T) {
	t.Parallel()
	r, err := buildBody([]byte("{\"Company\":\"C\",\"Address\":{\"Street\xff\":\"a\xc3b\",\"n\":1.0}}"), modeCreate, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(r.address), "{\"Street\ufffd\":\"a\ufffdb\",\"n\":1.0}"; got != want {
		t.Errorf("Address %q, want %q", got, want)
	}
	if out := appendResource(nil, r, false); !utf8.Valid(out) || !json.Valid(out) {
		t.Errorf("not JSON in UTF-8: %q", out)
	}
}

const rtFuzzID = "0b7c5e2a-4f1d-4c3b-9a8e-1d2c3b4a5f60"

var rtModelStateKey = regexp.MustCompile(`^(Id|DisplayName|FirstName|Surname|Company|Position|Status|ExternalID|Phone|Mobile|Fax|Email|AddressComment|Types|Address|Types\[(0|[1-9][0-9]*)\]\.Type)$`)

var rtWireOrder = []string{"Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Status", "StatusId", "ContractorOrganization", "Types",
	"ExternalID", "Phone", "Mobile", "Fax", "Email", "AddressComment", "Address"}

// rtIsObject reports whether body is one valid JSON object.
func rtIsObject(body []byte) bool {
	body = bytes.TrimPrefix(body, utf8BOM) // read without it, as ASP.NET does
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	return json.Valid(body) && len(trimmed) > 0 && trimmed[0] == '{'
}

// checkDecode feeds body to decodeResource and build as a create or update
// handler would, and checks that nothing panics, that exactly the JSON
// objects are accepted, that what is stored keeps the rules, and that the
// response written for it decodes and builds back to the same resource.
func checkDecode(t *testing.T, body []byte, mode writeMode) {
	in, err := decodeResource(body)
	if err != nil {
		var je *apiError
		if !errors.As(err, &je) || je.Status != http.StatusBadRequest || je.Message == "" || !je.ModelState.empty() {
			t.Fatalf("decodeResource(%q): unexpected error %#v", body, err)
		}
		if rtIsObject(body) {
			t.Fatalf("decodeResource(%q) rejected a JSON object: %v", body, err)
		}
		return
	}
	if !rtIsObject(body) {
		t.Fatalf("decodeResource(%q) accepted what is not one JSON object", body)
	}
	res, err := buildResource(in, mode, rtFuzzID)
	var ms map[string][]string
	if ve := (*apiError)(nil); errors.As(err, &ve) && !ve.ModelState.empty() {
		ms = ve.ModelState.props
	} else if err != nil {
		t.Fatalf("%q: unexpected error %#v", body, err)
	}
	for key, msgs := range ms {
		if !rtModelStateKey.MatchString(key) || len(msgs) == 0 {
			t.Fatalf("%q: ModelState key %q with %q", body, key, msgs)
		}
		for _, m := range msgs {
			if m == "" || !utf8.ValidString(m) {
				t.Fatalf("%q: ModelState[%q] message %q", body, key, m)
			}
		}
	}
	if len(ms) > 0 {
		return
	}
	res.set(fieldID, rtFuzzID, true) // the store's or the path's
	checkStored(t, body, res)

	links := mode == modeUpdate
	out := appendResource(nil, res, links)
	if !json.Valid(out) || !utf8.Valid(out) {
		t.Fatalf("%q: the response is not JSON in UTF-8: %q", body, out)
	}
	wantKeys := rtWireOrder
	if links {
		wantKeys = append(slices.Clip(wantKeys), "_links", "_embedded")
	}
	if keys, err := topKeys(out); err != nil || !slices.Equal(keys, wantKeys) {
		t.Fatalf("%q: properties %v (%v)", body, keys, err)
	}

	res2, err := buildBody(out, mode, rtFuzzID)
	if err != nil {
		t.Fatalf("the response %q is invalid as a request: %v", out, err)
	}
	res2.set(fieldID, rtFuzzID, true)
	if !reflect.DeepEqual(res, res2) {
		t.Fatalf("round trip of %q through %q:\n got %#v\nwant %#v", body, out, res2, res)
	}
	if out2 := appendResource(nil, res2, links); !bytes.Equal(out, out2) {
		t.Fatalf("round trip of %q: %q then %q", body, out, out2)
	}
}

// checkStored checks the invariants of a resource that passed validation.
func checkStored(t *testing.T, body []byte, r *resource) {
	t.Helper()
	status, ok := r.value(fieldStatus)
	if !ok || status != statusActive && status != statusInactive {
		t.Fatalf("%q: Status %q", body, status)
	}
	if dn, ok := r.value(fieldDisplayName); !ok || strings.TrimSpace(dn) == "" || utf8.RuneCountInString(dn) > maxLength(fieldDisplayName) {
		t.Fatalf("%q: DisplayName %q", body, dn)
	}
	for f, limit := range map[field]int{fieldFirstName: maxLength(fieldFirstName), fieldSurname: maxLength(fieldSurname), fieldCompany: maxLength(fieldCompany)} {
		if n := utf8.RuneCountInString(r.str(f)); n > limit {
			t.Fatalf("%q: %s of %d characters", body, f, n)
		}
	}
	if strings.TrimSpace(r.str(fieldFirstName)+r.str(fieldSurname)+r.str(fieldCompany)) == "" {
		t.Fatalf("%q: no FirstName, Surname or Company", body)
	}
	for f := field(0); f < numStringFields; f++ {
		if r.isNull(f) && r.str(f) != "" || !utf8.ValidString(r.str(f)) {
			t.Fatalf("%q: field %s is %q null=%v", body, f, r.str(f), r.isNull(f))
		}
	}
	if r.types == nil {
		t.Fatalf("%q: nil types", body)
	}
	seen := map[requestorType]bool{}
	for _, ty := range r.types {
		if _, known := apiTypeIDs[ty.String()]; !known || seen[ty] {
			t.Fatalf("%q: types %v", body, r.types)
		}
		seen[ty] = true
	}
	if r.address != nil && (!json.Valid(r.address) || r.address[0] != '{') {
		t.Fatalf("%q: Address %q", body, r.address)
	}
}

// rtSeeds are real and nasty bodies for both fuzz targets.
func rtSeeds() []string {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	return []string{
		apiAda,
		putBody(rtFuzzID),
		putBody(strings.ToUpper(rtFuzzID), "Status", "inactive", "Types", nil, "DisplayName", nil),
		`{"id":"` + rtFuzzID + `","displayname":null,"firstname":null,"surname":null,"company":"Acme","position":null,"phone":null,"mobile":null,"fax":null,"email":null,"addresscomment":null,"externalid":null,"status":"Active","types":null}`,
		`{"FirstName":"  Ada\t","Surname":"\nLovelace ","Company":" "}`,
		`{"FirstName":"` + strings.Repeat("é", 50) + `","Surname":"` + strings.Repeat("ж", 49) + `"}`,
		`{"FirstName":"` + strings.Repeat("é", 50) + `","Surname":"` + strings.Repeat("ж", 50) + `"}`,
		`{"Company":"C","DisplayName":"` + strings.Repeat("😀", 100) + `"}`,
		`{}`, `[]`, `null`, `""`, `1`, ``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"Company":"C",}`, `{"Company":"C"}}`, `{"Company":"C"} `,
		`{"Company":"C"} {}`, `{"Company":"C"}x`, "\ufeff{\"Company\":\"C\"}",
		`{"Company":"C","Address":` + deep(`{"a":`, `}`, 200) + `}`,
		`{"Company":"C","Address":{"a":` + deep(`[`, `]`, 10001) + `}}`,
		`{"Company":"C","Types":` + deep(`[`, `]`, 10001) + `}`,
		`{"Company":"C","Phone":1e999999,"Address":{"n":123456789012345678901234567890e-999,"m":-0.0}}`,
		"{\"Company\":\"\xff\xfe\",\"Address\":{\"\xff\":\"\xc3\"}}",
		"{\"Company\":\"a\\u0000b\",\"Position\":\"\\ud800\\udc00\\ud800\"}",
		"{\"Company\":\"a\x00b\"}", "\x00{}", "{}\x00",
		"{\"Company\":\"\u2028\u2029<>&\"}",
		`{"company":"a","Company":"b","COMPANY":null,"FirstName":"x"}`,
		`{"Types":[{"type":"Team","Type":"Employee"}],"Company":"C"}`,
		`{"Types":[{"Type":"team"},{"Type":"TEAM"},{"Type":"Employee","Id":99},{"Id":4}],"Company":"C"}`,
		`{"DisplayName":1,"Types":{},"Address":[],"Status":true,"Id":5,"Fax":{"a":1}}`,
		`{"Company":"C","Status":"inactive","StatusId":1,"_links":[],"_embedded":null}`,
		`{"Company":"C","Status":"Deleted"}`,
		`{"Company":"C","Types":[null,1,"Team",[],{"Type":{}}]}`,
		`{"Company":"C","Address":"x"}`, `{"Company":"C","Address":null,"Address":{"b":2}}`,
		`{"Company":"C","Display\u004eame":"escaped key"}`,
	}
}

func FuzzDecodeCreate(f *testing.F) {
	for _, s := range rtSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkDecode(t, body, modeCreate) })
}

func FuzzDecodeUpdate(f *testing.F) {
	for _, s := range rtSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkDecode(t, body, modeUpdate) })
}

// BenchmarkDecodeCreate decodes and validates generated create bodies as
// POST /api/v2/resource does before it reaches the store.
func BenchmarkDecodeCreate(b *testing.B) {
	bodies := make([][]byte, 1024)
	size := 0
	for i := range bodies {
		bodies[i] = benchJSON(i)
		size += len(bodies[i])
	}
	b.SetBytes(int64(size / len(bodies)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if r, err := buildBody(bodies[i%len(bodies)], modeCreate, ""); err != nil || r == nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkDecodeSeed decodes one seed batch of 10,000 generated resources,
// as POST /__admin/resources does before it reaches the store.
func BenchmarkDecodeSeed(b *testing.B) {
	body := benchSeedBodies(10_000, 10_000)[0]
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		rs, err := decodeSeed(body)
		if err != nil || len(rs) != 10_000 {
			b.Fatal(err, len(rs))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10_000, "ns/resource")
}

// TestDecodePropertyNames: a property is matched by its name in any case,
// Unicode's simple folding included, escaped or not, the last of its
// spellings winning; null and "" are kept apart; a name the body does not
// know is ignored by the API and refused by a seed.
func TestDecodePropertyNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		field      field
		want       string // "<null>" for null
		seen       bool
		seedOK     bool
	}{
		{"exact", `{"Position":"p"}`, fieldPosition, "p", true, true},
		{"upper case", `{"POSITION":"p"}`, fieldPosition, "p", true, true},
		{"long s folds to s", `{"Poſition":"p"}`, fieldPosition, "p", true, true},
		{"escaped", `{"Po\u0073ition":"p"}`, fieldPosition, "p", true, true},
		{"last spelling wins", `{"position":"a","POSITION":"b"}`, fieldPosition, "b", true, true},
		{"null after a string", `{"position":"a","Position":null}`, fieldPosition, "<null>", true, true},
		{"empty string is not null", `{"Position":""}`, fieldPosition, "", true, true},
		{"absent is null", `{"Phone":""}`, fieldPosition, "<null>", false, true},
		{"a near name is not the property", `{"Positon":"p"}`, fieldPosition, "<null>", false, false},
		{"a prefix is not the property", `{"Pos":"p"}`, fieldPosition, "<null>", false, false},
		{"a name of 16 characters", `{"AddressComments":"x"}`, fieldAddressComment, "<null>", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := decodeResource([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := in.res.value(tt.field)
			if !ok {
				got = "<null>"
			}
			if got != tt.want || in.seen[tt.field] != tt.seen || !in.ms.empty() {
				t.Errorf("%s = %q seen %v (ModelState %v), want %q seen %v", tt.field, got, in.seen[tt.field], in.ms.props, tt.want, tt.seen)
			}
			item := strings.Replace(tt.body, "{", `{"Company":"C",`, 1)
			if _, err := decodeSeed([]byte("[" + item + "]")); (err == nil) != tt.seedOK {
				t.Errorf("seed of %s: %v, want accepted %v", item, err, tt.seedOK)
			}
		})
	}
}

// TestInputsStrictJSONChecker: strictJSONProblem, which the lone-surrogate
// test relies on, refuses what a strict reader refuses.
func TestInputsStrictJSONChecker(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"a":"\ud800\udc00"}`: true,
		`{"a":"\\ud800"}`:      true,
		`{"a":"\ufffd\u00e9"}`: true,
		`{"a":"\ud800"}`:       false,
		`{"a":"\udc00\ud800"}`: false,
		`{"a":"\ud800x"}`:      false,
		`{"a":"\ud800\u0041"}`: false,
		`{"\udfff":1}`:         false,
		"{\"a\":\"\xff\"}":     false,
		`{"a":"\ud800\\"}`:     false,
	} {
		if got := strictJSONProblem([]byte(doc)) == ""; got != want {
			t.Errorf("strictJSONProblem(%s) accepts: %v, want %v", doc, got, want)
		}
	}
}

// TestInputsLoneSurrogates: lone UTF-16 surrogate escapes are read as
// U+FFFD everywhere, Address included, as the real service reads them
// (the contract), so that every answer is JSON a strict reader accepts.
func TestInputsLoneSurrogates(t *testing.T) {
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	body := `{"FirstName":"a\ud800b","Surname":"\udc00","Company":"pair \ud83d\ude00 kept","Position":"\ud800\ud800",` +
		`"Address":{"Street":"c\ud800d","k\udfff":["\ud800\udc00","\ud800\u0041"],"Escaped":"\\ud800"}}`
	want := map[string]string{"FirstName": "a\uFFFDb", "Surname": "\uFFFD", "Company": "pair 😀 kept", "Position": "\uFFFD\uFFFD"}
	wantAddress := map[string]any{"Street": "c\uFFFDd", "k\uFFFD": []any{"\U00010000", "\uFFFDA"}, "Escaped": `\ud800`}
	check := func(what string, raw []byte) {
		t.Helper()
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", what, k, got[k], v)
			}
		}
		if fmt.Sprint(got["Address"]) != fmt.Sprint(wantAddress) {
			t.Errorf("%s: Address = %v, want %v", what, got["Address"], wantAddress)
		}
	}

	created := doStrictJSON(t, a, http.MethodPost, "/api/v2/resource", body)
	var out struct{ Data []json.RawMessage }
	if err := json.Unmarshal(created.Body, &out); created.Status != http.StatusCreated || err != nil || len(out.Data) != 1 {
		t.Fatalf("create: %d %v %s", created.Status, err, created.Body)
	}
	check("create's answer", out.Data[0])
	seeded := doStrictJSON(t, a, http.MethodPost, "/__admin/resources", "["+body+"]")
	if seeded.Status != http.StatusOK {
		t.Fatalf("seed: %d %s", seeded.Status, seeded.Body)
	}
	list := doStrictJSON(t, a, http.MethodGet, "/api/v2/resource", "")
	var page struct{ ResourceList []json.RawMessage }
	if err := json.Unmarshal(list.Body, &page); err != nil || len(page.ResourceList) != 2 {
		t.Fatalf("list: %v %s", err, list.Body)
	}
	check("the created resource listed", page.ResourceList[0])
	check("the seeded resource listed", page.ResourceList[1])
	all := doStrictJSON(t, a, http.MethodGet, "/__admin/resources", "")
	if all.Status != http.StatusOK {
		t.Errorf("GET /__admin/resources: %d", all.Status)
	}
	journal := doStrictJSON(t, a, http.MethodGet, "/__admin/requests", "")
	if journal.Status != http.StatusOK {
		t.Errorf("GET /__admin/requests: %d", journal.Status)
	}
	// A filter on the repaired value finds it.
	found := doStrictJSON(t, a, http.MethodGet, "/api/v2/resource?requestParams.filters="+url.QueryEscape("FirstName~eq~'a\uFFFDb'"), "")
	if !strings.Contains(string(found.Body), `"TotalResults":2`) {
		t.Errorf("filter on FirstName~eq~ 'a\\uFFFDb': %s", found.Body)
	}
}

// buildBody decodes body and applies the rules of mode, as the handlers do.
func buildBody(body []byte, mode writeMode, pathID string) (*resource, error) {
	in, err := decodeResource(body)
	if err != nil {
		return nil, err
	}
	return buildResource(in, mode, pathID)
}

// strictJSONProblem reports why b is not JSON a strict reader accepts (RFC
// 8259 with I-JSON's rule that strings hold Unicode scalar values: valid
// UTF-8, no lone surrogate escapes); "" when it is.
func strictJSONProblem(b []byte) string {
	if !utf8.Valid(b) {
		return "not UTF-8"
	}
	if !json.Valid(b) {
		return "not JSON"
	}
	high := false // the last thing read was a high surrogate escape
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			if high {
				return fmt.Sprintf("a lone high surrogate before byte %d", i)
			}
			continue
		}
		if b[i+1] != 'u' {
			if high {
				return fmt.Sprintf("a lone high surrogate before byte %d", i)
			}
			i++
			continue
		}
		var r rune
		fmt.Sscanf(string(b[i+2:i+6]), "%04x", &r)
		switch {
		case r >= 0xD800 && r < 0xDC00:
			if high {
				return fmt.Sprintf("a lone high surrogate before byte %d", i)
			}
			high = true
		case r >= 0xDC00 && r < 0xE000:
			if !high {
				return fmt.Sprintf("a lone low surrogate at byte %d", i)
			}
			high = false
		default:
			if high {
				return fmt.Sprintf("a lone high surrogate before byte %d", i)
			}
		}
		i += 5
	}
	if high {
		return "a lone high surrogate at the end"
	}
	return ""
}

// doStrictJSON is apiServer.do that also requires strict JSON.
func doStrictJSON(t *testing.T, a *testClient, method, path, body string) response {
	t.Helper()
	resp := a.on(t).do(method, path, body)
	if why := strictJSONProblem(resp.Body); why != "" {
		t.Errorf("%s %s: the answer is not strict JSON (%s): %s", method, path, why, resp.Body)
	}
	return resp
}

// TestDecodeTypesOnePass: Types read in the body's one pass (typesJSON)
// reads as decodeTypes, the entry-by-entry reader that says what is wrong,
// reads it alone.
func TestDecodeTypesOnePass(t *testing.T) {
	t.Parallel()
	for _, types := range []string{
		`[]`, `null`, `[{"Type":"Team"}]`, `[{"Type":"team"},{"TYPE":"Employee"},{"type":"TEAM"}]`,
		`[{"Type":"Te\u0061m"},{"Type":"Customer","Id":99,"_links":[],"_embedded":null}]`,
		`[{"Type":"Team","Type":"Bogus"}]`, `[{"Type":"Bogus","Type":"Team"}]`, `[{"Type":1,"Type":"Team"}]`,
		`[{"Type":"Team","Type":null}]`, `[{}]`, `[0,{"Type":"Team"}]`, `[[]]`, `"Team"`, `{}`, `[{"Type":"Kontractor"}]`,
		`[{"Type":"Contractor"},{"Type":"Company"},{"Type":"Customer"},{"Type":"Employee"},{"Type":"Team"},{"Type":"Company"}]`,
	} {
		in, err := decodeResource([]byte(`{"Company":"C","Types":` + types + `}`))
		if err != nil {
			t.Fatalf("%s: %v", types, err)
		}
		var ms modelState
		want, err := decodeTypes([]byte(types), false, &ms)
		if err != nil {
			t.Fatalf("%s: decodeTypes: %v", types, err)
		}
		if !slices.Equal(in.res.types, want) || !reflect.DeepEqual(in.ms, ms) || !in.seen[propTypes] {
			t.Errorf("Types %s: %v %v seen %v, want %v %v", types, in.res.types, in.ms.props, in.seen[propTypes], want, ms.props)
		}
	}
}
