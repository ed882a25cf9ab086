package resourcedir

// The helpers every area's tests use: a test server and its client, the
// error shape, polling. Servers as a user runs them are in servers_test.go,
// the benchmarks' data in benchdata_test.go; a helper of one area lives in
// that area's test file.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// wireEntry is a journal entry as GET /__admin/requests shows it.
type wireEntry struct {
	Seq              uint64
	Time             time.Time
	RequestID        string `json:"RequestId"`
	Method           string
	Path             string
	Query            string
	Params           map[string]any
	Headers          map[string]any
	HeadersTruncated bool
	Body             json.RawMessage
	BodyTruncated    bool
	Status           int
	DurationMs       float64
	Fault            *int
	Delivered        int
	Response         *struct {
		Headers map[string]any
		Body    json.RawMessage
	}
	ResponseTruncated bool
	Ignored           map[string]string
}

// journalEntries reads srv's journal as a client would see it, oldest first.
func journalEntries(t testing.TB, srv *Server) []wireEntry {
	t.Helper()
	if srv.defaultNS().journal == nil {
		return nil
	}
	entries := srv.defaultNS().journal.matching(journalQuery{})
	out := make([]wireEntry, len(entries))
	for i, e := range entries {
		if err := json.Unmarshal(appendJournalEntry(nil, e), &out[i]); err != nil {
			t.Fatalf("journal entry %d: %v", i, err)
		}
	}
	return out
}

// jsonContentType is what every API and admin JSON response declares.
const jsonContentType = "application/json; charset=utf-8"

// testClient talks to a Server over a real HTTP connection, as clients of
// the real service would. Its methods fail t on transport errors.
type testClient struct {
	t      testing.TB
	srv    *Server          // nil for a server started by run
	store  *store           // nil for a server started by run
	ts     *httptest.Server // nil for a server started by run
	base   string
	client *http.Client
	// strict checks on every response what the API promises for all of
	// them: the JSON content type, an X-Request-Id and a JSON body in UTF-8.
	strict bool
}

// startServer serves NewServer(cfg) from a fresh store behind httptest.
// Redirects are not followed: the emulator must not send any.
func startServer(t testing.TB, cfg Config, idSeed *uint64) *testClient {
	t.Helper()
	store := newStore(idSeed)
	srv := newServer(cfg, store, nil)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	client := ts.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &testClient{t: t, srv: srv, store: store, ts: ts, base: ts.URL, client: client}
}

// clientAt talks to a server already listening at base.
func clientAt(t testing.TB, base string) *testClient {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &testClient{t: t, base: base, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// on is c reporting to t, for subtests that share a server.
func (c *testClient) on(t testing.TB) *testClient {
	cc := *c
	cc.t = t
	return &cc
}

// checkingEvery is c with the checks of strict on every response.
func (c *testClient) checkingEvery() *testClient {
	cc := *c
	cc.strict = true
	return &cc
}

// in is c as a client handed the base URL of namespace name sees it.
func (c *testClient) in(name string) *testClient {
	cc := *c
	cc.base = c.base + "/ns/" + name
	return &cc
}

// response is an answer with its body read.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends a request with Content-Type application/json; hdr holds header
// name, value pairs. An empty body sends none.
func (c *testClient) do(method, path, body string, hdr ...string) response {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	return c.stream(method, path, rd, hdr...)
}

// stream is do with a body read from rd; a reader that hides its length
// (see chunked) is sent chunked.
func (c *testClient) stream(method, path string, rd io.Reader, hdr ...string) response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatalf("%s %.200s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %.200s: read body: %v", method, path, err)
	}
	r := response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	if c.strict {
		if ct := resp.Header.Get("Content-Type"); ct != jsonContentType {
			c.t.Errorf("%s %s: Content-Type %q, want %q", method, path, ct, jsonContentType)
		}
		if resp.Header.Get("X-Request-Id") == "" {
			c.t.Errorf("%s %s: no X-Request-Id header", method, path)
		}
		if method != http.MethodHead && (!json.Valid(b) || !utf8.Valid(b)) {
			c.t.Errorf("%s %s: the body is not JSON in UTF-8: %q", method, path, b)
		}
	}
	return r
}

// expect sends a request and fails the test unless it answers status.
func (c *testClient) expect(status int, method, path, body string, hdr ...string) response {
	c.t.Helper()
	r := c.do(method, path, body, hdr...)
	if r.Status != status {
		c.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, status, r.Body)
	}
	return r
}

// getJSON GETs path, expects 200 and decodes the body into v.
func (c *testClient) getJSON(path string, v any) {
	c.t.Helper()
	c.expect(http.StatusOK, http.MethodGet, path, "").decode(c.t, v)
}

func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// healthy checks that GET /__admin/health answers 200 "ok", and returns
// the number of resources it counts.
func (c *testClient) health() int {
	c.t.Helper()
	var h struct {
		Status    string
		Resources int
	}
	c.getJSON("/__admin/health", &h)
	if h.Status != "ok" {
		c.t.Fatalf("health Status %q, want ok", h.Status)
	}
	return h.Resources
}

func (c *testClient) journal() []wireEntry {
	c.t.Helper()
	var j struct{ Requests []wireEntry }
	c.getJSON("/__admin/requests", &j)
	if j.Requests == nil {
		c.t.Fatal("journal Requests is null, want an array")
	}
	return j.Requests
}

func (c *testClient) faults() []fault {
	c.t.Helper()
	var f struct{ Faults []fault }
	c.getJSON("/__admin/faults", &f)
	return f.Faults
}

func (c *testClient) addFault(spec string) []fault {
	c.t.Helper()
	var f struct{ Faults []fault }
	c.expect(http.StatusOK, http.MethodPost, "/__admin/faults", spec).decode(c.t, &f)
	return f.Faults
}

// seededResource is a resource as GET /__admin/resources shows it.
type seededResource struct {
	Id, DisplayName, Status string
	FirstName, Surname      *string
	Company, ExternalID     *string
	StatusId                int
	Types                   []struct {
		Id   int
		Type string
	}
	Address json.RawMessage
}

// seed posts items to /__admin/resources and returns them as stored.
func (c *testClient) seed(items string) []seededResource {
	c.t.Helper()
	var seeded struct {
		Total int
		Ids   []string
	}
	c.expect(http.StatusOK, http.MethodPost, "/__admin/resources", items).decode(c.t, &seeded)
	if seeded.Total != len(seeded.Ids) {
		c.t.Fatalf("seed Total %d, but %d Ids", seeded.Total, len(seeded.Ids))
	}
	byID := map[string]seededResource{}
	for _, r := range c.all() {
		byID[r.Id] = r
	}
	out := make([]seededResource, len(seeded.Ids))
	for i, id := range seeded.Ids {
		if out[i] = byID[id]; out[i].Id != id {
			c.t.Fatalf("seeded Id %s is not in GET /__admin/resources", id)
		}
	}
	return out
}

// all reads every resource through GET /__admin/resources.
func (c *testClient) all() []seededResource {
	c.t.Helper()
	var out struct {
		Data  []seededResource
		Total int
	}
	c.expect(http.StatusOK, http.MethodGet, "/__admin/resources", "").decode(c.t, &out)
	if out.Total != len(out.Data) {
		c.t.Fatalf("Total %d, but %d in Data", out.Total, len(out.Data))
	}
	return out.Data
}

// createPerson creates the person first Test and returns it.
func (c *testClient) createPerson(first string) seededResource {
	c.t.Helper()
	var out struct{ Data []seededResource }
	c.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", fmt.Sprintf(`{"FirstName":%q,"Surname":"Test"}`, first)).decode(c.t, &out)
	return out.Data[0]
}

var guidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// create posts body, requires a 201, and returns the new Id and the response
// with that Id replaced by "ID".
func (c *testClient) create(body string) (string, []byte) {
	c.t.Helper()
	r := c.do(http.MethodPost, "/api/v2/resource", body)
	if r.Status != http.StatusCreated {
		c.t.Fatalf("create %s: status %d: %s", body, r.Status, r.Body)
	}
	var env struct {
		Data  []struct{ Id string }
		Total int
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || len(env.Data) != 1 || env.Total != 1 {
		c.t.Fatalf("create %s: %s (%v)", body, r.Body, err)
	}
	id := env.Data[0].Id
	if !guidV4.MatchString(id) {
		c.t.Errorf("generated Id %q is not a lower-case hyphenated version-4 GUID", id)
	}
	return id, bytes.Replace(r.Body, []byte(`{"Id":"`+id+`"`), []byte(`{"Id":"ID"`), 1)
}

// errorBody is the error shape of the contract.
type errorBody struct {
	Message    string
	ModelState map[string][]string
}

// anyModelState, given to wantError, accepts any ModelState or none.
var anyModelState = map[string]string{"*": ""}

// wantError checks an error response: its exact status (0 accepts any 4xx
// or 5xx), that its Message contains msg, and that ModelState has exactly
// the keys of ms, each with a message that contains the given fragment. A
// nil ms means there must be no ModelState at all. It returns the error.
func (r response) wantError(t testing.TB, status int, msg string, ms map[string]string) errorBody {
	t.Helper()
	if status != 0 && r.Status != status || r.Status < 400 {
		t.Errorf("status %d, want %d; body %.300s", r.Status, status, r.Body)
	}
	e := checkErrorShape(t, "", r.Header, r.Body)
	if !strings.Contains(e.Message, msg) {
		t.Errorf("Message %q does not contain %q", e.Message, msg)
	}
	if ms == nil && e.ModelState != nil {
		t.Errorf("unexpected ModelState: %.300s", r.Body)
	}
	if _, any := ms["*"]; ms == nil || any {
		return e
	}
	for key, frag := range ms {
		msgs, ok := e.ModelState[key]
		if !ok {
			t.Errorf("ModelState lacks %q: %.300s", key, r.Body)
			continue
		}
		if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, frag) }) {
			t.Errorf("ModelState[%q] = %q, none contains %q", key, msgs, frag)
		}
	}
	for key := range e.ModelState {
		if _, ok := ms[key]; !ok {
			t.Errorf("unexpected ModelState key %q: %.300s", key, r.Body)
		}
	}
	return e
}

// checkErrorShape checks what every error response carries, whatever its
// status: the JSON content type, an X-Request-Id, a body in UTF-8 of
// exactly Message and then, if any, a non-empty ModelState whose keys each
// hold non-empty messages. It returns the decoded error.
func checkErrorShape(t testing.TB, what string, h http.Header, body []byte) errorBody {
	t.Helper()
	if what != "" {
		what += ": "
	}
	if ct := h.Get("Content-Type"); ct != jsonContentType {
		t.Errorf("%sContent-Type %q, want %q", what, ct, jsonContentType)
	}
	if h.Get("X-Request-Id") == "" {
		t.Errorf("%sno X-Request-Id header", what)
	}
	if !utf8.Valid(body) {
		t.Errorf("%serror body is not valid UTF-8: %.300q", what, body)
	}
	keys, err := topKeys(body)
	if err != nil {
		t.Errorf("%serror body is not a JSON object: %v: %.300q", what, err, body)
		return errorBody{}
	}
	if !slices.Equal(keys, []string{"Message"}) && !slices.Equal(keys, []string{"Message", "ModelState"}) {
		t.Errorf("%serror body has properties %v, want Message and perhaps ModelState: %.300s", what, keys, body)
	}
	var e errorBody
	if err := json.Unmarshal(body, &e); err != nil {
		t.Errorf("%serror body does not have the error shape: %v: %.300s", what, err, body)
	}
	if strings.TrimSpace(e.Message) == "" {
		t.Errorf("%serror body has no Message: %.300s", what, body)
	}
	if slices.Contains(keys, "ModelState") && len(e.ModelState) == 0 {
		t.Errorf("%sModelState is present but empty: %.300s", what, body)
	}
	for k, msgs := range e.ModelState {
		if len(msgs) == 0 {
			t.Errorf("%sModelState[%q] has no message", what, k)
		}
		for _, m := range msgs {
			if m == "" {
				t.Errorf("%sModelState[%q] has an empty message", what, k)
			}
		}
	}
	return e
}

// eventually polls cond until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("still waiting after %v for %s", timeout, what)
		case <-tick.C:
		}
	}
}

// syncBuffer is a bytes.Buffer that a logger or a child process may write
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// discardLogger drops every record.
var discardLogger = slog.New(slog.DiscardHandler)

// urlQueryEscape escapes a query value as curl --data-urlencode does.
func urlQueryEscape(s string) string {
	return strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", " ", "%20", "#", "%23", "'", "%27", "~", "%7E").Replace(s)
}

// writeTestFile writes content to a file named name in a folder of the test's.
func writeTestFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// touch makes a client's request to the namespace (a list of one page),
// which creates it when it does not exist and counts as activity, as a
// health probe does not.
func (c *testClient) touch() {
	c.t.Helper()
	c.expect(http.StatusOK, http.MethodGet, "/api/v2/resource?pageSize=1", "")
}

// success is the status of a request that succeeds: 201 for a create (the
// real service's; -create-status 200 aside), 200 for everything else.
func success(method, path string) int {
	path, _, _ = strings.Cut(path, "?")
	if rest, ok := strings.CutPrefix(path, "/ns/"); ok { // a namespace's path is the same after its name
		_, rest, _ = strings.Cut(rest, "/")
		path = "/" + rest
	}
	if method == http.MethodPost && canonicalAPIPath(path) == "/api/v2/resource" {
		return http.StatusCreated
	}
	return http.StatusOK
}
