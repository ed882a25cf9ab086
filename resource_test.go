package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// rtEncodingJSON quotes s with encoding/json, HTML escaping on or off.
func rtEncodingJSON(t *testing.T, s string, escapeHTML bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// rtStrings are strings that stress a JSON string encoder.
func rtStrings() []string {
	list := []string{
		"", "plain", "Ada Lovelace", `quote " backslash \ slash /`, "\n\r\t\b\f", "\x00\x01\x1f\x20\x7f",
		"é ж 語 😀", "\u2028\u2029", "a\u2028b\u2029c", "\ufffd", "\xff", "a\xc3", "\xc3(", "\xed\xa0\x80",
		"\xf4\x90\x80\x80", "\xc0\xaf", "\xe2\x80", "\xe2\x80\xa8\xe2\x80", "<>&", "</script>", "a&b<c>d",
		strings.Repeat("x\x00", 100), strings.Repeat("é", 300) + "\x1b",
	}
	for b := 0; b < 256; b++ {
		list = append(list, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	for r := rune(0); r < 0x3100; r += 7 {
		list = append(list, string(r))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			switch rng.IntN(4) {
			case 0:
				b[i] = byte(rng.IntN(0x20))
			case 1:
				b[i] = byte(0x80 + rng.IntN(0x80))
			default:
				b[i] = byte(0x20 + rng.IntN(0x60))
			}
		}
		list = append(list, string(b))
	}
	return list
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range rtStrings() {
		got := appendJSONString([]byte("prefix:"), s)
		if !bytes.HasPrefix(got, []byte("prefix:")) {
			t.Fatalf("%q: the prefix was lost: %q", s, got)
		}
		got = got[len("prefix:"):]
		// Same bytes as encoding/json without HTML escaping, always.
		if want := rtEncodingJSON(t, s, false); !bytes.Equal(got, want) {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
		// And as json.Marshal itself when there is nothing HTML to escape.
		if !strings.ContainsAny(s, "<>&") {
			if want, _ := json.Marshal(s); !bytes.Equal(got, want) {
				t.Errorf("%q: got %s, json.Marshal gives %s", s, got, want)
			}
		}
		if !utf8.Valid(got) {
			t.Errorf("%q: output %q is not UTF-8", s, got)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil || utf8.ValidString(s) && back != s {
			t.Errorf("%q: decodes to %q (%v)", s, back, err)
		}
	}
}

func TestAppendJSONStringEscapes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `""`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\n\r\t", `"\n\r\t"`},
		{"\b\f", `"\b\f"`},
		{"\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"\x7f", "\"\x7f\""},
		{"<a & b>", `"<a & b>"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"a\xffb", `"a\ufffdb"`},
		{"\xc3", `"\ufffd"`},
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`},
		{"é😀", `"é😀"`},
	} {
		if got := string(appendJSONString(nil, c.in)); got != c.want {
			t.Errorf("%q: got %s, want %s", c.in, got, c.want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\b\f\n", "\xff\u2028<", "é😀\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendJSONString(nil, s)
		if want := rtEncodingJSON(t, s, false); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}

// TestDecodeTypesDuplicateKeys: a Types entry with "Type" under several
// spellings is read the same way every time, the last one winning as it does
// for the properties of the body.
func TestDecodeTypesDuplicateKeys(t *testing.T) {
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

var rtWireOrder = []string{"Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Status", "StatusId", "Types",
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
		var je *jsonError
		if !errors.As(err, &je) || je.msg == "" {
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
	if ve := (*validationError)(nil); errors.As(err, &ve) {
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
func checkStored(t *testing.T, body []byte, r *Resource) {
	t.Helper()
	status, ok := r.value(fieldStatus)
	if !ok || status != statusActive && status != statusInactive {
		t.Fatalf("%q: Status %q", body, status)
	}
	if dn, ok := r.value(fieldDisplayName); !ok || strings.TrimSpace(dn) == "" || utf8.RuneCountInString(dn) > maxDisplayName {
		t.Fatalf("%q: DisplayName %q", body, dn)
	}
	for f, limit := range map[field]int{fieldFirstName: maxFirstName, fieldSurname: maxSurname, fieldCompany: maxCompany} {
		if n := utf8.RuneCountInString(r.vals[f]); n > limit {
			t.Fatalf("%q: %s of %d characters", body, f, n)
		}
	}
	if strings.TrimSpace(r.vals[fieldFirstName]+r.vals[fieldSurname]+r.vals[fieldCompany]) == "" {
		t.Fatalf("%q: no FirstName, Surname or Company", body)
	}
	for f := field(0); f < numStringFields; f++ {
		if r.folds[f] != strings.ToLower(r.vals[f]) || r.isNull(f) && r.vals[f] != "" || !utf8.ValidString(r.vals[f]) {
			t.Fatalf("%q: field %s is %q/%q null=%v", body, f, r.vals[f], r.folds[f], r.isNull(f))
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
