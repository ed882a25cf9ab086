package main

// The API as hostile and concurrent clients meet it: malformed input of
// every kind, list queries at their edges, many writers and readers at once
// under -race, and a fuzzer for the list query.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// hostileCase is one hostile request. ms says what the error's ModelState must
// be: "" anything, "-" absent, otherwise a key it must hold.
type hostileCase struct {
	name   string
	method string
	target string // path and query, sent as written
	body   []byte
	want   int
	ms     string
}

// TestHostileInput sends hostile requests through a real HTTP
// round trip and checks that each is refused (or, where the contract says
// so, accepted) with the documented status and error shape, never a 5xx,
// and that the server is healthy afterwards.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	api := startServer(t, kendoConfig(), nil)
	for i := range 30 {
		api.create(fmt.Sprintf(`{"FirstName":"F%02d","Surname":"S%02d","Company":"C"}`, i, i))
	}
	id, _ := api.create(`{"FirstName":"Ada","Surname":"Lovelace"}`)
	put := "/api/v2/resource/" + id

	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	filter := func(f string) string { return "/api/v2/resource?requestParams.filters=" + url.QueryEscape(f) }
	conds := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = "Id~isnull"
		}
		return strings.Join(parts, "~or~")
	}
	const createPath = "/api/v2/resource"
	cases := []hostileCase{
		// Bodies that are not a JSON object.
		{"create: null body", "POST", createPath, []byte("null"), 400, "-"},
		{"create: string body", "POST", createPath, []byte(`"Company"`), 400, "-"},
		{"create: array body", "POST", createPath, []byte(`[{"Company":"x"}]`), 400, "-"},
		{"create: number body", "POST", createPath, []byte(`12.5e300`), 400, "-"},
		{"create: true body", "POST", createPath, []byte(`true`), 400, "-"},
		{"create: empty body", "POST", createPath, []byte(``), 400, "-"},
		{"create: blank body", "POST", createPath, []byte(" \r\n\t "), 400, "-"},
		{"create: truncated object", "POST", createPath, []byte(`{"Company":"x"`), 400, "-"},
		{"create: truncated string", "POST", createPath, []byte(`{"Company":"x`), 400, "-"},
		{"create: two objects", "POST", createPath, []byte(`{"Company":"x"}{"Company":"y"}`), 400, "-"},
		{"create: trailing garbage", "POST", createPath, []byte(`{"Company":"x"} x`), 400, "-"},
		{"create: single quotes", "POST", createPath, []byte(`{'Company':'x'}`), 400, "-"},
		{"create: trailing comma", "POST", createPath, []byte(`{"Company":"x",}`), 400, "-"},
		{"create: NaN", "POST", createPath, []byte(`{"Company":"x","Phone":NaN}`), 400, "-"},
		// Deep nesting.
		{"create: 100,000 [ as the body", "POST", createPath, []byte(strings.Repeat("[", 100000)), 400, "-"},
		{"create: 100,000 [] as the body", "POST", createPath, []byte(deep("[", "]", 100000)), 400, "-"},
		{"create: 100,000 [ in Address", "POST", createPath, []byte(`{"Company":"x","Address":` + strings.Repeat("[", 100000) + `}`), 400, ""},
		{"create: 100,000 [] in Address", "POST", createPath, []byte(`{"Company":"x","Address":` + deep("[", "]", 100000) + `}`), 400, ""},
		{"create: 100,000 {\"a\": in Address", "POST", createPath, []byte(`{"Company":"x","Address":` + strings.Repeat(`{"a":`, 100000) + `}`), 400, ""},
		{"create: 100,000 [ in an unknown property", "POST", createPath, []byte(`{"Company":"x","Bogus":` + deep("[", "]", 100000) + `}`), 400, ""},
		{"create: 100,000 [ in Types", "POST", createPath, []byte(`{"Company":"x","Types":` + deep("[", "]", 100000) + `}`), 400, ""},
		{"create: 1,000-deep Address is stored", "POST", createPath, []byte(`{"Company":"x","Address":{"a":` + deep("[", "]", 1000) + `}}`), 200, ""},
		// Encoding: invalid UTF-8 in strings is read as U+FFFD (as
		// encoding/json and Json.NET do), outside strings it is a syntax error.
		{"create: invalid UTF-8 in a value", "POST", createPath, []byte("{\"Company\":\"\xff\xfe\xc3\"}"), 200, ""},
		{"create: invalid UTF-8 in a key", "POST", createPath, []byte("{\"\xffCompany\":1,\"Company\":\"x\"}"), 200, ""},
		{"create: invalid UTF-8 outside strings", "POST", createPath, []byte("\xff{\"Company\":\"x\"}"), 400, "-"},
		{"create: UTF-16 BOM", "POST", createPath, []byte("\xfe\xff\x00{"), 400, "-"},
		{"create: escaped NUL in a value", "POST", createPath, []byte(`{"Company":"a\u0000b"}`), 200, ""},
		{"create: lone surrogate escape", "POST", createPath, []byte(`{"Company":"\ud800"}`), 200, ""},
		{"create: raw NUL in a value", "POST", createPath, []byte("{\"Company\":\"a\x00b\"}"), 400, "-"},
		{"create: NUL before the body", "POST", createPath, []byte("\x00{\"Company\":\"x\"}"), 400, "-"},
		{"create: NUL after the body", "POST", createPath, []byte("{\"Company\":\"x\"}\x00"), 400, "-"},
		// Unknown and odd properties.
		{"create: unknown properties", "POST", createPath, []byte(`{"Company":"x","Bogus":[1,{"a":null}],"StatusId":"nope","_links":5,"_embedded":{}}`), 200, ""},
		{"create: empty key", "POST", createPath, []byte(`{"":1,"Company":"x"}`), 200, ""},
		{"create: 10,000 unknown keys", "POST", createPath, func() []byte {
			var b bytes.Buffer
			b.WriteString(`{"Company":"x"`)
			for i := range 10000 {
				fmt.Fprintf(&b, `,"k%d":%d`, i, i)
			}
			return append(b.Bytes(), '}')
		}(), 200, ""},
		{"create: huge number", "POST", createPath, []byte(`{"Company":"x","Bogus":1` + strings.Repeat("0", 100000) + `}`), 200, ""},
		{"create: 50,000 Types", "POST", createPath, []byte(`{"Company":"x","Types":[` + strings.TrimSuffix(strings.Repeat(`{"Type":"Team"},`, 50000), ",") + `]}`), 200, ""},
		// Update: the path and the body.
		{"update: id not a GUID", "PUT", "/api/v2/resource/not-a-guid", []byte(putBody(id)), 400, ""},
		{"update: NUL id", "PUT", "/api/v2/resource/%00", []byte(putBody(id)), 400, ""},
		{"update: NUL in a GUID", "PUT", "/api/v2/resource/" + id[:8] + "%00" + id[9:], []byte(putBody(id)), 400, ""},
		{"update: 10 KiB id", "PUT", "/api/v2/resource/" + strings.Repeat("a", 10<<10), []byte(putBody(id)), 400, ""},
		{"update: braced GUID of another", "PUT", "/api/v2/resource/{00000000-0000-4000-8000-000000000000}", []byte(putBody("00000000-0000-4000-8000-000000000000")), 404, "-"},
		{"update: unknown GUID", "PUT", "/api/v2/resource/00000000-0000-4000-8000-000000000000", []byte(putBody("00000000-0000-4000-8000-000000000000")), 404, "-"},
		{"update: null body", "PUT", put, []byte("null"), 400, "-"},
		{"update: string body", "PUT", put, []byte(`"x"`), 400, "-"},
		{"update: array body", "PUT", put, []byte(`[` + putBody(id) + `]`), 400, "-"},
		{"update: number body", "PUT", put, []byte(`1`), 400, "-"},
		{"update: empty body", "PUT", put, nil, 400, "-"},
		{"update: empty object", "PUT", put, []byte(`{}`), 400, "Types"},
		{"update: 100,000 [ as the body", "PUT", put, []byte(strings.Repeat("[", 100000)), 400, "-"},
		{"update: 100,000 [ in Position", "PUT", put, []byte(`{"Position":` + deep("[", "]", 100000) + `}`), 400, ""},
		{"update: raw NUL in a value", "PUT", put, bytes.Replace([]byte(putBody(id)), []byte("Ada"), []byte("A\x00a"), 1), 400, "-"},
		{"update: escaped NUL in a value", "PUT", put, []byte(putBody(id, "Position", rawJSON(`"a\u0000b"`))), 200, ""},
		{"update: invalid UTF-8 in a value", "PUT", put, []byte(putBody(id, "Position", rawJSON("\"\xff\""))), 200, ""},
		{"update: unknown properties", "PUT", put, []byte(putBody(id, "Bogus", rawJSON(`{"x":[1]}`), "StatusId", rawJSON(`"x"`))), 200, ""},
		{"update: Id of another", "PUT", put, []byte(putBody("00000000-0000-4000-8000-000000000000")), 400, "Id"},
		// Paths.
		{"NUL in the path", "GET", "/api/v2/resource%00", nil, 404, "-"},
		{"NUL path", "GET", "/%00", nil, 404, "-"},
		{"encoded slash", "PUT", "/api/v2/resource/a%2Fb", []byte(putBody(id)), 400, ""},
		{"10 KiB unknown path", "GET", "/" + strings.Repeat("x", 10<<10), nil, 404, "-"},
		{"wrong method", "DELETE", createPath, nil, 405, "-"},
		{"wrong method with a body", "PATCH", put, []byte(`{}`), 405, "-"},
		// Page parameters.
		{"page 0", "GET", "/api/v2/resource?requestParams.page=0", nil, 400, paramPage},
		{"page -1", "GET", "/api/v2/resource?requestParams.page=-1", nil, 400, paramPage},
		{"page 1.5", "GET", "/api/v2/resource?requestParams.page=1.5", nil, 400, paramPage},
		{"page empty", "GET", "/api/v2/resource?requestParams.page=", nil, 400, paramPage},
		{"page without =", "GET", "/api/v2/resource?requestParams.page", nil, 400, paramPage},
		{"page abc", "GET", "/api/v2/resource?requestParams.page=abc", nil, 400, paramPage},
		{"page 1e3", "GET", "/api/v2/resource?requestParams.page=1e3", nil, 400, paramPage},
		{"page 0x10", "GET", "/api/v2/resource?requestParams.page=0x10", nil, 400, paramPage},
		{"page 1_0", "GET", "/api/v2/resource?requestParams.page=1_0", nil, 400, paramPage},
		{"page NUL", "GET", "/api/v2/resource?requestParams.page=%00", nil, 400, paramPage},
		{"page 2 NUL", "GET", "/api/v2/resource?requestParams.page=2%00", nil, 400, paramPage},
		{"page overflow", "GET", "/api/v2/resource?requestParams.page=99999999999999999999", nil, 400, paramPage},
		{"page -overflow", "GET", "/api/v2/resource?requestParams.page=-99999999999999999999", nil, 400, paramPage},
		{"page ' 2 '", "GET", "/api/v2/resource?requestParams.page=%202%20", nil, 400, paramPage},
		{"page +2", "GET", "/api/v2/resource?requestParams.page=%2B2", nil, 400, paramPage},
		{"pageSize ' 44'", "GET", "/api/v2/resource?requestParams.pageSize=%2044", nil, 400, paramPageSize},
		{"page past the end", "GET", "/api/v2/resource?requestParams.page=1000000", nil, 200, ""},
		{"page MaxInt64", "GET", "/api/v2/resource?requestParams.page=9223372036854775807&requestParams.pageSize=500", nil, 200, ""},
		{"page MaxInt64 with a filter and sorts", "GET", "/api/v2/resource?requestParams.page=9223372036854775807&requestParams.pageSize=7&requestParams.sorts=Surname-desc&requestParams.filters=" + url.QueryEscape("Company~eq~'C'"), nil, 200, ""},
		{"page MaxInt64 with a scan filter", "GET", "/api/v2/resource?requestParams.page=9223372036854775807&requestParams.pageSize=7&requestParams.filters=" + url.QueryEscape("Company~contains~'c'"), nil, 200, ""},
		{"pageSize 0", "GET", "/api/v2/resource?requestParams.pageSize=0", nil, 400, paramPageSize},
		{"pageSize -1", "GET", "/api/v2/resource?requestParams.pageSize=-1", nil, 400, paramPageSize},
		{"pageSize 1.5", "GET", "/api/v2/resource?requestParams.pageSize=1.5", nil, 400, paramPageSize},
		{"pageSize empty", "GET", "/api/v2/resource?requestParams.pageSize=", nil, 400, paramPageSize},
		{"pageSize overflow", "GET", "/api/v2/resource?requestParams.pageSize=99999999999999999999", nil, 400, paramPageSize},
		{"pageSize 501 is clamped", "GET", "/api/v2/resource?requestParams.pageSize=501", nil, 200, ""},
		{"pageSize MaxInt64 is clamped", "GET", "/api/v2/resource?requestParams.pageSize=9223372036854775807&requestParams.page=2", nil, 200, ""},
		{"page and pageSize both bad", "GET", "/api/v2/resource?requestParams.page=x&requestParams.pageSize=y", nil, 400, paramPageSize},
		{"names in another case", "GET", "/api/v2/resource?REQUESTPARAMS.PAGE=0", nil, 400, paramPage},
		// The query string itself.
		{"invalid percent-encoding in a value", "GET", "/api/v2/resource?requestParams.filters=%zz", nil, 400, ""},
		{"truncated percent-encoding", "GET", "/api/v2/resource?requestParams.page=1%", nil, 400, ""},
		{"invalid percent-encoding in a name", "GET", "/api/v2/resource?%zz=1", nil, 400, ""},
		{"invalid percent-encoding in an ignored parameter", "GET", "/api/v2/resource?x=%g0", nil, 400, ""},
		{"unknown parameters are ignored", "GET", "/api/v2/resource?foo=bar&requestParams.other=1&&=&x", nil, 200, ""},
		{"10,000 ignored parameters", "GET", "/api/v2/resource?" + strings.Repeat("a=b&", 10000), nil, 200, ""},
		// Filters.
		{"10,000-deep parentheses", "GET", filter(strings.Repeat("(", 10000) + "Id~isnull" + strings.Repeat(")", 10000)), nil, 400, paramFilters},
		{"10,000 unclosed parentheses", "GET", filter(strings.Repeat("(", 10000)), nil, 400, paramFilters},
		{"40-deep parentheses (under 4 KiB)", "GET", filter(strings.Repeat("(", 40) + "Id~isnull" + strings.Repeat(")", 40)), nil, 400, paramFilters},
		{"10,000 conditions", "GET", filter(conds(10000)), nil, 400, paramFilters},
		{"200 conditions (under 4 KiB)", "GET", filter(conds(200)), nil, 400, paramFilters},
		{"5 KiB filter", "GET", filter("DisplayName~eq~'" + strings.Repeat("a", 5<<10) + "'"), nil, 400, paramFilters},
		{"5 KiB of spaces", "GET", filter(strings.Repeat(" ", 5<<10)), nil, 400, paramFilters},
		{"NUL as the filter", "GET", filter("\x00"), nil, 400, paramFilters},
		{"NUL in a field name", "GET", filter("Display\x00Name~eq~'x'"), nil, 400, paramFilters},
		{"NUL in a value", "GET", filter("DisplayName~eq~'\x00'"), nil, 200, ""},
		{"invalid UTF-8 in a value", "GET", filter("DisplayName~eq~'\xff\xfe'"), nil, 200, ""},
		{"invalid UTF-8 as a field", "GET", filter("\xff~eq~'x'"), nil, 400, paramFilters},
		{"unterminated value", "GET", filter("DisplayName~eq~'x"), nil, 400, paramFilters},
		{"unknown field", "GET", filter("Bogus~eq~'x'"), nil, 400, paramFilters},
		{"unknown operator", "GET", filter("DisplayName~xor~'x'"), nil, 400, paramFilters},
		{"only tildes", "GET", filter(strings.Repeat("~", 3000)), nil, 400, paramFilters},
		{"only quotes", "GET", filter(strings.Repeat("'", 3001)), nil, 400, paramFilters},
		{"StatusId overflow", "GET", filter("StatusId~eq~99999999999999999999999"), nil, 400, paramFilters},
		{"filter and sorts both bad", "GET", filter("x") + "&requestParams.sorts=y", nil, 400, paramSorts},
		// Sorts.
		{"unknown sort field", "GET", "/api/v2/resource?requestParams.sorts=Bogus-asc", nil, 400, paramSorts},
		{"bad sort direction", "GET", "/api/v2/resource?requestParams.sorts=Surname-sideways", nil, 400, paramSorts},
		{"NUL sort", "GET", "/api/v2/resource?requestParams.sorts=%00", nil, 400, paramSorts},
		{"10,000 empty sort entries", "GET", "/api/v2/resource?requestParams.sorts=" + strings.Repeat("~", 10000), nil, 400, paramSorts},
		{"10,000 repeated sort keys", "GET", "/api/v2/resource?requestParams.sorts=" + strings.TrimSuffix(strings.Repeat("Surname-desc~", 10000), "~"), nil, 200, ""},
	}

	// Wrong JSON types in every property of a create and an update.
	wrongString := []string{`123`, `-1.5`, `true`, `false`, `{}`, `[]`, `["x"]`, `{"x":"y"}`}
	for p := range numProps {
		name := p.String()
		var wrong []string
		switch p {
		case propTypes:
			wrong = []string{`"Employee"`, `5`, `true`, `{}`, `{"Type":"Team"}`}
		case propAddress:
			wrong = []string{`"1 Main St"`, `5`, `true`, `[]`, `[{"Street":"x"}]`}
		default:
			wrong = wrongString
		}
		for _, v := range wrong {
			cases = append(cases, hostileCase{
				name: fmt.Sprintf("create: %s is %s", name, v), method: "POST", target: createPath,
				body: rawObject(map[string]string{"FirstName": `"Ada"`, "Company": `"x"`, name: v}), want: 400, ms: name,
			})
			if p == propAddress {
				continue // ignored on update
			}
			cases = append(cases, hostileCase{
				name: fmt.Sprintf("update: %s is %s", name, v), method: "PUT", target: put,
				body: []byte(putBody(id, name, rawJSON(v))), want: 400, ms: name,
			})
		}
	}
	for _, tc := range []struct{ types, key string }{
		{`[5]`, "Types[0].Type"},
		{`[null]`, "Types[0].Type"},
		{`["Team"]`, "Types[0].Type"},
		{`[[]]`, "Types[0].Type"},
		{`[{"Type":"Team"},{"Type":5}]`, "Types[1].Type"},
		{`[{"Type":true}]`, "Types[0].Type"},
		{`[{"Type":{"Name":"Team"}}]`, "Types[0].Type"},
		{`[{"Type":null}]`, "Types[0].Type"},
		{`[{"Id":2}]`, "Types[0].Type"},
		{`[{"Type":"Team\u0000"}]`, "Types[0].Type"},
	} {
		cases = append(cases,
			hostileCase{name: "create: Types " + tc.types, method: "POST", target: createPath,
				body: rawObject(map[string]string{"Company": `"x"`, "Types": tc.types}), want: 400, ms: tc.key},
			hostileCase{name: "update: Types " + tc.types, method: "PUT", target: put,
				body: []byte(putBody(id, "Types", rawJSON(tc.types))), want: 400, ms: tc.key})
	}

	// Seeds go through a different decoder.
	for _, tc := range []struct {
		name, body string
		want       int
		ms         string
	}{
		{"object", `{"Company":"x"}`, 400, "-"},
		{"string", `"x"`, 400, "-"},
		{"number", `5`, 400, "-"},
		{"empty", ``, 400, "-"},
		{"truncated", `[{"Company":"x"}`, 400, "-"},
		{"100,000 [", strings.Repeat("[", 100000), 400, "-"},
		{"100,000 []", deep("[", "]", 100000), 400, "-"},
		{"100,000 [ in an item", `[{"Company":"x","Address":` + deep("[", "]", 100000) + `}]`, 400, ""},
		{"a number item", `[5]`, 400, "[0]"},
		{"a null item", `[{"Company":"x"},null]`, 400, "[1]"},
		{"a wrongly typed property", `[{"Company":5}]`, 400, "[0].Company"},
		{"a bad Id", `[{"Company":"x","Id":"nope"}]`, 400, "[0].Id"},
		{"a NUL Id", `[{"Company":"x","Id":"\u0000"}]`, 400, "[0].Id"},
		{"a duplicate Id", `[{"Company":"x","Id":"00000000-0000-4000-8000-000000000001"},{"Company":"y","Id":"00000000-0000-4000-8000-000000000001"}]`, 400, "[1].Id"},
		{"an Id already in use", `[{"Company":"x","Id":"` + id + `"}]`, 400, "[0].Id"},
		{"raw NUL", "[{\"Company\":\"\x00\"}]", 400, "-"},
		{"trailing garbage", `[] x`, 400, "-"},
	} {
		cases = append(cases, hostileCase{name: "seed: " + tc.name, method: "POST", target: "/__admin/resources",
			body: []byte(tc.body), want: tc.want, ms: tc.ms})
	}

	for _, c := range cases {
		r := api.do(c.method, c.target, string(c.body))
		status, h, body := r.Status, r.Header, r.Body
		what := c.name
		if status >= 500 {
			t.Errorf("%s: %d %.300s", what, status, body)
		} else if status != c.want {
			t.Errorf("%s: status %d, want %d: %.300s", what, status, c.want, body)
		}
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Errorf("%s: the response is not valid UTF-8 JSON: %.300q", what, body)
		}
		if ct := h.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", what, ct)
		}
		if h.Get("X-Request-Id") == "" {
			t.Errorf("%s: no X-Request-Id", what)
		}
		if status >= 400 {
			e := checkErrorShape(t, what, h, body)
			switch c.ms {
			case "":
			case "-":
				if e.ModelState != nil {
					t.Errorf("%s: ModelState %v where no property is at fault", what, e.ModelState)
				}
			default:
				if len(e.ModelState[c.ms]) == 0 {
					t.Errorf("%s: ModelState lacks %q: %.300s", what, c.ms, body)
				}
			}
			if status == 405 && h.Get("Allow") == "" {
				t.Errorf("%s: 405 without Allow", what)
			}
		}
		if status == 200 && c.method == "GET" {
			checkListPage(t, what, body, -1)
		}
		api.health()
	}
}

// TestConcurrentClients mixes creates, updates, lists and snapshots from
// many goroutines over real connections, then checks that nothing was lost:
// the total, the last value written to every resource, a list by an
// indexed field, and the snapshot. Run it with -race.
func TestConcurrentClients(t *testing.T) {
	t.Parallel()
	store := NewStore(nil)
	srv := NewServer(DefaultConfig(), store, nil)
	snapPath := filepath.Join(t.TempDir(), "s.gob")
	srv.snap = newSnapshotter(snapPath, storeDir{store}, discardLogger)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	tr := ts.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	api := &testClient{t: t, base: ts.URL, client: client}
	defer tr.CloseIdleConnections()

	// shared is updated by every writer at once: the last write wins, and a
	// reader must never see half of one write and half of another.
	shared, _ := api.create(`{"FirstName":"w","Surname":"w","Position":"w"}`)

	const (
		writers   = 8
		perWriter = 15
		updates   = 3
		listers   = 4
		snappers  = 2
	)
	type owned struct {
		id, first, position, status string
	}
	results := make([][]owned, writers)
	errc := make(chan error, 1000)
	fail := func(format string, args ...any) {
		select {
		case errc <- fmt.Errorf(format, args...):
		default:
		}
	}
	do := func(method, path string, body []byte) (int, []byte) {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequest(method, ts.URL+path, rd)
		if err != nil {
			fail("%s %s: %v", method, path, err)
			return 0, nil
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			fail("%s %s: %v", method, path, err)
			return 0, nil
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			fail("%s %s: %v", method, path, err)
		}
		return resp.StatusCode, b
	}

	var writersWG, readersWG sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		writersWG.Add(1)
		go func() {
			defer writersWG.Done()
			for i := range perWriter {
				status, b := do("POST", "/api/v2/resource", fmt.Appendf(nil,
					`{"FirstName":"w%d","Surname":"r%d","Company":"Concurrent","Types":[{"Type":"Team"}]}`, w, i))
				var out struct{ Data []struct{ Id string } }
				if status != 200 || json.Unmarshal(b, &out) != nil || len(out.Data) != 1 {
					fail("create w%d r%d: %d %s", w, i, status, b)
					return
				}
				o := owned{id: out.Data[0].Id}
				for u := range updates {
					o.first = fmt.Sprintf("w%d-r%d-u%d", w, i, u)
					o.position = fmt.Sprintf("pos %d/%d/%d", w, i, u)
					o.status = []string{"Active", "Inactive"}[(w+i+u)%2]
					status, b := do("PUT", "/api/v2/resource/"+o.id, []byte(putBody(o.id, "FirstName", o.first, "Position", o.position, "Status", o.status, "Company", "Concurrent")))
					if status != 200 {
						fail("update %s: %d %s", o.id, status, b)
						return
					}
					tag := strconv.Quote(fmt.Sprintf("w%d-%d-%d", w, i, u))
					status, b = do("PUT", "/api/v2/resource/"+shared, []byte(putBody(shared, "FirstName", rawJSON(tag), "Surname", rawJSON(tag), "Position", rawJSON(tag), "Company", nil)))
					if status != 200 {
						fail("update shared: %d %s", status, b)
						return
					}
				}
				results[w] = append(results[w], o)
			}
		}()
	}
	queries := []string{
		"",
		"requestParams.pageSize=500",
		"requestParams.filters=" + url.QueryEscape("Company~eq~'Concurrent'") + "&requestParams.pageSize=7&requestParams.page=2",
		"requestParams.filters=" + url.QueryEscape("FirstName~startswith~'w1'~or~Status~eq~'Inactive'") + "&requestParams.sorts=FirstName-desc",
		"requestParams.sorts=Position-asc~Surname-desc&requestParams.pageSize=50",
		"requestParams.filters=" + url.QueryEscape("Id~eq~'"+shared+"'"),
		"requestParams.filters=" + url.QueryEscape("StatusId~gt~1") + "&requestParams.page=3&requestParams.pageSize=3",
	}
	for l := range listers {
		readersWG.Add(1)
		go func() {
			defer readersWG.Done()
			lastTotal := 0
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				q := queries[(l+n)%len(queries)]
				status, b := do("GET", "/api/v2/resource?"+q, nil)
				var p listPage
				if status != 200 || json.Unmarshal(b, &p) != nil {
					fail("list %s: %d %.300s", q, status, b)
					return
				}
				if q == "" {
					// Nothing is ever deleted: the total only grows.
					if p.TotalResults < lastTotal {
						fail("the total went down from %d to %d", lastTotal, p.TotalResults)
					}
					lastTotal = p.TotalResults
				}
				for _, r := range p.ResourceList {
					if r["Id"] == shared && (r["FirstName"] != r["Surname"] || r["FirstName"] != r["Position"]) {
						fail("a torn update of the shared resource: %v", r)
					}
				}
			}
		}()
	}
	for range snappers {
		readersWG.Add(1)
		go func() {
			defer readersWG.Done()
			last := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				status, b := do("POST", "/__admin/snapshot", nil)
				var out struct{ Resources int }
				if status != 200 || json.Unmarshal(b, &out) != nil {
					fail("snapshot: %d %s", status, b)
					return
				}
				if out.Resources < last {
					fail("a snapshot of %d resources after one of %d", out.Resources, last)
				}
				last = out.Resources
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	writersWG.Wait()
	close(done)
	readersWG.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	total := 1 + writers*perWriter
	r := api.do("GET", "/__admin/health", "")
	status, _, body := r.Status, r.Header, r.Body
	var health struct{ Resources int }
	if status != 200 || json.Unmarshal(body, &health) != nil || health.Resources != total {
		t.Fatalf("health: %d %s, want %d resources", status, body, total)
	}
	r = api.do("GET", "/api/v2/resource?requestParams.pageSize=500", "")
	status, _, body = r.Status, r.Header, r.Body
	if status != 200 {
		t.Fatalf("list all: %d %s", status, body)
	}
	all := checkListPage(t, "list all", body, 500)
	if all.TotalResults != total || len(all.ResourceList) != total {
		t.Fatalf("list all: %d results, %d items; want %d", all.TotalResults, len(all.ResourceList), total)
	}
	byID := map[string]map[string]any{}
	for _, r := range all.ResourceList {
		id, _ := r["Id"].(string)
		if byID[id] != nil {
			t.Errorf("Id %s listed twice", id)
		}
		byID[id] = r
	}
	inactive := 0
	for w := range writers {
		if len(results[w]) != perWriter {
			t.Fatalf("writer %d finished %d resources, want %d", w, len(results[w]), perWriter)
		}
		for _, o := range results[w] {
			r := byID[o.id]
			if r == nil {
				t.Errorf("%s is missing from the list", o.id)
				continue
			}
			wantStatusID := 1.0
			if o.status == "Inactive" {
				wantStatusID = 2
				inactive++
			}
			if r["FirstName"] != o.first || r["Position"] != o.position || r["Status"] != o.status || r["StatusId"] != wantStatusID || r["Company"] != "Concurrent" {
				t.Errorf("%s: listed as %v, but the last write was FirstName %q Position %q Status %q", o.id, r, o.first, o.position, o.status)
			}
			// The exact-match index must agree with the rows.
			filtered := api.on(t).do("GET", "/api/v2/resource?requestParams.filters="+
				url.QueryEscape("FirstName~eq~'"+o.first+"'~and~Company~eq~'Concurrent'"), "")
			status, body := filtered.Status, filtered.Body
			p := checkListPage(t, o.first, body, 20)
			if status != 200 || p.TotalResults != 1 || p.ResourceList[0]["Id"] != o.id {
				t.Errorf("FirstName eq %q: %d %.300s, want only %s", o.first, status, body, o.id)
			}
		}
	}
	if r := byID[shared]; r == nil || r["FirstName"] != r["Surname"] || r["FirstName"] != r["Position"] {
		t.Errorf("shared resource: %v", r)
	}
	r = api.do("GET", "/api/v2/resource?requestParams.filters="+url.QueryEscape("Status~eq~'Inactive'"), "")
	status, _, body = r.Status, r.Header, r.Body
	if p := checkListPage(t, "inactive", body, 20); status != 200 || p.TotalResults != inactive {
		t.Errorf("Status eq Inactive: %d results, want %d", p.TotalResults, inactive)
	}

	// A final snapshot holds everything, and reads back to the same rows.
	r = api.do("POST", "/__admin/snapshot", "")
	status, _, body = r.Status, r.Header, r.Body
	var snap struct{ Resources int }
	if status != 200 || json.Unmarshal(body, &snap) != nil || snap.Resources != total {
		t.Fatalf("final snapshot: %d %s, want %d resources", status, body, total)
	}
	loaded, err := readSnapshotFile(snapPath)
	if err != nil {
		t.Fatalf("read the snapshot: %v", err)
	}
	if len(loaded) != total {
		t.Fatalf("the snapshot holds %d resources, want %d", len(loaded), total)
	}
	rows, _ := store.All()
	for i, r := range loaded {
		if got, want := string(appendResource(nil, r, true)), string(appendResource(nil, rows[i], true)); got != want {
			t.Errorf("snapshot row %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// listPage is a list response.
type listPage struct {
	TotalResults int
	TotalPages   int
	Page         int
	ResourceList []map[string]any
	Links        []any `json:"_links"`
}

// checkListPage checks a 200 list response's arithmetic; pageSize < 0
// means unknown, checked only against the maximum.
func checkListPage(t testing.TB, what string, body []byte, pageSize int) listPage {
	t.Helper()
	var p listPage
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("%s: list response: %v: %.300s", what, err, body)
	}
	if p.Page < 1 || p.TotalResults < 0 || p.Links == nil {
		t.Errorf("%s: odd list response %.300s", what, body)
	}
	if pageSize > 0 {
		if want := (p.TotalResults + pageSize - 1) / pageSize; p.TotalPages != want {
			t.Errorf("%s: TotalPages %d, want %d for %d results of %d", what, p.TotalPages, want, p.TotalResults, pageSize)
		}
		wantLen := 0
		if p.Page <= p.TotalPages {
			wantLen = min(pageSize, p.TotalResults-(p.Page-1)*pageSize)
		}
		if len(p.ResourceList) != wantLen {
			t.Errorf("%s: %d items on page %d, want %d", what, len(p.ResourceList), p.Page, wantLen)
		}
	}
	if len(p.ResourceList) > DefaultConfig().MaxPageSize {
		t.Errorf("%s: %d items on one page, over the maximum page size", what, len(p.ResourceList))
	}
	if (p.TotalResults == 0) != (p.TotalPages == 0) {
		t.Errorf("%s: TotalResults %d but TotalPages %d", what, p.TotalResults, p.TotalPages)
	}
	return p
}

// TestListPageEdges checks the values behind the edge cases that
// are accepted: whitespace around a page, pages past the end, clamping.
func TestListPageEdges(t *testing.T) {
	t.Parallel()
	api := startServer(t, DefaultConfig(), nil)
	for i := range 45 {
		api.create(fmt.Sprintf(`{"Company":"C%02d"}`, i))
	}
	tests := []struct {
		query            string
		page, pageSize   int
		total, totalPage int
	}{
		{"", 1, 20, 45, 3},
		{"requestParams.page=3", 3, 20, 45, 3},
		{"requestParams.page=4", 4, 20, 45, 3},
		{"requestParams.page=1000000", 1000000, 20, 45, 3},
		{"requestParams.page=9223372036854775807&requestParams.pageSize=500", 9223372036854775807, 500, 45, 1},
		{"requestParams.page=9223372036854775807&requestParams.pageSize=1", 9223372036854775807, 1, 45, 45},
		{"requestParams.pageSize=501", 1, 500, 45, 1},
		{"requestParams.pageSize=9223372036854775807&requestParams.page=2", 2, 500, 45, 1},
		{"REQUESTPARAMS.PAGESIZE=10&requestparams.page=5", 5, 10, 45, 5},
		{"requestParams.filters=" + url.QueryEscape("Company~startswith~'C1'") + "&requestParams.page=9223372036854775807", 9223372036854775807, 20, 10, 1},
		{"requestParams.filters=" + url.QueryEscape("Company~eq~'nobody'") + "&requestParams.page=2", 2, 20, 0, 0},
		{"requestParams.filters=&requestParams.sorts=&requestParams.page=3", 3, 20, 45, 3},
	}
	for _, tt := range tests {
		r := api.do(http.MethodGet, "/api/v2/resource?"+tt.query, "")
		status, _, body := r.Status, r.Header, r.Body
		if status != http.StatusOK {
			t.Errorf("%s: %d %.300s", tt.query, status, body)
			continue
		}
		p := checkListPage(t, tt.query, body, tt.pageSize)
		if p.Page != tt.page || p.TotalResults != tt.total || p.TotalPages != tt.totalPage {
			t.Errorf("%s: Page %d TotalResults %d TotalPages %d, want %d %d %d",
				tt.query, p.Page, p.TotalResults, p.TotalPages, tt.page, tt.total, tt.totalPage)
		}
	}
}

// TestListQueryDeterministic: the same query string must always
// get the same answer. Parameter names are matched case-insensitively, so
// a query can name one parameter twice in different cases; which value
// counts must not depend on Go's random map order.
func TestListQueryDeterministic(t *testing.T) {
	t.Parallel()
	srv := NewServer(DefaultConfig(), NewStore(nil), nil)
	for _, raw := range []string{
		"requestParams.page=1&REQUESTPARAMS.PAGE=0",
		"requestParams.pageSize=5&requestparams.pagesize=6&RequestParams.PageSize=7",
		"requestParams.filters=Bogus~eq~'x'&requestparams.filters=Company~eq~'x'",
	} {
		first, _, firstErr := srv.parseListQuery(raw)
		for range 200 {
			q, _, err := srv.parseListQuery(raw)
			if (err == nil) != (firstErr == nil) || q.Page != first.Page || q.PageSize != first.PageSize ||
				formatFilter(q.Filter) != formatFilter(first.Filter) {
				t.Fatalf("%s: answers differ from one call to the next: (%+v, %v) then (%+v, %v)", raw, first, firstErr, q, err)
			}
		}
	}
	// The first occurrence counts, as ASP.NET's binder takes the first value.
	q, _, err := srv.parseListQuery("requestParams.page=3&REQUESTPARAMS.PAGE=4&requestParams.page=5")
	if err != nil || q.Page != 3 {
		t.Errorf("repeated page: got page %d, %v; want the first, 3", q.Page, err)
	}
}

// TestListQuerySemicolon: a ';' is an ordinary character of a
// query string for ASP.NET (and RFC 3986); Go's url.ParseQuery rejects it
// since Go 1.17. A filter value holding an unencoded ';' must not turn the
// whole request into a 400.
func TestListQuerySemicolon(t *testing.T) {
	t.Parallel()
	api := startServer(t, DefaultConfig(), nil)
	api.create(`{"Company":"Smith; Jones"}`)
	api.create(`{"Company":"Smith"}`)
	for _, tt := range []struct {
		query string
		want  int
		total int
	}{
		{"requestParams.filters=Company~eq~'Smith;%20Jones'", 200, 1},
		{"requestParams.filters=Company~contains~';'", 200, 1},
		{"utm=a;b&requestParams.pageSize=1", 200, 2},
		{"requestParams.page=1;2", 400, 0},
	} {
		r := api.do(http.MethodGet, "/api/v2/resource?"+tt.query, "")
		status, h, body := r.Status, r.Header, r.Body
		if status != tt.want {
			t.Errorf("%s: %d %.300s, want %d", tt.query, status, body, tt.want)
			continue
		}
		if status == 200 {
			if p := checkListPage(t, tt.query, body, -1); p.TotalResults != tt.total {
				t.Errorf("%s: TotalResults %d, want %d", tt.query, p.TotalResults, tt.total)
			}
		} else {
			checkErrorShape(t, tt.query, h, body)
		}
	}
}

// fuzzListServer is a Server with a few resources for FuzzListQuery.
func fuzzListServer(t testing.TB) *Server {
	cfg := kendoConfig()
	cfg.JournalSize = 0
	srv := NewServer(cfg, NewStore(nil), nil)
	names := []string{"Ada", "Émile", "O'Brien", "zoë", "", " ", "a~b", "(x)", "'", "Ünïcødé", "null"}
	for i, n := range names {
		body := fmt.Appendf(nil, `{"FirstName":%q,"Surname":"S%d","Company":"Co %d","Email":%q,"Status":%q}`,
			n, i, i%3, n+"@example.org", []string{"Active", "Inactive"}[i%2])
		if i%4 == 0 {
			body = fmt.Appendf(nil, `{"Company":%q,"Fax":""}`, "C"+n)
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/api/v2/resource", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		srv.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("seed %s: %d %s", body, rec.Code, rec.Body)
		}
	}
	return srv
}

// FuzzListQuery sends arbitrary raw query strings through parseListQuery
// and the list handler: never a panic, never a 5xx; a 400 exactly when
// parseListQuery refuses; a 200 whose page arithmetic is right.
func FuzzListQuery(f *testing.F) {
	for _, s := range []string{
		"",
		"requestParams.page=2&requestParams.pageSize=3",
		"requestParams.filters=" + url.QueryEscape("FirstName~eq~'Ada'~and~Surname~eq~'S0'"),
		"requestParams.filters=" + url.QueryEscape("(Company~contains~'co'~or~Email~endswith~'.org')~and~Status~eq~'Active'"),
		"requestParams.filters=Status='Active'&requestParams.sorts=FirstName-desc~Surname",
		"requestParams.filters=" + url.QueryEscape("Surname~eq~'O''Brien'~or~Fax~isnull~undefined"),
		"requestParams.filters=" + url.QueryEscape("StatusId~gte~2~and~FirstName~isnotnullorempty"),
		"requestParams.sorts=Position-asc~Surname-desc&requestParams.pageSize=500",
		"REQUESTPARAMS.PAGE=1&requestparams.page=0",
		"requestParams.page=0",
		"requestParams.page=-1",
		"requestParams.page=1.5",
		"requestParams.page=",
		"requestParams.page=%202%20",
		"requestParams.page=99999999999999999999",
		"requestParams.page=9223372036854775807&requestParams.pageSize=1",
		"requestParams.pageSize=9223372036854775807",
		"requestParams.pageSize=501",
		"requestParams.filters=%zz",
		"%",
		"&&&==&=",
		"a;b=c",
		"requestParams.filters=" + strings.Repeat("(", 20) + "Id~isnull" + strings.Repeat(")", 20),
		"requestParams.filters=" + strings.Repeat("Id~isnull~or~", 130) + "Id~isnull",
		"requestParams.filters=DisplayName~eq~'%00'&requestParams.sorts=%00",
		"requestParams.filters=%FF~eq~'x'",
		"requestParams.filters=DisplayName~eq~'%FF%FE'",
		"requestParams.filters=Company~eq~'a+b'&requestParams.page=+1",
		"requestParams.sorts=" + strings.Repeat("~", 100),
	} {
		f.Add(s)
	}
	srv := fuzzListServer(f)
	total := srv.defaultNS().store.Len()
	f.Fuzz(func(t *testing.T, raw string) {
		q, pageSize, err := srv.parseListQuery(raw)
		if err != nil {
			var ae *apiError
			var ve *validationError
			if !(errors.As(err, &ae) && ae.Status == http.StatusBadRequest && ae.Message != "" ||
				errors.As(err, &ve) && ve.Message != "" && !ve.ModelState.empty()) {
				t.Fatalf("parseListQuery(%q): %#v, want a 400", raw, err)
			}
		} else if q.Page < 1 || pageSize < 1 || pageSize > srv.cfg.MaxPageSize || pageSize != q.PageSize {
			t.Fatalf("parseListQuery(%q): page %d pageSize %d (%d)", raw, q.Page, pageSize, q.PageSize)
		}

		req := &http.Request{
			Method: http.MethodGet, URL: &url.URL{Path: "/api/v2/resource", RawQuery: raw},
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: http.NoBody, Host: "example.org", RemoteAddr: "192.0.2.1:1234",
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		if rec.Code >= 500 {
			t.Fatalf("%q: %d %s", raw, rec.Code, body)
		}
		if rec.Header().Get("Content-Type") != "application/json; charset=utf-8" || !json.Valid(body) || !utf8.Valid(body) {
			t.Fatalf("%q: %s %q", raw, rec.Header().Get("Content-Type"), body)
		}
		if (err != nil) != (rec.Code == http.StatusBadRequest) {
			t.Fatalf("%q: parseListQuery says %v, the handler %d %s", raw, err, rec.Code, body)
		}
		if err != nil {
			checkErrorShape(t, raw, rec.Header(), body)
			return
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("%q: %d %s", raw, rec.Code, body)
		}
		p := checkListPage(t, raw, body, pageSize)
		if p.Page != q.Page || p.TotalResults > total || (q.Filter == nil && p.TotalResults != total) {
			t.Fatalf("%q: Page %d TotalResults %d (of %d), query page %d", raw, p.Page, p.TotalResults, total, q.Page)
		}
	})
}
