package resourcedir

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// The journal as a test reads it (the contract: "The journal"), each
// request through a real TCP connection.

// journalAnswer is GET /__admin/requests.
type journalAnswer struct {
	Requests []wireEntry
	Count    int
	Journal  string
}

func (e *testClient) readJournal(query string) journalAnswer {
	e.t.Helper()
	r := e.expect(http.StatusOK, http.MethodGet, "/__admin/requests"+query, "")
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		e.t.Errorf("Content-Type %q", ct)
	}
	if !utf8.Valid(r.Body) {
		e.t.Errorf("GET /__admin/requests%s is not valid UTF-8: %q", query, r.Body)
	}
	var a journalAnswer
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		e.t.Fatalf("GET /__admin/requests%s: %v: %s", query, err, r.Body)
	}
	if a.Count != len(a.Requests) {
		e.t.Errorf("Count %d, but %d Requests", a.Count, len(a.Requests))
	}
	return a
}

func seqs(entries []wireEntry) []uint64 {
	out := []uint64{}
	for _, en := range entries {
		out = append(out, en.Seq)
	}
	return out
}

// TestJournalEntryExact sends a request byte for byte and checks every
// field of its entry.
func TestJournalEntryExact(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	body := `{ "FirstName": "Ada",  "Surname": "Lovelace" }`
	req := "POST /API/V2/Resource/?requestParams.page=1&tag=a&tag=b&empty=&odd=%2F%26 HTTP/1.1\r\n" +
		"Host: 127.0.0.1\r\n" +
		"content-type: application/json\r\n" +
		"x-trace: one\r\n" +
		"X-Trace: two\r\n" +
		"Authorization: Basic " + "c3ZjOnMzY3JldA==" + "\r\n" + // svc:s3cret
		"X-Request-Id: journal-exact-1\r\n" +
		"Connection: close\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body
	before := time.Now().UTC()
	got, _ := rawConnExchange(t, e.base, req)
	if !bytes.HasPrefix(got, []byte("HTTP/1.1 201 Created\r\n")) {
		t.Fatalf("answer %q", got)
	}
	_, answer, _ := bytes.Cut(got, []byte("\r\n\r\n"))
	r := e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "")
	var a journalAnswer
	r.decode(t, &a)
	if len(a.Requests) != 1 {
		t.Fatalf("journal %s", r.Body)
	}
	en := a.Requests[0]
	if en.Time.Before(before.Add(-time.Second)) || en.Time.After(time.Now().Add(time.Second)) || en.Time.Location() != time.UTC {
		t.Errorf("Time %v", en.Time)
	}
	if en.DurationMs < 0 {
		t.Errorf("DurationMs %v", en.DurationMs)
	}
	// Everything else is exact: the wire shape, in this order.
	want := fmt.Sprintf(`{"Requests":[{"Seq":1,"Time":"%s","RequestId":"journal-exact-1","Method":"POST",`+
		`"Path":"/API/V2/Resource/","Query":"requestParams.page=1&tag=a&tag=b&empty=&odd=%%2F%%26",`+
		`"Params":{"empty":"","odd":"/&","requestParams.page":"1","tag":["a","b"]},`+
		`"Headers":{"Authorization":"Basic svc:***","Connection":"close","Content-Length":"%d","Content-Type":"application/json",`+
		`"Host":"127.0.0.1","X-Request-Id":"journal-exact-1","X-Trace":["one","two"]},"HeadersTruncated":false,`+
		`"Body":{"FirstName":"Ada","Surname":"Lovelace"},"BodyTruncated":false,"Status":201,"DurationMs":%s,"Fault":null,"Delivered":201,`+
		`"Response":{"Headers":{"Content-Length":"%d","Content-Type":"application/json; charset=utf-8","X-Request-Id":"journal-exact-1"},`+
		`"Body":%s},"ResponseTruncated":false}],`+
		`"Count":1,"Journal":"on"}`,
		en.Time.Format(time.RFC3339Nano), len(body), strconv.FormatFloat(en.DurationMs, 'f', -1, 64), len(answer), answer)
	if string(r.Body) != want {
		t.Errorf("journal\n%s\nwant\n%s", r.Body, want)
	}
}

// TestJournalMasksSecrets: what the journal shows of credentials, cookies,
// keys and tokens, in headers and in the query.
func TestJournalMasksSecrets(t *testing.T) {
	basic := func(userPass string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(userPass)) }
	good := basic("svc:s3cret")
	tests := []struct {
		name    string
		query   string   // after /api/v2/resource
		header  []string // name, value pairs, sent as they are
		status  int
		headers map[string]any // the entry's Headers, for the names sent
		shown   string         // the entry's Query
		params  map[string]any
	}{
		{"the right credentials", "", []string{"Authorization", good}, 200,
			map[string]any{"Authorization": "Basic svc:***"}, "", map[string]any{}},
		{"lower-case scheme", "", []string{"Authorization", "basic " + good[6:]}, 200,
			map[string]any{"Authorization": "basic svc:***"}, "", map[string]any{}},
		{"a wrong password", "", []string{"Authorization", basic("svc:tok3n")}, 200,
			map[string]any{"Authorization": "Basic svc:***"}, "", map[string]any{}},
		{"a token as the user name, as curl -u $TOKEN: sends it", "", []string{"Authorization", basic("tok3n:")}, 200,
			map[string]any{"Authorization": "Basic ***"}, "", map[string]any{}},
		{"a user name and no colon", "", []string{"Authorization", basic("tok3n")}, 200,
			map[string]any{"Authorization": "Basic ***"}, "", map[string]any{}},
		{"no user name", "", []string{"Authorization", basic(":tok3n")}, 200,
			map[string]any{"Authorization": "Basic :***"}, "", map[string]any{}},
		{"not base64", "", []string{"Authorization", "Basic tok3n!!"}, 200,
			map[string]any{"Authorization": "Basic ***"}, "", map[string]any{}},
		{"Bearer", "", []string{"Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.tok3n"}, 200,
			map[string]any{"Authorization": "Bearer ***"}, "", map[string]any{}},
		{"another scheme", "", []string{"Authorization", `Digest username="svc", response="tok3n"`}, 200,
			map[string]any{"Authorization": "Digest ***"}, "", map[string]any{}},
		{"no scheme", "", []string{"Authorization", "tok3n"}, 200,
			map[string]any{"Authorization": "***"}, "", map[string]any{}},
		{"empty", "", []string{"Authorization", ""}, 200,
			map[string]any{"Authorization": ""}, "", map[string]any{}},
		{"proxy and other credentials", "", []string{"Authorization", good, "Proxy-Authorization", basic("proxy:tok3n"),
			"X-Authorization", "Bearer tok3n"}, 200,
			map[string]any{"Authorization": "Basic svc:***", "Proxy-Authorization": "Basic proxy:***", "X-Authorization": "Bearer ***"},
			"", map[string]any{}},
		{"cookies, keys and tokens", "", []string{"Cookie", "sid=tok3n; theme=dark", "X-Api-Key", "tok3n", "Api-Key", "tok3n",
			"X-Auth-Token", "tok3n", "X-Csrf-Token", "tok3n", "Ocp-Apim-Subscription-Key", "tok3n", "X-Client-Secret", "tok3n",
			"X-Session-Id", "tok3n", "X-Password", "tok3n", "X-Api-Key-Empty", ""}, 200,
			map[string]any{"Cookie": "***", "X-Api-Key": "***", "Api-Key": "***", "X-Auth-Token": "***", "X-Csrf-Token": "***",
				"Ocp-Apim-Subscription-Key": "***", "X-Client-Secret": "***", "X-Session-Id": "***", "X-Password": "***",
				"X-Api-Key-Empty": ""}, "", map[string]any{}},
		{"headers that are no secret", "", []string{"Authorization", good, "Idempotency-Key", "k-1", "X-Trace", "t-1",
			"X-Request-Id", "masks-1"}, 200,
			map[string]any{"Idempotency-Key": "k-1", "X-Trace": "t-1", "X-Request-Id": "masks-1"}, "", map[string]any{}},
		{"secret parameters", "?token=tok3n&requestParams.pageSize=5&API_KEY=tok3n&Password=tok3n&sig=tok3n&key=tok3n&auth=tok3n" +
			"&access_token=tok3n&client_secret=tok3n&signature=tok3n&passwd=tok3n&secret=tok3n&apikey=tok3n&subscription-key=tok3n" +
			"&refresh_token=tok3n&pwd=tok3n&session=tok3n&monkey=m&tokens_left=tok3n",
			[]string{"Authorization", good}, 200, map[string]any{},
			"token=***&requestParams.pageSize=5&API_KEY=***&Password=***&sig=***&key=***&auth=***" +
				"&access_token=***&client_secret=***&signature=***&passwd=***&secret=***&apikey=***&subscription-key=***" +
				"&refresh_token=***&pwd=***&session=***&monkey=m&tokens_left=***",
			map[string]any{"token": "***", "requestParams.pageSize": "5", "API_KEY": "***", "Password": "***", "sig": "***",
				"key": "***", "auth": "***", "access_token": "***", "client_secret": "***", "signature": "***", "passwd": "***",
				"secret": "***", "apikey": "***", "subscription-key": "***", "refresh_token": "***", "pwd": "***",
				"session": "***", "monkey": "m", "tokens_left": "***"}},
		{"encoded, repeated and empty", "?api%5Fkey=tok3n&token=tok3n&token=tok%26en&token=&x=%41", nil, 200, map[string]any{},
			"api%5Fkey=***&token=***&token=***&token=&x=%41",
			map[string]any{"api_key": "***", "token": []any{"***", "***", ""}, "x": "A"}},
		{"after a semicolon", "?x=1;token=tok3n", nil, 200, map[string]any{}, "x=1;token=***", map[string]any{}},
		// The Path is decoded: an escaped '?' puts a query in it.
		{"in the path", "%3Fx=1&token=tok3n", nil, 404, map[string]any{}, "", map[string]any{}},
	}
	// Without -auth: a refused request keeps no headers (TestJournalRefusedKeepsRequestLine).
	e := startServer(t, DefaultConfig(), nil)
	// A fault's answer sets a cookie and a token: the Response shows neither.
	e.expect(http.StatusOK, http.MethodPost, "/__admin/faults", `{"Method": "DELETE", "Path": "/api/v2/resource",
		"Status": 503, "Headers": {"Set-Cookie": "sid=tok3n", "X-Auth-Token": "tok3n", "Retry-After": "2"}}`, "Authorization", good)
	for _, tt := range tests {
		req, err := http.NewRequest(http.MethodGet, e.base+"/api/v2/resource"+tt.query, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(tt.header); i += 2 {
			req.Header[tt.header[i]] = []string{tt.header[i+1]}
		}
		resp, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Fatalf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
	}
	e.expect(http.StatusServiceUnavailable, http.MethodDelete, "/api/v2/resource", "", "Authorization", good)

	var a journalAnswer
	e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "", "Authorization", good).decode(t, &a)
	if len(a.Requests) != len(tests)+1 {
		t.Fatalf("%d entries, want %d", len(a.Requests), len(tests)+1)
	}
	for i, tt := range tests {
		en := a.Requests[i]
		headers := map[string]any{}
		for name := range tt.headers {
			headers[name] = en.Headers[name]
		}
		if en.Status != tt.status || !reflect.DeepEqual(headers, tt.headers) || en.Query != tt.shown || !reflect.DeepEqual(en.Params, tt.params) {
			t.Errorf("%s: shown as\n%d %v\nQuery %q\nParams %v\nwant\n%d %v\nQuery %q\nParams %v",
				tt.name, en.Status, headers, en.Query, en.Params, tt.status, tt.headers, tt.shown, tt.params)
		}
		want := "/api/v2/resource"
		if strings.HasPrefix(tt.query, "%3F") {
			want += "?x=1&token=***"
		}
		if en.Path != want {
			t.Errorf("%s: Path %q, want %q", tt.name, en.Path, want)
		}
	}
	faulted := a.Requests[len(tests)].Response
	if faulted == nil {
		t.Fatal("the fault's entry has no Response")
	}
	for name, v := range map[string]any{"Set-Cookie": "***", "X-Auth-Token": "***", "Retry-After": "2"} {
		if faulted.Headers[name] != v {
			t.Errorf("the fault's Response Headers %v, want %s: %v", faulted.Headers, name, v)
		}
	}
	// Nothing sent as a secret shows anywhere in the journal.
	raw := e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "", "Authorization", good).Body
	if n := bytes.Count(raw, []byte("tok3n")) + bytes.Count(raw, []byte(base64.StdEncoding.EncodeToString([]byte("tok3n")))); n != 0 {
		t.Errorf("the journal shows a secret %d times", n)
	}
}

func TestJournalBody(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		want                    string // the Body as the journal writes it
		truncated               bool
	}{
		{"JSON, compacted", "application/json", "{\n \"Company\" : \"A\" ,\"Types\": [ ] }", `{"Company":"A","Types":[]}`, false},
		{"JSON after a byte-order mark", "application/json", "\ufeff{\"Company\": \"B\"}", `{"Company":"B"}`, false},
		{"not JSON: a string", "text/plain", "Company=C&x=1", `"Company=C&x=1"`, false},
		{"JSON but invalid UTF-8: repaired", "application/json", "{\"Company\": \"\xff\"}", `{"Company":"` + "\ufffd" + `"}`, false},
		{"a lone surrogate: U+FFFD", "application/json", `{"Company": "\ud800"}`, `{"Company":"\ufffd"}`, false},
		{"a string of control bytes", "application/json", "\x01\x02\"", `"\u0001\u0002\""`, false},
		{"no body: null", "", "", `null`, false},
		{"cut at 64 KiB: a string", "application/json", `{"Company":"` + strings.Repeat("é", 40<<10) + `"}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startServer(t, DefaultConfig(), nil)
			e.do(http.MethodPost, "/api/v2/resource", tt.body, "Content-Type", tt.contentType)
			r := e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "")
			if !utf8.Valid(r.Body) {
				t.Fatalf("the journal is not valid UTF-8: %q", r.Body)
			}
			var a journalAnswer
			r.decode(t, &a)
			en := a.Requests[0]
			if en.BodyTruncated != tt.truncated {
				t.Errorf("BodyTruncated %v, want %v", en.BodyTruncated, tt.truncated)
			}
			if tt.truncated {
				var s string
				if err := json.Unmarshal(en.Body, &s); err != nil || !utf8.ValidString(s) || len(s) > maxJournalBody || len(s) < maxJournalBody-3 {
					t.Errorf("a cut body: %d bytes as a string (%v), valid UTF-8 %v", len(s), err, utf8.ValidString(s))
				}
				return
			}
			got := string(en.Body)
			if !strings.Contains(string(r.Body), `"Body":`+tt.want+`,`) {
				t.Errorf("Body %s, want %s", got, tt.want)
			}
		})
	}
}

// TestJournalSeq: Seq only grows, and a clear does not make it start
// again.
func TestJournalSeq(t *testing.T) {
	cfg := DefaultConfig()
	cfg.JournalSize = 2
	e := startServer(t, cfg, nil)
	for range 3 {
		e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	}
	if got := seqs(e.readJournal("").Requests); !slices.Equal(got, []uint64{2, 3}) {
		t.Errorf("Seq %v, want [2 3]", got)
	}
	e.expect(http.StatusOK, http.MethodDelete, "/__admin/requests", "")
	e.expect(http.StatusOK, http.MethodPost, "/__admin/reset", "")
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	if got := seqs(e.readJournal("").Requests); !slices.Equal(got, []uint64{4}) {
		t.Errorf("Seq after a clear and a reset %v, want [4]", got)
	}
}

// TestJournalFilters checks each filter alone and combined.
func TestJournalFilters(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	const id = "0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c"
	e.addFault(`{"Method": "GET", "Path": "/api/v2/resource", "Status": 503, "Times": 1}`)
	sent := []struct {
		method, path, body string
	}{
		{"GET", "/api/v2/resource", ""},                                  // 1: 503 by the fault
		{"GET", "/API/V2/Resource/", ""},                                 // 2: 200
		{"POST", "/api/v2/resource", `{"Company": "A"}`},                 // 3: 200
		{"POST", "/api/v2/resource", `{"Position": "x"}`},                // 4: 400
		{"PUT", "/api/v2/resource/" + id, putBody(id, "FirstName", "Z")}, // 5: 404
		{"PUT", "/api/v2/Resource/not-a-guid", `{}`},                     // 6: 400
		{"DELETE", "/api/v2/resource/" + id, ""},                         // 7: 405
		{"GET", "/api/v2/nowhere", ""},                                   // 8: 404
		{"GET", "/api/v2/resource?requestParams.page=2", ""},             // 9: 200
		{"POST", "/api/v2/resource/" + id + "/", `{"Company": 1}`},       // 10: 405
	}
	for _, s := range sent {
		e.do(s.method, s.path, s.body)
	}
	// 11: closed without an answer, which the journal shows as Status 0.
	e.addFault(`{"Method": "DELETE", "Path": "/api/v2/resource", "Kind": "empty"}`)
	if _, err := rawConnExchange(t, e.base, "DELETE /api/v2/resource HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != io.EOF {
		t.Fatalf("the empty fault: %v", err)
	}
	journalOf(e, 11)
	tests := []struct {
		query string
		want  []uint64
	}{
		{"", []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{"?method=GET", []uint64{1, 2, 8, 9}},
		{"?method=post", []uint64{3, 4, 10}},
		{"?path=/api/v2/resource", []uint64{1, 2, 3, 4, 9, 11}},
		{"?path=/API/V2/RESOURCE/", []uint64{1, 2, 3, 4, 9, 11}},
		{"?path=/api/v2/resource/{id}", []uint64{5, 6, 7, 10}},
		{"?path=/api/v2/resource/" + id, []uint64{5, 7, 10}},
		{"?path=/api/v2/resource/not-a-guid", []uint64{6}},
		{"?path=/api/v2/{what}", []uint64{1, 2, 3, 4, 8, 9, 11}},
		{"?path=/api/v2/nowhere", []uint64{8}},
		{"?status=200", []uint64{2, 9}},
		{"?status=201", []uint64{3}},
		{"?status=400", []uint64{4, 6}},
		{"?status=503", []uint64{1}},
		{"?status=0", []uint64{11}},
		{"?since=7", []uint64{8, 9, 10, 11}},
		{"?since=11", []uint64{}},
		{"?since=0", []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{"?limit=3", []uint64{9, 10, 11}},
		{"?limit=100", []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{"?method=POST&status=400", []uint64{4}},
		{"?method=GET&path=/api/v2/resource&status=200", []uint64{2, 9}},
		{"?path=/api/v2/resource&since=2&limit=2", []uint64{9, 11}},
		{"?method=PUT&path=/api/v2/resource/{id}&status=404&since=1&limit=1", []uint64{5}},
		{"?method=PATCH", []uint64{}},
	}
	for _, tt := range tests {
		a := e.readJournal(strings.ReplaceAll(strings.ReplaceAll(tt.query, "{", "%7B"), "}", "%7D"))
		if got := seqs(a.Requests); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Seq %v, want %v", tt.query, got, tt.want)
		}
		if a.Journal != "on" {
			t.Errorf("%s: Journal %q", tt.query, a.Journal)
		}
	}
	if a := e.readJournal("?status=503"); *a.Requests[0].Fault != 1 {
		t.Errorf("the faulted entry's Fault %v, want 1", a.Requests[0].Fault)
	}
}

func TestJournalQueryInvalid(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	tests := []struct {
		query string
		keys  []string
	}{
		{"?wait=61s", []string{"wait"}},
		{"?wait=2m", []string{"wait"}},
		{"?count=1&wait=5", []string{"wait"}},
		{"?wait=-1s", []string{"wait"}},
		{"?count=0&wait=1s", []string{"count"}},
		{"?limit=0", []string{"limit"}},
		{"?limit=x", []string{"limit"}},
		{"?since=-1", []string{"since"}},
		{"?status=abc", []string{"status"}},
		{"?path=api/v2/resource", []string{"path"}},
		{"?Method=GET", []string{"Method"}},
		{"?method=GET&verbose=1&pth=/api", []string{"pth", "verbose"}},
		{"?limit=2&limit=3", []string{"limit"}},
	}
	for _, tt := range tests {
		r := e.expect(http.StatusBadRequest, http.MethodGet, "/__admin/requests"+tt.query, "")
		ae := r.wantError(t, 0, "", anyModelState)
		var keys []string
		for k, msgs := range ae.ModelState {
			keys = append(keys, k)
			if !strings.Contains(msgs[0], k) {
				t.Errorf("%s: %q does not name %s", tt.query, msgs[0], k)
			}
		}
		slices.Sort(keys)
		if !slices.Equal(keys, tt.keys) {
			t.Errorf("%s: ModelState %v, want keys %v", tt.query, ae.ModelState, tt.keys)
		}
	}
	r := e.expect(http.StatusBadRequest, http.MethodDelete, "/__admin/requests?all=1", "")
	if ae := r.wantError(t, 0, "", anyModelState); len(ae.ModelState["all"]) != 1 {
		t.Errorf("DELETE with a parameter: %s", r.Body)
	}
	// wait=60s is the most allowed; an entry that matches answers at once.
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	if a := e.readJournal("?wait=60s"); len(a.Requests) != 1 {
		t.Errorf("wait=60s: %+v", a)
	}
}

// TestJournalWait: count=N&wait answers as soon as N entries match, made
// by requests that come after the wait began.
func TestJournalWait(t *testing.T) {
	cfg := DefaultConfig()
	srv := newServer(cfg, newStore(nil), nil)
	// The requests are sent once the reading request has arrived.
	arrived := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/__admin/requests" {
			once.Do(func() { close(arrived) })
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	e := &testClient{t: t, srv: srv, ts: ts, base: ts.URL, client: ts.Client()}
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "") // Seq 1: not counted

	sent := make(chan error, 1)
	go func() {
		<-arrived
		client := &http.Client{Timeout: 10 * time.Second}
		for i := range 4 {
			body := fmt.Sprintf(`{"Company": "Async %d"}`, i)
			resp, err := client.Post(ts.URL+"/api/v2/resource", "application/json", strings.NewReader(body))
			if err != nil {
				sent <- err
				return
			}
			resp.Body.Close()
		}
		sent <- nil
	}()
	a := e.readJournal("?method=POST&count=3&wait=10s")
	if len(a.Requests) < 3 {
		t.Fatalf("answered with %d entries, want at least 3: %+v", len(a.Requests), a)
	}
	for _, en := range a.Requests {
		if en.Method != "POST" || en.Seq < 2 {
			t.Errorf("entry %+v does not match", en)
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}

	// When the wait passes, the answer holds what matched.
	a = e.readJournal("?method=POST&count=50&wait=100ms")
	if len(a.Requests) != 4 {
		t.Errorf("after the wait: %d entries, want the 4 that matched", len(a.Requests))
	}
	// Entries that already match answer at once, however long the wait.
	a = e.readJournal("?count=5&wait=60s")
	if len(a.Requests) != 5 {
		t.Errorf("%d entries, want 5", len(a.Requests))
	}
	// since waits for what comes next.
	a = e.readJournal("?since=5&wait=100ms")
	if len(a.Requests) != 0 {
		t.Errorf("since the last: %+v", a.Requests)
	}
}

// longPolls are requests for the journal sent at once, answered on
// answers; those still waiting are cancelled when the test ends, before
// its server is closed.
type longPolls struct {
	answers chan response
	stop    func()
}

func startLongPolls(t *testing.T, e *testClient, query string, n int) *longPolls {
	ctx, cancel := context.WithCancel(context.Background())
	p := &longPolls{answers: make(chan response, n)}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/__admin/requests"+query, nil)
			if err != nil {
				t.Error(err)
				return
			}
			resp, err := e.client.Do(req)
			if err != nil {
				return // cancelled
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Errorf("%s: %v", query, err)
			}
			p.answers <- response{Status: resp.StatusCode, Header: resp.Header, Body: b}
		})
	}
	p.stop = sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(p.stop)
	return p
}

// recorded waits until j has recorded n entries in all: an entry is added
// once its answer is done.
func recorded(t *testing.T, j *journal, n uint64) {
	t.Helper()
	eventually(t, 10*time.Second, fmt.Sprintf("%d entries recorded", n), func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		return j.lastSeq == n
	})
}

// TestJournalWaitCostPerEntry: long polls that an entry does not match
// cost recording it at most one filter check for each filter on no exact
// path, however many of them wait. Each used to be woken by every entry to
// check the whole journal again: with 2,000 of them a create took 250 ms.
func TestJournalWaitCostPerEntry(t *testing.T) {
	same := func(q string) func(int) string { return func(int) string { return q } }
	tests := []struct {
		name    string
		query   func(i int) string
		waiters int
		checks  uint64 // per entry recorded
	}{
		{"one filter on any path", same("?method=DELETE&count=1&wait=60s"), 1, 1},
		{"one filter on any path", same("?method=DELETE&count=1&wait=60s"), 200, 1},
		{"one filter on a pattern", same("?path=/api/v2/resource/%7Bid%7D&count=1&wait=60s"), 200, 1},
		{"one filter on another path", same("?path=/nope&count=1&wait=60s"), 200, 0},
		{"each its own path", func(i int) string { return fmt.Sprintf("?path=/nope/%d&count=1&wait=60s", i) }, 200, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s, %d waiters", tt.name, tt.waiters), func(t *testing.T) {
			e := startServer(t, DefaultConfig(), nil)
			j := e.srv.defaultNS().journal
			e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
			recorded(t, j, 1)
			before := j.examined.Load()
			var polls []*longPolls
			for i := range tt.waiters {
				polls = append(polls, startLongPolls(t, e, tt.query(i), 1))
			}
			// Each checks the one entry there is as it begins.
			eventually(t, 20*time.Second, "the long polls to begin", func() bool {
				return j.examined.Load() == before+uint64(tt.waiters)
			})
			const n = 20
			for range n {
				e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
			}
			recorded(t, j, 1+n)
			if got := j.examined.Load() - before - uint64(tt.waiters); got != n*tt.checks {
				t.Errorf("%d entries recorded while %d long polls waited cost %d checks, want %d", n, tt.waiters, got, n*tt.checks)
			}
			for _, p := range polls {
				if len(p.answers) != 0 {
					t.Fatalf("a long poll answered, want none: nothing matched")
				}
			}
		})
	}
}

// take receives n answers; a deadline stands for "never".
func (p *longPolls) take(t *testing.T, n int) []response {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	out := make([]response, 0, n)
	for len(out) < n {
		select {
		case r := <-p.answers:
			out = append(out, r)
		case <-deadline.C:
			t.Fatalf("%d of %d long polls answered", len(out), n)
		}
	}
	return out
}

// waiting is how many long polls j has registered.
func waiting(j *journal) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, filters := range j.waits {
		for _, ws := range filters {
			n += ws.Len()
		}
	}
	return n
}

// TestJournalWaitersAnswered: among many long polls, those that an entry
// brings to their count answer at once with what matched; the others wait
// until their wait passes or their client gives up, and are then
// forgotten.
func TestJournalWaitersAnswered(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	j := e.srv.defaultNS().journal
	posts := startLongPolls(t, e, "?method=POST&count=2&wait=60s", 20)
	// Seq 1 and 3 are GETs too, but not after Seq 3.
	later := startLongPolls(t, e, "?method=GET&since=3&count=1&wait=60s", 20)
	never := startLongPolls(t, e, "?path=/nope&count=1&wait=60s", 20)
	eventually(t, 20*time.Second, "60 long polls to wait", func() bool { return waiting(j) == 60 })
	short := startLongPolls(t, e, "?path=/nope&count=1&wait=50ms", 5)

	for _, body := range []string{"", `{"Company": "A"}`, "", `{"Company": "B"}`, ""} {
		if body == "" {
			e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
		} else {
			e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", body)
		}
	}
	tests := []struct {
		polls *longPolls
		same  string // the read that must answer the same, byte for byte
		seqs  []uint64
	}{
		{posts, "?method=POST", []uint64{2, 4}},
		{later, "?method=GET&since=3", []uint64{5}},
	}
	for _, tt := range tests {
		want := e.expect(http.StatusOK, http.MethodGet, "/__admin/requests"+tt.same, "").Body
		if got := seqs(e.readJournal(tt.same).Requests); !slices.Equal(got, tt.seqs) {
			t.Fatalf("%s: Seq %v, want %v", tt.same, got, tt.seqs)
		}
		for _, r := range tt.polls.take(t, 20) {
			if r.Status != http.StatusOK || string(r.Body) != string(want) {
				t.Errorf("a long poll like %s answered %d %s, want 200 %s", tt.same, r.Status, r.Body, want)
			}
		}
	}
	for _, r := range short.take(t, 5) {
		if r.Status != http.StatusOK || string(r.Body) != `{"Requests":[],"Count":0,"Journal":"on"}` {
			t.Errorf("a long poll whose wait passed answered %d %s, want 200 and no entries", r.Status, r.Body)
		}
	}
	if len(never.answers) != 0 {
		t.Errorf("%d long polls that nothing matched answered, want none", len(never.answers))
	}
	never.stop()
	eventually(t, 10*time.Second, "the long polls that gave up to be forgotten", func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		return len(j.waits) == 0
	})
}

// TestJournalWaitRecounts: a long poll counts the entries the journal
// keeps, not those added since it began: a clear takes back what matched,
// and a count over the journal's size waits for the whole wait.
func TestJournalWaitRecounts(t *testing.T) {
	cfg := DefaultConfig()
	cfg.JournalSize = 3
	e := startServer(t, cfg, nil)
	j := e.srv.defaultNS().journal
	e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", `{"Company": "1"}`)
	polls := startLongPolls(t, e, "?method=POST&count=2&wait=60s", 1)
	eventually(t, 10*time.Second, "the long poll to wait", func() bool { return waiting(j) == 1 })
	e.expect(http.StatusOK, http.MethodDelete, "/__admin/requests", "")
	e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", `{"Company": "2"}`)
	e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", `{"Company": "3"}`)
	var a journalAnswer
	polls.take(t, 1)[0].decode(t, &a)
	if got := seqs(a.Requests); !slices.Equal(got, []uint64{2, 3}) {
		t.Errorf("after a clear: Seq %v, want [2 3]", got)
	}

	e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", `{"Company": "4"}`)
	if got := seqs(e.readJournal("?method=POST&count=4&wait=50ms").Requests); !slices.Equal(got, []uint64{2, 3, 4}) {
		t.Errorf("count=4 of 3 kept: Seq %v, want [2 3 4]", got)
	}
	if n := waiting(j); n != 0 {
		t.Errorf("%d long polls still registered", n)
	}
}

func TestJournalOffAnswers(t *testing.T) {
	cfg := DefaultConfig()
	cfg.JournalSize = journalOff
	e := startServer(t, cfg, nil)
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	for _, q := range []string{"", "?method=GET", "?count=1&wait=30s"} {
		r := e.expect(http.StatusOK, http.MethodGet, "/__admin/requests"+q, "")
		if string(r.Body) != `{"Requests":[],"Count":0,"Journal":"off"}` {
			t.Errorf("%s: %s", q, r.Body)
		}
	}
	e.expect(http.StatusBadRequest, http.MethodGet, "/__admin/requests?wait=1h", "")
}

// TestJournalReadIsStreamed: reading a journal of 1,000 bodies that each
// encode to six times their size must not build the answer whole: four
// concurrent reads of ~380 MB answers keep the heap near what it was.
func TestJournalReadIsStreamed(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	cfg := DefaultConfig()
	cfg.JournalSize = n
	cfg.JournalBudget = 256 << 20 // room for all n entries, above the 32 MiB default
	srv := newServer(cfg, newStore(nil), nil)
	body := bytes.Repeat([]byte{0x01}, maxJournalBody) // written as \u0001: six bytes each
	for range n {
		req := httptest.NewRequest(http.MethodPost, "/api/v2/resource", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		srv.ServeHTTP(httptest.NewRecorder(), req)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	sizes, grew, base := heapGrowthOfReads(t, ts, "/__admin/requests", 4)
	for i := range sizes {
		if want := int64(n) * 6 * maxJournalBody; sizes[i] < want {
			t.Fatalf("read %d bytes, want over %d", sizes[i], want)
		}
	}
	t.Logf("4 concurrent reads of %d MB each: heap in use grew by at most %d MiB over %d MiB",
		sizes[0]>>20, grew>>20, base>>20)
	// An answer built whole holds one answer's size (4 of them at once);
	// streamed, the growth is garbage the collector has not come to yet,
	// which a busy machine lets run to tens of MiB (34 MiB seen with the
	// other core loaded, against a limit of 32 that then failed). A quarter
	// of one answer tells the two apart with room on both sides.
	if limit := sizes[0] / 4; grew > limit {
		t.Errorf("heap in use grew by %d MiB during the reads, over %d MiB: the answer is built whole", grew>>20, limit>>20)
	}
}

// TestJournalParamsDecoding: Params are the query decoded once, as the
// handlers read it.
func TestJournalParamsDecoding(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	q := url.Values{"requestParams.filters": {"Company~eq~'A&B'"}, "x": {"1", "2", "3"}}.Encode()
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource?"+q, "")
	en := e.readJournal("").Requests[0]
	if en.Query != q {
		t.Errorf("Query %q, want %q", en.Query, q)
	}
	want := map[string]any{"requestParams.filters": "Company~eq~'A&B'", "x": []any{"1", "2", "3"}}
	if fmt.Sprint(en.Params) != fmt.Sprint(want) {
		t.Errorf("Params %v, want %v", en.Params, want)
	}
}

func TestJournalEntryFields(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	before := time.Now()
	created := e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", "{\n  \"FirstName\": \"Ada\",\n  \"Surname\": \"Lovelace\"\n}")
	list := e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource?requestParams.pageSize=5&requestParams.filters=FirstName~eq~%27Ada%27", "")
	bad := e.expect(http.StatusBadRequest, http.MethodPut, "/api/v2/resource/not-a-guid", "plain text, not JSON")
	mine := e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", "X-Request-Id", "client-chosen-42")
	e.expect(http.StatusOK, http.MethodGet, "/__admin/health", "")  // not journaled
	e.expect(http.StatusNotFound, http.MethodGet, "/elsewhere", "") // not /api/v2: not journaled
	after := time.Now()

	got := e.journal()
	if len(got) != 4 {
		t.Fatalf("journal has %d entries, want 4: %+v", len(got), got)
	}
	want := []struct {
		resp                response
		method, path, query string
		body                string
		status              int
	}{
		{created, "POST", "/api/v2/resource", "", `{"FirstName":"Ada","Surname":"Lovelace"}`, 201},
		{list, "GET", "/api/v2/resource", "requestParams.pageSize=5&requestParams.filters=FirstName~eq~%27Ada%27", `null`, 200},
		{bad, "PUT", "/api/v2/resource/not-a-guid", "", `"plain text, not JSON"`, 400},
		{mine, "GET", "/api/v2/resource", "", `null`, 200},
	}
	for i, w := range want {
		g := got[i]
		if g.Method != w.method || g.Path != w.path || g.Query != w.query || g.Status != w.status {
			t.Errorf("entry %d: %s %s ? %s -> %d, want %s %s ? %s -> %d", i, g.Method, g.Path, g.Query, g.Status, w.method, w.path, w.query, w.status)
		}
		body := string(g.Body)
		if body == "" {
			body = "null"
		}
		if body != w.body {
			t.Errorf("entry %d: Body %s, want %s", i, body, w.body)
		}
		if g.BodyTruncated {
			t.Errorf("entry %d: BodyTruncated", i)
		}
		if g.RequestID == "" || g.RequestID != w.resp.Header.Get("X-Request-Id") {
			t.Errorf("entry %d: RequestId %q, response header X-Request-Id %q", i, g.RequestID, w.resp.Header.Get("X-Request-Id"))
		}
		if g.DurationMs < 0 || g.DurationMs > float64(after.Sub(before).Milliseconds()+1) {
			t.Errorf("entry %d: DurationMs %v outside the test's %v", i, g.DurationMs, after.Sub(before))
		}
		if g.Time.Before(before.Add(-time.Second)) || g.Time.After(after.Add(time.Second)) || g.Time.Location() != time.UTC {
			t.Errorf("entry %d: Time %v not within [%v, %v] in UTC", i, g.Time, before, after)
		}
	}
	if got[3].RequestID != "client-chosen-42" {
		t.Errorf("a client's X-Request-Id is kept: got %q", got[3].RequestID)
	}
	// The wire format names it RequestId, like the other Id properties.
	raw := e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "")
	for _, key := range []string{`"Time":`, `"RequestId":`, `"Method":`, `"Path":`, `"Query":`, `"Body":`, `"BodyTruncated":`, `"Status":`, `"DurationMs":`} {
		if !bytes.Contains(raw.Body, []byte(key)) {
			t.Errorf("journal JSON lacks %s: %s", key, raw.Body)
		}
	}

	// Clearing reports how many went.
	r := e.expect(http.StatusOK, http.MethodDelete, "/__admin/requests", "")
	if string(r.Body) != `{"Cleared":4}` {
		t.Errorf("DELETE /__admin/requests: %s", r.Body)
	}
	if got := e.journal(); len(got) != 0 {
		t.Errorf("journal after DELETE: %+v", got)
	}
}

func TestJournalDropsOldest(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.JournalSize = 3
	e := startServer(t, cfg, nil)
	for i := 1; i <= 5; i++ {
		e.expect(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v2/resource?n=%d", i), "")
		got := e.journal()
		if len(got) != min(i, 3) {
			t.Fatalf("after %d requests the journal has %d entries, want %d", i, len(got), min(i, 3))
		}
		// Newest last.
		if got[len(got)-1].Query != fmt.Sprintf("n=%d", i) {
			t.Errorf("newest entry %q, want n=%d", got[len(got)-1].Query, i)
		}
	}
	var queries []string
	for _, g := range e.journal() {
		queries = append(queries, g.Query)
	}
	if !slices.Equal(queries, []string{"n=3", "n=4", "n=5"}) {
		t.Errorf("journal %v, want the last three, oldest first", queries)
	}
}

// TestJournalBoundedUnderLoad sends many large bodies straight to the
// handler: the journal keeps at most its size, each body at most 64 KiB.
func TestJournalBoundedUnderLoad(t *testing.T) {
	const size = 3
	cfg := DefaultConfig()
	cfg.JournalSize = size
	srv := newServer(cfg, newStore(nil), nil)
	n := 10_000
	if testing.Short() {
		n = 1_000
	}
	body := bytes.Repeat([]byte("x"), 60<<10)
	for i := range n {
		req := httptest.NewRequest(http.MethodPost, "/api/v2/resource", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("request %d: status %d, want 400", i, rec.Code)
		}
		srv.journals.mu.Lock()
		kept, ring := srv.defaultNS().journal.count, len(srv.defaultNS().journal.ring)
		srv.journals.mu.Unlock()
		if kept > size || ring > size {
			t.Fatalf("after %d requests the journal holds %d entries in a ring of %d, more than %d", i+1, kept, ring, size)
		}
	}
	entries := journalEntries(t, srv)
	if len(entries) != size {
		t.Fatalf("journal holds %d entries, want %d", len(entries), size)
	}
	for _, en := range entries {
		var s string
		if err := json.Unmarshal(en.Body, &s); err != nil || len(s) != len(body) || en.BodyTruncated {
			t.Errorf("60 KiB entry: %d bytes as a string (err %v), truncated %v", len(s), err, en.BodyTruncated)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	// 10,000 × 60 KiB is 600 MiB; what stays alive must not grow with the load.
	if ms.HeapAlloc > 256<<20 {
		t.Errorf("live heap %d MiB after the load: the journal is not bounded", ms.HeapAlloc>>20)
	}

	// Past 64 KiB the body is cut, kept as a string, and marked truncated.
	big := `{"FirstName":"` + strings.Repeat("y", 100<<10) + `"}`
	srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/v2/resource", strings.NewReader(big)))
	entries = journalEntries(t, srv)
	last := entries[len(entries)-1]
	var s string
	if err := json.Unmarshal(last.Body, &s); err != nil {
		t.Fatalf("truncated body is not a JSON string: %v", err)
	}
	if !last.BodyTruncated || len(s) != maxJournalBody || s != big[:maxJournalBody] {
		t.Errorf("BodyTruncated %v, %d bytes kept, want true and %d", last.BodyTruncated, len(s), maxJournalBody)
	}
	// A body over the cap that the handler left unread (a 404 here) is
	// not waited for: the client may hold it back until it has an answer.
	srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/v2/unknown", strings.NewReader(big)))
	entries = journalEntries(t, srv)
	if last := entries[len(entries)-1]; !last.BodyTruncated || string(last.Body) != "null" && last.Body != nil {
		t.Errorf("unread body over the cap: Body %.40s, BodyTruncated %v; want null and true", last.Body, last.BodyTruncated)
	}
}

func TestJournalUnreadBodyIsCaptured(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	e.addFault(`{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Times": 1}`)
	e.expect(http.StatusServiceUnavailable, http.MethodPost, "/api/v2/resource", `{"Company": "Faulted"}`)
	e.expect(http.StatusNotFound, http.MethodPost, "/api/v2/nowhere", `{"Company": "Lost"}`)
	got := e.journal()
	if len(got) != 2 || string(got[0].Body) != `{"Company":"Faulted"}` || string(got[1].Body) != `{"Company":"Lost"}` {
		t.Errorf("journal of unread bodies: %+v", got)
	}
	if got[0].Status != 503 || got[1].Status != 404 {
		t.Errorf("statuses %d %d, want 503 404", got[0].Status, got[1].Status)
	}
}

func TestJournalOff(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.JournalSize = journalOff
	e := startServer(t, cfg, nil)
	e.createPerson("Ada")
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	r := e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "")
	if string(r.Body) != `{"Requests":[],"Count":0,"Journal":"off"}` {
		t.Errorf("journal off: %s, want an empty list", r.Body)
	}
	r = e.expect(http.StatusOK, http.MethodDelete, "/__admin/requests", "")
	if string(r.Body) != `{"Cleared":0}` {
		t.Errorf("journal off, DELETE: %s", r.Body)
	}
	e.expect(http.StatusOK, http.MethodPost, "/__admin/reset", "")
}

// TestJournalDelivered: each fault kind through a real TCP connection, and
// what its entry says the server did (Status), what the client received
// (Delivered) and the answer itself (Response).
func TestJournalDelivered(t *testing.T) {
	const create = `{"FirstName": "Ada"}`
	tests := []struct {
		name      string
		fault     string
		status    int
		delivered int
		// response is the Response's Body, or "null" for no Response.
		response string
	}{
		{"response", `{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Body": "busy"}`, 503, 503, `"busy"`},
		{"reset", `{"Method": "POST", "Path": "/api/v2/resource", "Kind": "reset"}`, 0, 0, "null"},
		{"empty", `{"Method": "POST", "Path": "/api/v2/resource", "Kind": "empty"}`, 0, 0, "null"},
		{"garbage", `{"Method": "POST", "Path": "/api/v2/resource", "Kind": "garbage"}`, 0, 0, "null"},
		{"hang with DelayMs", `{"Method": "POST", "Path": "/api/v2/resource", "Kind": "hang", "DelayMs": 1}`, 0, 0, "null"},
		// The create is applied and journaled as served; the client gets
		// the fault's answer instead.
		{"After with a 503", `{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Body": "lost", "After": true}`, 201, 503, `"lost"`},
		// Nothing reaches the client: the answer shown is the one it lost.
		{"After with a reset", `{"Method": "POST", "Path": "/api/v2/resource", "Kind": "reset", "After": true}`, 201, 0, "created"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := startServer(t, DefaultConfig(), nil)
			id := e.on(t).addFault(tt.fault)[0].ID
			rawConnExchange(t, e.base, rawPost("/api/v2/resource", create)) //nolint:errcheck // each kind ends the connection its own way
			en := journalOf(e.on(t), 1)[0]
			if en.Status != tt.status || en.Delivered != tt.delivered || en.Fault == nil || *en.Fault != id {
				t.Errorf("Status %d, Delivered %d, Fault %v; want %d, %d, %d", en.Status, en.Delivered, en.Fault, tt.status, tt.delivered, id)
			}
			switch {
			case tt.response == "null":
				if en.Response != nil || en.ResponseTruncated {
					t.Errorf("Response %+v, truncated %v; want null", en.Response, en.ResponseTruncated)
				}
			case tt.response == "created":
				all := e.on(t).all()
				if len(all) != 1 || en.Response == nil || !strings.Contains(string(en.Response.Body), `"Id":"`+all[0].Id+`"`) {
					t.Errorf("Response %+v, want the lost answer naming %+v", en.Response, all)
				}
			default:
				want := map[string]any{"Content-Length": strconv.Itoa(len(tt.response) - 2),
					"Content-Type": "text/plain; charset=utf-8", "X-Request-Id": en.RequestID}
				if en.Response == nil || string(en.Response.Body) != tt.response || !reflect.DeepEqual(en.Response.Headers, want) {
					t.Errorf("Response %+v, want Headers %v and Body %s", en.Response, want, tt.response)
				}
			}
		})
	}
}

// TestJournalResponse: the answer as the journal keeps it, headers by
// their canonical names, the body as JSON, cut at 16 KiB.
func TestJournalResponse(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	bad := e.do(http.MethodPost, "/api/v2/resource", `{"Position": "x"}`, "X-Request-Id", "journal-400")
	if bad.Status != http.StatusBadRequest {
		t.Fatalf("create: %d %s", bad.Status, bad.Body)
	}
	// 60 resources with long names make a list page larger than the cut.
	items := make([]string, 60)
	for i := range items {
		items[i] = fmt.Sprintf(`{"Company": "%s %d", "Position": "%[1]s"}`, strings.Repeat("c", 90), i)
	}
	e.seed("[" + strings.Join(items, ",") + "]")
	long := e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource?requestParams.pageSize=60", "")
	if len(long.Body) <= maxJournalResponse {
		t.Fatalf("the page is %d bytes, not over the cut", len(long.Body))
	}

	a := e.readJournal("")
	if len(a.Requests) != 2 {
		t.Fatalf("journal %+v", a.Requests)
	}
	en := a.Requests[0]
	wantHeaders := map[string]any{"Content-Length": strconv.Itoa(len(bad.Body)), "Content-Type": jsonContentType, "X-Request-Id": "journal-400"}
	if en.Status != 400 || en.Delivered != 400 || en.Fault != nil || en.Response == nil ||
		!reflect.DeepEqual(en.Response.Headers, wantHeaders) || string(en.Response.Body) != string(bad.Body) || en.ResponseTruncated {
		t.Errorf("400's entry: Status %d Delivered %d Response %+v truncated %v; want Headers %v Body %s",
			en.Status, en.Delivered, en.Response, en.ResponseTruncated, wantHeaders, bad.Body)
	}
	en = a.Requests[1]
	var cut string
	if en.Response == nil || json.Unmarshal(en.Response.Body, &cut) != nil {
		t.Fatalf("long page's Response %+v, want the body as a string", en.Response)
	}
	if !en.ResponseTruncated || cut != string(long.Body[:maxJournalResponse]) {
		t.Errorf("long page: truncated %v, %d bytes kept; want true and the first %d", en.ResponseTruncated, len(cut), maxJournalResponse)
	}
}

// TestJournalIgnoresConsole: the console's requests (consoleHeader) are
// neither journaled nor answered by faults, so an open console changes
// nothing a test sees.
func TestJournalIgnoresConsole(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	id := e.addFault(`{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Times": 1}`)[0].ID
	console := []string{consoleHeader, "1"}
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", console...)
	e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", `{"Company": "Console"}`, console...)
	e.expect(http.StatusOK, http.MethodGet, "/__admin/requests?count=1&wait=1ms", "", console...)
	if f := e.faults(); len(f) != 1 || f[0].Fired != 0 {
		t.Errorf("faults %+v, want fault %d unfired", f, id)
	}
	if got := e.readJournal("").Requests; len(got) != 0 {
		t.Errorf("journal %+v, want it empty", got)
	}
	// The client meets the fault set up for it, and its retry is served.
	e.expect(http.StatusServiceUnavailable, http.MethodPost, "/api/v2/resource", `{"Company": "Client"}`)
	e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", `{"Company": "Client"}`)
	got := e.readJournal("").Requests
	if len(got) != 2 || got[0].Delivered != 503 || *got[0].Fault != id || got[1].Delivered != 201 || got[1].Fault != nil {
		t.Errorf("journal %+v, want the client's 503 and 201", got)
	}
}

// TestSecretsNeverRepeated: a secret in a path (a query escaped into it as
// %3F, a ;jsessionid= parameter, a namespace name) or in a credential-
// shaped header is masked by the journal's rule everywhere the request is
// repeated: the answer's message, the journal's Path and Response, and the
// log line of the built binary.
func TestSecretsNeverRepeated(t *testing.T) {
	p := limStart(t, builtBinary(t))
	const secret = "S3CRETV4LUE"
	tests := []struct {
		method, path string
		header       []string
		status       int
		message      string // what the answer's Message holds
	}{
		{http.MethodGet, "/api/v2/resource/abc%3Faccess_token=" + secret, nil, 405, "/api/v2/resource/abc?access_token=***"},
		{http.MethodPut, "/api/v2/resource/abc%3Faccess_token=" + secret, nil, 400, "abc?access_token=***"},
		{http.MethodPut, "/api/v2/resource/abc;jsessionid=" + secret, nil, 400, "abc;jsessionid=***"},
		{http.MethodGet, "/api/v2/resources%3Ftoken=" + secret + "&x=1", nil, 404, "/api/v2/resources?token=***&x=1"},
		{http.MethodGet, "/api/v2/resource;jsessionid=" + secret + "/x", nil, 404, "/api/v2/resource;jsessionid=***/x"},
		{http.MethodGet, "/ns/a%3Ftoken=" + secret + "/api/v2/resource", nil, 400, "a?token=***"},
		{http.MethodGet, "/api/v2/resource", []string{"X-Auth-Key", secret, "X-Functions-Key", secret, "Authentication", secret,
			"X-Auth", secret, "Cookie2", secret, "Idempotency-Key", "k-1"}, 200, ""},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, p.url+tt.path, strings.NewReader(`{"Company":"Acme"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(tt.header); i += 2 {
			req.Header.Set(tt.header[i], tt.header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tt.status || strings.Contains(string(body), secret) || !strings.Contains(string(body), tt.message) {
			t.Errorf("%s %s: %d %s, want %d with %s and no secret", tt.method, tt.path, resp.StatusCode, body, tt.status, tt.message)
		}
	}
	status, journal := p.send(t, http.MethodGet, "/__admin/requests", nil)
	var a journalAnswer
	if err := json.Unmarshal(journal, &a); status != http.StatusOK || err != nil {
		t.Fatalf("journal: %d %v %s", status, err, journal)
	}
	if strings.Contains(string(journal), secret) {
		t.Errorf("the journal repeats the secret: %s", journal)
	}
	wantPaths := []string{"/api/v2/resource/abc?access_token=***", "/api/v2/resource/abc?access_token=***",
		"/api/v2/resource/abc;jsessionid=***", "/api/v2/resources?token=***&x=1", "/api/v2/resource;jsessionid=***/x", "/api/v2/resource"}
	var paths []string
	for _, en := range a.Requests {
		paths = append(paths, en.Path)
	}
	if !slices.Equal(paths, wantPaths) {
		t.Errorf("journal Paths %q, want %q", paths, wantPaths)
	}
	if n := len(a.Requests); n == len(wantPaths) {
		h := a.Requests[n-1].Headers
		for _, name := range []string{"X-Auth-Key", "X-Functions-Key", "Authentication", "X-Auth", "Cookie2"} {
			if h[name] != "***" {
				t.Errorf("journal header %s: %v, want ***", name, h[name])
			}
		}
		if h["Idempotency-Key"] != "k-1" {
			t.Errorf("journal header Idempotency-Key: %v, want k-1 (no secret)", h["Idempotency-Key"])
		}
	}
	p.stop(syscall.SIGTERM)
	log := p.stdout.String() + p.stderr.String()
	if strings.Contains(log, secret) {
		t.Errorf("the log repeats the secret:\n%s", log)
	}
	if !strings.Contains(log, `path="/api/v2/resource/abc?access_token=***"`) {
		t.Errorf("the log lacks the masked path:\n%s", log)
	}
}

// TestJournalRefusedKeepsRequestLine: under -auth, a request refused for
// its credentials keeps its request line and status alone (a stranger may
// send thousands, each with 64 KiB of body and headers), and says what was
// cut; an accepted one keeps its headers, cut at 8 KiB with
// HeadersTruncated.
func TestJournalRefusedKeepsRequestLine(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Auth = "svc:s3cret"
	e := startServer(t, cfg, nil)
	good := "Basic " + base64.StdEncoding.EncodeToString([]byte("svc:s3cret"))
	pad := strings.Repeat("p", 4<<10)
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", "Authorization", good) // the namespace exists
	e.expect(http.StatusUnauthorized, http.MethodPost, "/api/v2/resource?x=1", `{"Company":"Refused"}`, "X-Pad", pad)
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource?x=2", "", "Authorization", good, "X-Pad-1", pad, "X-Pad-2", pad, "X-Pad-3", pad)
	var a journalAnswer
	e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "", "Authorization", good).decode(t, &a)
	if len(a.Requests) != 3 {
		t.Fatalf("%d entries, want 3", len(a.Requests))
	}
	plain, refused, cut := a.Requests[0], a.Requests[1], a.Requests[2]
	if refused.Method != http.MethodPost || refused.Path != "/api/v2/resource" || refused.Query != "x=1" || refused.Status != 401 ||
		refused.Delivered != 401 || len(refused.Headers) != 0 || !refused.HeadersTruncated || string(refused.Body) != "null" ||
		!refused.BodyTruncated || refused.Response != nil || !refused.ResponseTruncated {
		t.Errorf("the refused request's entry: %+v; want its request line and status, nothing else, and what was cut", refused)
	}
	if !cut.HeadersTruncated || cut.Headers["Authorization"] != "Basic svc:***" || cut.Status != 200 {
		t.Errorf("entry with 12 KiB of headers: HeadersTruncated %v, Authorization %v, Status %d", cut.HeadersTruncated, cut.Headers["Authorization"], cut.Status)
	}
	kept := 0
	for name, v := range cut.Headers {
		if s, ok := v.(string); ok {
			kept += len(name) + len(s)
		}
	}
	if kept > maxJournalHeaders || cut.Headers["X-Pad-1"] != pad || cut.Headers["X-Pad-3"] != nil {
		t.Errorf("kept %d bytes of headers (X-Pad-1 %t, X-Pad-3 %t), want at most %d: whole headers, in order, while they fit",
			kept, cut.Headers["X-Pad-1"] != nil, cut.Headers["X-Pad-3"] != nil, maxJournalHeaders)
	}
	if plain.HeadersTruncated || plain.Headers["Authorization"] != "Basic svc:***" {
		t.Errorf("an entry with a few headers says HeadersTruncated")
	}
}

// TestJournalBudgetAcrossNamespaces: the journals of every namespace share
// -journal-budget; past it the oldest entries go first, whichever
// namespace holds them, and a clear gives the room back at once.
func TestJournalBudgetAcrossNamespaces(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.JournalBudget = 1 << 20
	e := startServer(t, cfg, nil)
	body := `{"Company":"` + strings.Repeat("x", 60<<10) + `"}`
	for _, ns := range []string{"a", "b"} {
		for range 10 {
			e.in(ns).expect(http.StatusBadRequest, http.MethodPost, "/api/v2/resource", body)
		}
	}
	used := func() int64 {
		e.srv.journals.mu.Lock()
		defer e.srv.journals.mu.Unlock()
		return e.srv.journals.used
	}
	if u := used(); u > cfg.JournalBudget || u < cfg.JournalBudget*3/4 {
		t.Errorf("the journals hold %d bytes, want at most the budget of %d and near it", u, cfg.JournalBudget)
	}
	a, b := len(e.in("a").journal()), len(e.in("b").journal())
	// Each entry holds its 60 KiB body and a small answer: the budget has
	// room for 16 of the 20, and b's are the newest.
	if b != 10 || a >= 10 || a+b < 14 {
		t.Errorf("a keeps %d entries and b %d; want b's 10 and what room is left for a's newest", a, b)
	}
	if first := e.in("a").journal()[0].Seq; first != uint64(10-a+1) {
		t.Errorf("a's oldest kept entry is Seq %d, want %d: the oldest go first", first, 10-a+1)
	}
	e.in("b").expect(http.StatusOK, http.MethodDelete, "/__admin/requests", "")
	if u := used(); u > cfg.JournalBudget/2 {
		t.Errorf("after b's clear the journals hold %d bytes, want a's alone", u)
	}
	e.in("a").expect(http.StatusOK, http.MethodDelete, "/__admin/requests", "")
	if u := used(); u != 0 {
		t.Errorf("after both clears the journals hold %d bytes, want 0", u)
	}
	// A namespace removed, by hand or for idleness, gives its entries'
	// room back at once rather than when they come to be the oldest.
	for _, ns := range []string{"c", "d"} {
		e.in(ns).expect(http.StatusBadRequest, http.MethodPost, "/api/v2/resource", body)
	}
	e.expect(http.StatusOK, http.MethodDelete, "/__admin/namespaces/c", "")
	e.srv.removeIdleNamespaces(time.Now().Add(time.Hour))
	if u := used(); u != 0 {
		t.Errorf("after removing the namespaces the journals hold %d bytes, want 0", u)
	}
}

// TestJournalBudgetMemory: twelve namespaces fill journals of 200 entries,
// each request with a 64 KiB body and 16 KiB of headers (some 190 MB kept
// without a budget; 12 namespaces of 1,000 such entries took 2.4 GB), on the
// built binary with -journal-budget 32 MiB: its peak resident memory stays
// within an idle server's and a few times the budget.
func TestJournalBudgetMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 190 MB and measures the binary's memory")
	}
	if runtime.GOOS != "linux" {
		t.Skip("VmHWM is read from Linux's /proc")
	}
	const budget, namespaces, size = 32 * limMiB, 12, 200
	p := limStart(t, limBinary(t), "-journal-budget", strconv.Itoa(budget), "-journal-size", strconv.Itoa(size))
	body := []byte(`{"Company":"` + strings.Repeat("x", maxJournalBody-14) + `"}`)
	pad := strings.Repeat("p", 16<<10)
	client := &http.Client{Timeout: time.Minute}
	jobs := make(chan string)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for path := range jobs {
				req, err := http.NewRequest(http.MethodPut, p.url+path, bytes.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Pad", pad)
				resp, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body) //nolint:errcheck // the status is what counts
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest {
					errs <- fmt.Errorf("PUT %s: %d, want 400", path, resp.StatusCode)
					return
				}
			}
		})
	}
	for i := range namespaces * size {
		jobs <- fmt.Sprintf("/ns/budget-%d/api/v2/resource/%s", i%namespaces, "0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c")
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	peak := p.peak(t)
	kept := 0
	for i := range namespaces {
		status, answer := p.send(t, http.MethodGet, fmt.Sprintf("/ns/budget-%d/__admin/requests", i), nil)
		var a journalAnswer
		if err := json.Unmarshal(answer, &a); status != http.StatusOK || err != nil {
			t.Fatalf("journal of budget-%d: %d %v", i, status, err)
		}
		kept += len(a.Requests)
	}
	t.Logf("%d requests of 80 KiB into %d namespaces: %d entries kept; peak resident memory %d MiB", namespaces*size, namespaces, kept, peak>>20)
	// Each entry keeps its 64 KiB body and 8 KiB of headers: the budget has
	// room for some 490, and the newest fill it.
	if kept < 400 || kept > 600 {
		t.Errorf("%d entries kept, want what 32 MiB holds of 72 KiB entries (about 490)", kept)
	}
	if limit := int64(limBaseline + 3*budget); peak > limit {
		t.Errorf("peak resident memory %d MiB, over %d MiB: the journals are not bounded by -journal-budget", peak>>20, limit>>20)
	}
}

// TestJournalMadeAnswers: the journal makes a create's and a list's answer
// again when it is read (madeAnswer) rather than keep a copy; what it shows
// is what was sent, also once the resource was changed since.
func TestJournalMadeAnswers(t *testing.T) {
	t.Parallel()
	c := startServer(t, DefaultConfig(), nil)
	created := c.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", `{"FirstName":"Ada","Surname":"Lovelace","Company":"Analytical Engines","Types":[{"Type":"Employee"}]}`)
	var out struct{ Data []struct{ Id string } }
	if err := json.Unmarshal(created.Body, &out); err != nil || len(out.Data) != 1 {
		t.Fatalf("create: %v %s", err, created.Body)
	}
	listed := c.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	c.expect(http.StatusOK, http.MethodPut, "/api/v2/resource/"+out.Data[0].Id, putBody(out.Data[0].Id, "FirstName", "Augusta"))
	entries := c.journal()
	if len(entries) != 3 {
		t.Fatalf("journal of %d entries, want 3", len(entries))
	}
	for i, want := range [][]byte{created.Body, listed.Body} {
		en := entries[i]
		if en.Response == nil || string(en.Response.Body) != string(want) || en.ResponseTruncated {
			t.Errorf("entry %d: Response %+v truncated %v, want Body %s", i, en.Response, en.ResponseTruncated, want)
		}
	}
}

// BenchmarkJournalRead reads a journal of 1,000 creates as GET
// /__admin/requests writes it: what a reader pays, the answers made again
// included.
//
//	go test -run '^$' -bench '^BenchmarkJournalRead$' -benchmem .
func BenchmarkJournalRead(b *testing.B) {
	srv := newServer(DefaultConfig(), newStore(nil), slog.New(slog.NewTextHandler(io.Discard, nil)))
	w := &discardResponse{header: http.Header{}}
	for i := range 1000 {
		r := httptest.NewRequest(http.MethodPost, "/api/v2/resource", bytes.NewReader(benchJSON(i)))
		r.Header.Set("Content-Type", "application/json")
		clear(w.header)
		srv.ServeHTTP(w, r)
	}
	entries := srv.defaultNS().journal.matching(journalQuery{})
	if len(entries) != 1000 {
		b.Fatalf("%d entries", len(entries))
	}
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		for _, e := range entries {
			buf = appendJournalEntry(buf[:0], e)
		}
	}
}

// A list's answer, which the journal makes when it is read from the
// resources it keeps, is counted in the budget at its whole size: the entry
// keeps those resources alive after the store lets them go.
func TestJournalBudgetCountsMadeAnswers(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	items := make([]string, 500)
	for i := range items {
		items[i] = fmt.Sprintf(`{"Company": "Company %03d", "AddressComment": "%s"}`, i, strings.Repeat("x", 200))
	}
	e.seed("[" + strings.Join(items, ",") + "]")
	answer := e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource?requestParams.pageSize=500", "")
	e.srv.journals.mu.Lock()
	used := e.srv.journals.used
	e.srv.journals.mu.Unlock()
	if len(answer.Body) <= maxJournalResponse || used < int64(len(answer.Body)) {
		t.Errorf("a %d-byte list answer is counted as %d bytes of journal", len(answer.Body), used)
	}
}

// TestJournalBudgetBoundsRSS: under the load that once grew the binary by
// 882 MB with the default -journal-budget of 256 MiB (12 namespaces, 400
// requests each of some 122 KiB, with 60 KiB of headers), the resident
// memory stays within 1.5 times the default budget plus 64 MB. An entry
// kept the whole exchange alive through its answer's headers (the request
// and every header it sent, counted as 8 KiB), and its body's slack.
func TestJournalBudgetBoundsRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 880 MB and measures the binary's memory")
	}
	if runtime.GOOS != "linux" {
		t.Skip("VmHWM is read from Linux's /proc")
	}
	const namespaces, perNamespace = 12, 400
	budget := DefaultConfig().JournalBudget
	p := limStart(t, limBinary(t))
	body := []byte(`{"Company":"` + strings.Repeat("x", 122<<10) + `"}`)
	pad := strings.Repeat("p", 1000)
	client := &http.Client{Timeout: time.Minute}
	jobs := make(chan string)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for path := range jobs {
				req, err := http.NewRequest(http.MethodPut, p.url+path, bytes.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				req.Header.Set("Content-Type", "application/json")
				for i := range 60 {
					req.Header.Set(fmt.Sprintf("X-Pad-%d", i), pad)
				}
				resp, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body) //nolint:errcheck // the status is what counts
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest {
					errs <- fmt.Errorf("PUT %s: %d, want 400", path, resp.StatusCode)
					return
				}
			}
		})
	}
	for i := range namespaces * perNamespace {
		jobs <- fmt.Sprintf("/ns/rss-%d/api/v2/resource/%s", i%namespaces, "0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c")
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	peak := p.peak(t)
	limit := budget*3/2 + 64<<20
	t.Logf("%d requests of 122 KiB with 60 KiB of headers: peak resident memory %d MiB (bound %d MiB, budget %d MiB)",
		namespaces*perNamespace, peak>>20, limit>>20, budget>>20)
	if peak > limit {
		t.Errorf("peak resident memory %d MiB, over 1.5 times the -journal-budget of %d MiB plus 64 MB", peak>>20, budget>>20)
	}
}
