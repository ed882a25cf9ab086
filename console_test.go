package resourcedir

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestConsolePage(t *testing.T) {
	t.Parallel()
	h := consoleHandler(t)
	rec := serve(h, http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / = %d %s", rec.Code, rec.Body)
	}
	wantHeaders := map[string]string{
		"Content-Type":           "text/html; charset=utf-8",
		"Cache-Control":          "no-cache",
		"X-Content-Type-Options": "nosniff",
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
			"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	}
	for k, want := range wantHeaders {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if rec.Header().Get("X-Request-Id") == "" || rec.Header().Get("ETag") == "" {
		t.Errorf("headers lack X-Request-Id or ETag: %v", rec.Header())
	}
	page := rec.Body.String()
	// The accessible names are part of the contract (screen readers and
	// browser tests find the controls by them).
	for _, want := range []string{
		`<label for="filter">Filter</label>`,
		`<table id="resources" aria-label="Resources">`,
		`<ol id="requests" class="requests" aria-label="Requests">`,
		`id="create">Create</button>`,
		`id="save" hidden>Save</button>`,
		`id="reset">Reset</button>`,
		`aria-label="Next page"`,
		`aria-label="Previous page"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Error("the page names an absolute URL; it must work with no network")
	}

	// Revalidation costs nothing when the page is unchanged.
	again := serve(h, http.MethodGet, "/", http.Header{"If-None-Match": {rec.Header().Get("ETag")}})
	if again.Code != http.StatusNotModified || again.Body.Len() != 0 {
		t.Errorf("GET / with its ETag = %d with %d bytes, want 304 and none", again.Code, again.Body.Len())
	}
	head := serve(h, http.MethodHead, "/", nil)
	if head.Code != http.StatusOK || head.Body.Len() != 0 || head.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("HEAD / = %d, %d bytes, %q", head.Code, head.Body.Len(), head.Header().Get("Content-Type"))
	}
}

func TestConsoleAssets(t *testing.T) {
	t.Parallel()
	h := consoleHandler(t)
	page := serve(h, http.MethodGet, "/", nil).Body.String()
	refs := regexp.MustCompile(`"(/__admin/console/([a-z.]+)\?v=([0-9a-f]{12}))"`).FindAllStringSubmatch(page, -1)
	if len(refs) != len(consoleAssetNames()) {
		t.Fatalf("the page names %d versioned assets, want the %d embedded (%v): %v", len(refs), len(consoleAssetNames()), consoleAssetNames(), refs)
	}
	wantType := map[string]string{"console.js": "text/javascript; charset=utf-8", "console.css": "text/css; charset=utf-8"}
	for _, ref := range refs {
		url, name := ref[1], ref[2]
		rec := serve(h, http.MethodGet, url, nil)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s = %d", url, rec.Code)
			continue
		}
		if got := rec.Header().Get("Content-Type"); got != wantType[name] {
			t.Errorf("GET %s: Content-Type %q, want %q", url, got, wantType[name])
		}
		if got := rec.Header().Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: Cache-Control %q; a versioned asset is kept for good", url, got)
		}
		if rec.Body.Len() == 0 || rec.Body.String() != string(consoleAssets[name].body) {
			t.Errorf("GET %s: the body is not the embedded file", url)
		}
		// Without the version (or with an old one) the browser must revalidate.
		for _, target := range []string{"/__admin/console/" + name, "/__admin/console/" + name + "?v=000000000000"} {
			if got := serve(h, http.MethodGet, target, nil).Header().Get("Cache-Control"); got != "no-cache" {
				t.Errorf("GET %s: Cache-Control %q, want no-cache", target, got)
			}
		}
	}
}

func TestConsoleErrors(t *testing.T) {
	t.Parallel()
	h := consoleHandler(t)
	tests := []struct {
		method, target string
		status         int
		allow          string
	}{
		{http.MethodPost, "/", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodDelete, "/__admin/console/console.js", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodPost, "/__admin/openapi.json", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodGet, "/__admin/console/missing.js", http.StatusNotFound, ""},
		{http.MethodGet, "/__admin/console/index.html", http.StatusNotFound, ""},
		{http.MethodGet, "/index.html", http.StatusNotFound, ""},
		{http.MethodGet, "/__admin/openapi.json?format=yaml", http.StatusBadRequest, ""},
	}
	for _, tc := range tests {
		rec := serve(h, tc.method, tc.target, nil)
		if rec.Code != tc.status || rec.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s = %d Allow %q, want %d Allow %q", tc.method, tc.target, rec.Code, rec.Header().Get("Allow"), tc.status, tc.allow)
		}
		if got := rec.Header().Get("Content-Type"); got != "application/json; charset=utf-8" {
			t.Errorf("%s %s: Content-Type %q; errors are JSON", tc.method, tc.target, got)
		}
	}
}

func TestConsoleRequiresAuth(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Auth = "svc:token"
	h := newServer(cfg, newStore(nil), nil)
	rec := serve(h, http.MethodGet, "/", nil)
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") != `Basic realm="resourcedir"` {
		t.Fatalf("GET / without credentials = %d %q; the browser's Basic prompt needs a 401 with a challenge", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth("svc", "token")
	ok := httptest.NewRecorder()
	h.ServeHTTP(ok, req)
	if ok.Code != http.StatusOK || strings.Contains(ok.Body.String(), "svc:token") {
		t.Errorf("GET / with credentials = %d, or the page shows the credentials", ok.Code)
	}
}

// TestConsoleMarksItsCalls: the page's script sends the header the pipeline
// looks for on every call, through one function; a rename on either side
// would make the console take part again.
func TestConsoleMarksItsCalls(t *testing.T) {
	t.Parallel()
	script := string(consoleAssets["console.js"].body)
	if !strings.Contains(script, "const consoleHeader = '"+consoleHeader+"';") {
		t.Errorf("console.js does not name the header %s", consoleHeader)
	}
	// Every fetch goes through request(), which adds the header.
	if n := strings.Count(script, "fetch("); n != 1 || !strings.Contains(script, "headers: { [consoleHeader]: '1' }") {
		t.Errorf("console.js calls fetch %d times, or not with the header; want once, in request()", n)
	}
}

// TestConsoleFilterHelpFollowsDialect: the page's filter help describes the
// -filters dialect in force.
func TestConsoleFilterHelpFollowsDialect(t *testing.T) {
	for _, c := range []struct {
		dialect   filterDialect
		want, not string
	}{
		{dialectAssetic, "all by <code>~and~</code> or all by <code>~or~</code>", "isnull"},
		{dialectKendo, "<code>Fax~isnull</code>", "all by <code>~and~</code>"},
	} {
		cfg := DefaultConfig()
		cfg.Filters = string(c.dialect)
		e := startServer(t, cfg, nil)
		r := e.expect(http.StatusOK, http.MethodGet, "/", "")
		if !strings.Contains(string(r.Body), c.want) || strings.Contains(string(r.Body), c.not) {
			t.Errorf("%s: the page's filter help does not describe the dialect", c.dialect)
		}
		if strings.Contains(string(r.Body), consoleFilterHelp) {
			t.Errorf("%s: the page still has the generic help", c.dialect)
		}
	}
}

// consoleHandler is a server with default settings, for the console and
// OpenAPI tests.
func consoleHandler(t *testing.T) http.Handler {
	t.Helper()
	return newServer(DefaultConfig(), newStore(nil), nil)
}

func serve(h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestConsolePollFindsTheNamespaceMadeAfterIt: the console's live list
// long-polls the journal (wait=25s). On a namespace that does not exist yet
// that poll waited its whole time on a journal nobody writes to, while the
// first client request made the real namespace: the requests appeared 25 s
// late, not within a second. Such a wait now ends within a second, and the
// poll after it sees the request.
func TestConsolePollFindsTheNamespaceMadeAfterIt(t *testing.T) {
	t.Parallel()
	srv := newServer(DefaultConfig(), newStore(nil), nil)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	poll := func() string {
		req, err := http.NewRequest(http.MethodGet, ts.URL+"/ns/later/__admin/requests?count=1&wait=60s", nil)
		if err != nil {
			t.Error(err)
			return ""
		}
		req.Header.Set(consoleHeader, "1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return ""
		}
		defer resp.Body.Close()
		var got struct{ Count int }
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		return fmt.Sprint(resp.StatusCode, " ", got.Count)
	}
	answered := make(chan string, 1)
	go func() { answered <- poll() }()
	select {
	case got := <-answered:
		if got != "200 0" {
			t.Errorf("a poll of a namespace that does not exist: %s, want 200 with none", got)
		}
	case <-time.After(30 * time.Second): // the wait asked for is 60 s
		t.Fatal("a poll of a namespace that does not exist waited as if someone could write to it")
	}
	if srv.lookupNamespace("later") != nil {
		t.Fatal("the console's poll made the namespace")
	}
	clientAt(t, ts.URL).in("later").createPerson("Ada")
	if got := poll(); got != "200 1" {
		t.Errorf("the poll after the first create: %s, want 200 with the create", got)
	}
}
