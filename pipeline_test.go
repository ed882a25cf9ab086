package resourcedir

// Tests of pipeline.go: the steps every request goes through (request id,
// panic recovery, path cleaning, routing and its errors).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestPanicRecovery: a handler that panics becomes a JSON 500 that
// names the request id and nothing internal; the panic is logged with its
// stack, and the server goes on serving.
func TestPanicRecovery(t *testing.T) {
	t.Parallel()
	const secret = "secret-detail /home/build/handlers.go:42"
	var logs syncBuffer
	srv := newServer(DefaultConfig(), newStore(nil), slog.New(slog.NewTextHandler(&logs, nil)))
	srv.mux.HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) { panic(secret) })
	srv.mux.HandleFunc("GET /boom-error", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Half-Done", "1")
		panic(errors.New(secret))
	})
	srv.mux.HandleFunc("GET /boom-nil-map", func(w http.ResponseWriter, r *http.Request) {
		var m map[string]int
		m["x"]++ // a runtime error, not a value the handler chose
	})
	srv.mux.HandleFunc("GET /abort", func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) })

	check := func(what string, rec *httptest.ResponseRecorder, wantID string) {
		t.Helper()
		if rec.Code != http.StatusInternalServerError {
			t.Fatalf("%s: status %d, want 500: %s", what, rec.Code, rec.Body)
		}
		e := checkErrorShape(t, what, rec.Header(), rec.Body.Bytes())
		id := rec.Header().Get("X-Request-Id")
		if wantID != "" && id != wantID {
			t.Errorf("%s: X-Request-Id %q, want the client's %q", what, id, wantID)
		}
		if !strings.Contains(e.Message, id) {
			t.Errorf("%s: Message %q does not give the request id %q", what, e.Message, id)
		}
		if e.ModelState != nil {
			t.Errorf("%s: a 500 has ModelState %v", what, e.ModelState)
		}
		for _, leak := range []string{"secret", "handlers.go", "goroutine", "panic", "runtime", "nil map", ".go:"} {
			if strings.Contains(rec.Body.String(), leak) {
				t.Errorf("%s: the 500 body gives away %q: %s", what, leak, rec.Body)
			}
		}
	}

	for _, path := range []string{"/boom", "/boom-error", "/boom-nil-map"} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		check(path, rec, "")
		if !strings.Contains(logs.String(), "request_id="+rec.Header().Get("X-Request-Id")) {
			t.Errorf("%s: the log does not name the request id: %s", path, logs.String())
		}

		rec = httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("X-Request-Id", "client-chosen-42")
		srv.ServeHTTP(rec, req)
		check(path+" with the client's X-Request-Id", rec, "client-chosen-42")

		rec = httptest.NewRecorder()
		req = httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("X-Request-Id", strings.Repeat("x", 129)) // too long to echo
		srv.ServeHTTP(rec, req)
		check(path+" with an overlong X-Request-Id", rec, "")
		if rec.Header().Get("X-Request-Id") == strings.Repeat("x", 129) {
			t.Errorf("%s: an overlong X-Request-Id was echoed", path)
		}

		rec = httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/__admin/health", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("health after %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	if got := logs.String(); !strings.Contains(got, "panic serving request") || !strings.Contains(got, "goroutine") {
		t.Errorf("the panic and its stack are not in the log: %.500s", got)
	}

	// Through a real connection: the client gets the 500 and the same
	// keep-alive connection serves the next request; an aborted handler
	// drops only its own connection.
	addr := serveProduction(t, srv, nil)
	client := &http.Client{Timeout: 10 * time.Second}
	api := &testClient{t: t, base: "http://" + addr, client: client}
	r := api.do(http.MethodGet, "/boom", "")
	status, h, body := r.Status, r.Header, r.Body
	if status != http.StatusInternalServerError {
		t.Fatalf("GET /boom over TCP: %d %s", status, body)
	}
	checkErrorShape(t, "GET /boom over TCP", h, body)
	api.health()
	if _, err := client.Get(api.base + "/abort"); err == nil {
		t.Error("GET /abort: http.ErrAbortHandler should abort the response, not answer it")
	}
	api.health()
}

// A handler that panics after it started writing cannot turn the answer into
// a 500; the connection must be cut so that the client sees a failure.
func TestPanicAfterWriteAborts(t *testing.T) {
	t.Parallel()
	srv := newServer(DefaultConfig(), newStore(nil), nil)
	srv.mux.HandleFunc("GET /half", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"Total":`))
		w.(http.Flusher).Flush()
		panic("half done")
	})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	resp, err := ts.Client().Get(ts.URL + "/half")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatal("a response cut by a panic was read without error")
	}
	clientAt(t, ts.URL).health()
}

// An unclean path must not get ServeMux's HTML redirect: every response is JSON.
func TestUncleanPath(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(newServer(DefaultConfig(), newStore(nil), nil))
	defer ts.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/api/v2//resource", "/api/v2/./resource", "/api/v2/x/../resource", "/__admin//health"} {
		// Sent raw, as a client that does not clean paths would.
		req, err := http.NewRequest(http.MethodGet, ts.URL+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.URL.Path, req.URL.RawPath = p, p
		req.URL.Opaque = "//" + req.URL.Host + p
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404: %s", p, resp.StatusCode, body)
		}
		checkErrorShape(t, "GET "+p, resp.Header, body)
	}
}

func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	id, _ := a.on(t).create(`{"Company":"C"}`)
	for _, c := range []struct {
		method, path string
		status       int
		allow, msg   string
	}{
		{"POST", "/", 405, "GET, HEAD", "The method POST is not allowed on /; allowed: GET, HEAD."}, // GET / is the console
		{"GET", "/nothing", 404, "", "No resource matches the path /nothing."},
		{"GET", "/api/v2/nothing", 404, "", "No resource matches the path /api/v2/nothing."},
		{"POST", "/api/v1/resource", 404, "", "No resource matches the path /api/v1/resource."},
		{"GET", "/api/v2/resource/" + id + "/types", 404, "", "No resource matches the path"},
		{"PUT", "/api/v2/resource/", 405, "GET, HEAD, POST", "The method PUT is not allowed on /api/v2/resource; allowed: GET, HEAD, POST."},
		{"PUT", "/api/v2/resource", 405, "GET, HEAD, POST", "The method PUT is not allowed on /api/v2/resource; allowed: GET, HEAD, POST."},
		{"DELETE", "/api/v2/resource", 405, "GET, HEAD, POST", "The method DELETE is not allowed"},
		{"PATCH", "/api/v2/resource", 405, "GET, HEAD, POST", "The method PATCH is not allowed"},
		{"GET", "/api/v2/resource/" + id, 405, "PUT", "The method GET is not allowed on /api/v2/resource/" + id + "; allowed: PUT."},
		{"POST", "/api/v2/resource/" + id, 405, "PUT", "The method POST is not allowed"},
		{"DELETE", "/api/v2/resource/" + id, 405, "PUT", "The method DELETE is not allowed"},
		{"PATCH", "/api/v2/resource/not-a-guid", 405, "PUT", "The method PATCH is not allowed"},
	} {
		r := a.on(t).do(c.method, c.path, "")
		r.wantError(t, c.status, c.msg, nil)
		if got := r.Header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
	// HEAD has the headers of GET.
	if r := a.on(t).do(http.MethodHead, "/api/v2/resource", ""); r.Status != http.StatusOK {
		t.Errorf("HEAD: %d", r.Status)
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	seen := map[string]bool{}
	for _, path := range []string{"/api/v2/resource", "/api/v2/resource", "/nope", "/api/v2/resource?requestParams.page=0"} {
		r := a.on(t).do(http.MethodGet, path, "")
		id := r.Header.Get("X-Request-Id")
		if seen[id] {
			t.Errorf("X-Request-Id %q given twice", id)
		}
		seen[id] = true
	}
	r := a.on(t).stream(http.MethodPost, "/api/v2/resource", strings.NewReader(`[]`), "X-Request-Id", "client-42")
	if got := r.Header.Get("X-Request-Id"); got != "client-42" {
		t.Errorf("the client's X-Request-Id came back as %q", got)
	}
}

// TestUnexpectedError: an error that is not an API error is a 500 whose
// Message gives the request id and nothing of the error itself.
func TestUnexpectedError(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	srv := newServer(DefaultConfig(), newStore(nil), nil)
	srv.writeError(&exchange{ResponseWriter: rec, requestID: "abc-7"}, fmt.Errorf("create resource: %w", io.ErrUnexpectedEOF))
	rec.Header().Set("X-Request-Id", "abc-7")
	r := response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	r.wantError(t, http.StatusInternalServerError, "An unexpected error occurred; quote request id abc-7 when reporting it.", nil)
	if ct := rec.Header().Get("Content-Type"); ct != jsonContentType {
		t.Errorf("Content-Type %q", ct)
	}
	if bytes.Contains(r.Body, []byte("EOF")) || bytes.Contains(r.Body, []byte("create resource")) {
		t.Errorf("the 500 tells what went wrong inside: %s", r.Body)
	}
}

// TestPanicIs500AndJournaled: a handler that panics answers 500 in the
// error shape with the request id in its Message, and the journal records
// exactly that one request with status 500.
func TestPanicIs500AndJournaled(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	e.srv.mux.HandleFunc("GET /api/v2/boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	r := e.expect(http.StatusInternalServerError, http.MethodGet, "/api/v2/boom", "")
	ae := r.wantError(t, http.StatusInternalServerError, "", nil)
	if !strings.Contains(ae.Message, r.Header.Get("X-Request-Id")) {
		t.Errorf("500 Message %q does not give the request id", ae.Message)
	}
	entries := journalEntries(t, e.srv)
	if len(entries) != 1 {
		t.Fatalf("journal holds %d entries, want 1: %+v", len(entries), entries)
	}
	if entries[0].Status != http.StatusInternalServerError {
		t.Errorf("the journal records status %d for a request answered 500", entries[0].Status)
	}
	if got := e.journal(); len(got) != 1 || got[0].Status != http.StatusInternalServerError {
		t.Errorf("GET /__admin/requests after a panic: %+v, want one entry with status 500", got)
	}
}

// discardResponse is a ResponseWriter that keeps nothing, so that
// BenchmarkServeHTTP measures the pipeline and not a recorder.
type discardResponse struct{ header http.Header }

func (d *discardResponse) Header() http.Header         { return d.header }
func (d *discardResponse) WriteHeader(int)             {}
func (d *discardResponse) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkServeHTTP runs the pipeline in process, with the logger main
// builds (text lines into the batching writer, here onto io.Discard) and
// the journal on, to find where a request's time goes; BenchmarkWrk gives
// the figures users see.
//
//	go test -run '^$' -bench '^BenchmarkServeHTTP$' -benchmem -cpuprofile cpu.out .
func BenchmarkServeHTTP(b *testing.B) {
	d := benchDirectory(b, 10_000)
	rows, _ := d.store.all()
	srv := newServer(DefaultConfig(), benchCopy(rows), slog.New(slog.NewTextHandler(io.Discard, nil)))
	email, _ := rows[4321].value(fieldEmail)
	q := url.Values{paramFilters: {"Email~eq~" + benchQuote(email)}, paramPage: {"1"}, paramPageSize: {"10"}}
	listURL := "/api/v2/resource?" + q.Encode()
	createBody := benchJSON(10_000_000)
	for _, tc := range []struct {
		name, method, target string
		body                 []byte
	}{
		{"list-eq", http.MethodGet, listURL, nil},
		{"create", http.MethodPost, "/api/v2/resource", createBody},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			w := &discardResponse{header: http.Header{}}
			for b.Loop() {
				var body io.Reader // nil: no body, as net/http gives a GET
				if tc.body != nil {
					body = bytes.NewReader(tc.body)
				}
				r := httptest.NewRequest(tc.method, tc.target, body)
				r.Header.Set("Content-Type", "application/json")
				clear(w.header)
				srv.ServeHTTP(w, r)
			}
		})
	}
}

// canonicalAPIPathBySplit is canonicalAPIPath as first written, with
// strings.Split: the reference FuzzCanonicalAPIPath holds the allocation-free
// one to.
func canonicalAPIPathBySplit(p string) string {
	trimmed := p
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		trimmed = p[:len(p)-1]
	}
	segs := strings.Split(trimmed[1:], "/")
	if len(segs) == 3 && strings.EqualFold(segs[0], "api") && strings.EqualFold(segs[1], "v2") && strings.EqualFold(segs[2], "version") {
		return "/api/v2/version"
	}
	if len(segs) < 3 || len(segs) > 4 {
		return p
	}
	for i, want := range apiSegments {
		if !strings.EqualFold(segs[i], want) {
			return p
		}
	}
	if len(segs) == 4 {
		if segs[3] == "" {
			return p
		}
		return "/api/v2/resource/" + segs[3]
	}
	return "/api/v2/resource"
}

// TestCanonicalAPIPath is not parallel: AllocsPerRun may not be.
func TestCanonicalAPIPath(t *testing.T) {
	for p, want := range map[string]string{
		"/api/v2/resource":        "/api/v2/resource",
		"/api/v2/resource/":       "/api/v2/resource",
		"/API/V2/Resource":        "/api/v2/resource",
		"/api/v2/resource/AbC":    "/api/v2/resource/AbC",
		"/Api/v2/RESOURCE/AbC/":   "/api/v2/resource/AbC",
		"/api/v2/resource/a/b":    "/api/v2/resource/a/b",
		"/api/v2/resource//":      "/api/v2/resource//",
		"/api/v2":                 "/api/v2",
		"/api/v2/":                "/api/v2/",
		"/api/v2/resources":       "/api/v2/resources",
		"/":                       "/",
		"/__admin/requests":       "/__admin/requests",
		"/api/v2/resource/x/y/z/": "/api/v2/resource/x/y/z/",
		"/api/v2/version":         "/api/v2/version",
		"/API/V2/Version/":        "/api/v2/version",
		"/api/v2/version/x":       "/api/v2/version/x",
		"/api/v2/versions":        "/api/v2/versions",
	} {
		if got := canonicalAPIPath(p); got != want {
			t.Errorf("canonicalAPIPath(%q) = %q, want %q", p, got, want)
		}
	}
	for _, p := range []string{"/api/v2/resource", "/api/v2/resource/AbC", "/api/v2/version"} {
		if n := testing.AllocsPerRun(10, func() { canonicalAPIPath(p) }); n != 0 {
			t.Errorf("canonicalAPIPath(%q) allocates %v times", p, n)
		}
	}
}

func FuzzCanonicalAPIPath(f *testing.F) {
	for _, p := range []string{"/", "/api/v2/resource", "/API/v2/resource/x/", "/api/v2/resource//", "/api//v2", "/a/b/c/d/e"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !strings.HasPrefix(p, "/") {
			return // routedRequest refuses such paths first
		}
		if got, want := canonicalAPIPath(p), canonicalAPIPathBySplit(p); got != want {
			t.Errorf("canonicalAPIPath(%q) = %q, want %q", p, got, want)
		}
	})
}

// Routes are matched as ASP.NET matches them (the contract): the fixed
// segments of /api/v2/resource in any case, one trailing slash tolerated;
// an id stays as sent, and a doubled slash matches nothing.

func TestRoutesCaseAndTrailingSlash(t *testing.T) {
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	id := func() string { id, _ := a.create(`{"Company":"Acme"}`); return id }()
	for _, path := range []string{"/API/V2/Resource", "/api/v2/RESOURCE/", "/Api/v2/resource/", "/api/V2/resource?requestParams.pageSize=1"} {
		r := a.on(t).do(http.MethodGet, path, "")
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), id) {
			t.Errorf("GET %s: %d %s, want the list", path, r.Status, r.Body)
		}
	}
	for _, path := range []string{"/Api/V2/resource/" + id, "/API/V2/RESOURCE/" + id + "/", "/api/v2/resource/" + strings.ToUpper(id)} {
		r := a.on(t).do(http.MethodPut, path, putBody(id, "Position", path))
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), path) {
			t.Errorf("PUT %s: %d %s, want the update", path, r.Status, r.Body)
		}
	}
	if r := a.on(t).do(http.MethodPost, "/API/v2/Resource/", `{"Company":"Second"}`); r.Status != http.StatusCreated {
		t.Errorf("POST /API/v2/Resource/: %d %s", r.Status, r.Body)
	}
	for _, tt := range []struct{ method, path string }{
		{http.MethodGet, "/api/v2/resource//"},
		{http.MethodGet, "/API/V2/RESOURCE//"},
		{http.MethodPost, "/api/v2/resource//"},
		{http.MethodPut, "/api/v2/resource/" + id + "//"},
		{http.MethodGet, "/api/v2//resource"},
		{http.MethodGet, "/api/v2/resources"},
		{http.MethodGet, "/api/v2/resource/" + id + "/x"},
	} {
		r := a.on(t).do(tt.method, tt.path, `{"Company":"x"}`)
		if r.Status != http.StatusNotFound {
			t.Errorf("%s %s: %d %s, want 404", tt.method, tt.path, r.Status, r.Body)
			continue
		}
		if e := checkErrorShape(t, tt.path, r.Header, r.Body); e.Message != "No resource matches the path "+strings.SplitN(tt.path, "?", 2)[0]+"." {
			t.Errorf("%s %s: Message %q", tt.method, tt.path, e.Message)
		}
	}
}

// TestRoutesNamespaceEdges: the routing decided before any namespace
// exists. GET /ns/{name} sends a browser to its console, a path no route
// answers leaves no namespace behind, and an encoded slash is part of the
// name, not a segment break.
func TestRoutesNamespaceEdges(t *testing.T) {
	a := startServer(t, DefaultConfig(), nil)
	const invalid = `"%s" is not 1 to 64 characters of A-Z a-z 0-9 . _ -.`
	tests := []struct {
		method, path string
		status       int
		location     string
		message      string
	}{
		{http.MethodGet, "/ns/demo", http.StatusPermanentRedirect, "/ns/demo/", "The console of the namespace demo is at /ns/demo/."},
		{http.MethodHead, "/ns/demo", http.StatusPermanentRedirect, "/ns/demo/", ""},
		{http.MethodGet, "/ns/demo?x=1", http.StatusPermanentRedirect, "/ns/demo/?x=1", "The console of the namespace demo is at /ns/demo/."},
		{http.MethodPost, "/ns/demo", http.StatusNotFound, "", "No resource matches the path /ns/demo."},
		{http.MethodGet, "/ns/bad%20name", http.StatusBadRequest, "", "The namespace name " + fmt.Sprintf(invalid, "bad name")},
		{http.MethodGet, "/ns/ghost/nothing", http.StatusNotFound, "", "No resource matches the path /ns/ghost/nothing."},
		{http.MethodPost, "/ns/ghost/api/v2/resources", http.StatusNotFound, "", "No resource matches the path /ns/ghost/api/v2/resources."},
		{http.MethodGet, "/ns/ghost/__admin/nothing", http.StatusNotFound, "", "No resource matches the path /ns/ghost/__admin/nothing."},
		{http.MethodGet, "/ns/sl%2Fash/api/v2/resource", http.StatusBadRequest, "", "The namespace name " + fmt.Sprintf(invalid, "sl/ash")},
		{http.MethodGet, "/ns/sl%2fash/__admin/health", http.StatusBadRequest, "", "The namespace name " + fmt.Sprintf(invalid, "sl/ash")},
	}
	for _, tt := range tests {
		r := a.on(t).do(tt.method, tt.path, "")
		if r.Status != tt.status || r.Header.Get("Location") != tt.location {
			t.Errorf("%s %s: %d Location %q; want %d Location %q", tt.method, tt.path, r.Status, r.Header.Get("Location"), tt.status, tt.location)
		}
		if tt.method == http.MethodHead {
			continue
		}
		if e := checkErrorShape(t, tt.path, r.Header, r.Body); e.Message != tt.message {
			t.Errorf("%s %s: Message %q, want %q", tt.method, tt.path, e.Message, tt.message)
		}
	}
	var list struct {
		Namespaces []struct{ Name string }
		Total      int
	}
	a.getJSON("/__admin/namespaces", &list)
	if list.Total != 1 || list.Namespaces[0].Name != "default" {
		t.Errorf("namespaces %+v, want default alone", list)
	}
	// A path a route answers does create one, the console page included.
	a.expect(http.StatusOK, http.MethodGet, "/ns/demo/", "")
	a.getJSON("/__admin/namespaces", &list)
	if list.Total != 2 || list.Namespaces[1].Name != "demo" {
		t.Errorf("namespaces %+v, want default and demo", list)
	}
}

// TestAnswerJournaledBeforeDelivery: a client that has read a whole
// answer finds its journal entry at once, without polling, however large
// the answer (net/http sends a body larger than its buffers before the
// handler returns; the entry was added only after).
func TestAnswerJournaledBeforeDelivery(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	e.expect(http.StatusOK, http.MethodPost, "/__admin/generate", `{"Count": 400, "Seed": 1}`)
	addr := strings.TrimPrefix(e.base, "http://")
	for i := range 200 {
		id := fmt.Sprintf("big-list-%d", i)
		req := "GET /api/v2/resource?requestParams.pageSize=500 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Request-Id: " + id + "\r\n\r\n"
		resp, body, err := rawExchange(t, addr, req, nil)
		if err != nil || resp.StatusCode != http.StatusOK || len(body) < 64<<10 {
			t.Fatalf("try %d: %v %v, %d bytes; want a 200 over 64 KiB", i, resp, err, len(body))
		}
		var j struct{ Requests []wireEntry }
		e.getJSON("/__admin/requests?limit=1", &j)
		if len(j.Requests) != 1 || j.Requests[0].RequestID != id || j.Requests[0].Status != 200 || j.Requests[0].Delivered != 200 {
			t.Fatalf("try %d: the newest journal entry is %+v, want the 200 of %s", i, j.Requests, id)
		}
	}
}
