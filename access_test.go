package resourcedir

// Tests of access.go: local access, Basic authentication and CORS.

// Local access (the contract): a web page may not reach a server that
// listens on loopback, neither by DNS rebinding (a foreign Host) nor by a
// form posted across sites (a foreign Origin). Requests carry the headers a
// browser sends; servers are started through run, as main starts them.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// accForbidden checks a 403 in the error shape whose Message holds want.
func accForbidden(t *testing.T, what string, status int, h http.Header, body []byte, want string) {
	t.Helper()
	if status != http.StatusForbidden {
		t.Errorf("%s: %d %s, want 403", what, status, body)
		return
	}
	if e := checkErrorShape(t, what, h, body); !strings.Contains(e.Message, want) {
		t.Errorf("%s: Message %q does not say %q", what, e.Message, want)
	}
}

func TestAccessHost(t *testing.T) {
	p := serveStart(t, Config{})
	port := p.url[strings.LastIndex(p.url, ":")+1:]
	for _, host := range []string{"attacker.example", "attacker.example:" + port, "127.0.0.1.attacker.example", "localhost.attacker.example:" + port, "10.1.2.3:" + port, "[::ffff:10.1.2.3]"} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			status, h, body := accSend(t, p.url, method, "/api/v2/resource", host, "", "application/json", `{"Company":"Acme"}`)
			accForbidden(t, method+" with Host "+host, status, h, body, "-allowed-hosts")
		}
	}
	if n := accResources(t, p.url); n != 0 {
		t.Errorf("refused creates stored %d resources", n)
	}
	for _, host := range []string{"localhost", "localhost:" + port, "LocalHost:1", "127.0.0.1", "127.0.0.1:" + port, "127.9.9.9:80", "[::1]", "[::1]:" + port} {
		if status, _, body := accSend(t, p.url, http.MethodGet, "/api/v2/resource", host, "", "", ""); status != http.StatusOK {
			t.Errorf("GET with Host %s: %d %s, want 200", host, status, body)
		}
	}
}

func TestAccessAllowedHosts(t *testing.T) {
	p := serveStart(t, Config{AllowedHosts: []string{"devbox.test", "Api.Example"}})
	for host, want := range map[string]int{
		"devbox.test":        http.StatusOK,
		"devbox.test:8080":   http.StatusOK,
		"api.example":        http.StatusOK,
		"localhost":          http.StatusOK,
		"other.test":         http.StatusForbidden,
		"sub.devbox.test:80": http.StatusForbidden,
	} {
		if status, _, body := accSend(t, p.url, http.MethodGet, "/api/v2/resource", host, "", "", ""); status != want {
			t.Errorf("-allowed-hosts devbox.test,Api.Example, Host %s: %d %s, want %d", host, status, body, want)
		}
	}

	any := serveStart(t, Config{AllowedHosts: []string{"*"}})
	if status, _, body := accSend(t, any.url, http.MethodGet, "/api/v2/resource", "anything.example", "", "", ""); status != http.StatusOK {
		t.Errorf("-allowed-hosts *: %d %s", status, body)
	}
}

// TestAccessHostNotCheckedOffLoopback: a server that listens on other
// interfaces is reached by names of its own; only Origin is checked.
func TestAccessHostNotCheckedOffLoopback(t *testing.T) {
	addr := serveProduction(t, newServer(DefaultConfig(), newStore(nil), nil), nil)
	base := "http://" + addr
	if status, _, body := accSend(t, base, http.MethodGet, "/api/v2/resource", "directory.corp.example", "", "", ""); status != http.StatusOK {
		t.Errorf("LoopbackOnly off, a foreign Host: %d %s", status, body)
	}
	status, h, body := accSend(t, base, http.MethodPost, "/__admin/reset", "directory.corp.example", "https://evil.example", "text/plain", "")
	accForbidden(t, "LoopbackOnly off, a foreign Origin", status, h, body, "https://evil.example")
}

// TestAccessOrigin: a web page may read (a GET is not a change) but not
// change state; the server's own pages and the -cors origin may.
func TestAccessOrigin(t *testing.T) {
	p := serveStart(t, Config{CORSOrigins: []string{"https://app.example"}})
	own := strings.TrimSuffix(p.url, "/")
	host := strings.TrimPrefix(own, "http://")
	accCreate(t, p.url)

	// The form a page at evil.example posts: text/plain needs no preflight.
	for _, tt := range []struct{ what, host, origin string }{
		{"foreign Origin", "", "https://evil.example"},
		{"foreign Origin and Host", "attacker.example", "https://evil.example"},
		{"opaque Origin (sandboxed frame, file: page)", "", "null"},
		{"the server's host on another scheme", "", "ftp://" + host},
		{"the server's name on another port", "", "http://127.0.0.1:1"},
		{"a look-alike of the -cors origin", "", "https://app.example.evil.example"},
	} {
		status, h, body := accSend(t, p.url, http.MethodPost, "/__admin/reset", tt.host, tt.origin, "text/plain", "")
		want := "may change its state"
		if tt.host != "" {
			want = "-allowed-hosts" // the Host is refused first
		}
		accForbidden(t, "POST /__admin/reset, "+tt.what, status, h, body, want)
	}
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		status, h, body := accSend(t, p.url, method, "/__admin/resources", "", "https://evil.example", "application/json", "[]")
		accForbidden(t, method+" /__admin/resources from a foreign Origin", status, h, body, "https://evil.example")
	}
	if n := accResources(t, p.url); n != 1 {
		t.Fatalf("after refused resets the store holds %d resources, want 1", n)
	}

	// Reading from any page is allowed: CORS decides what the page sees.
	if status, _, body := accSend(t, p.url, http.MethodGet, "/api/v2/resource", "", "https://evil.example", "", ""); status != http.StatusOK {
		t.Errorf("GET from a foreign Origin: %d %s", status, body)
	}
	for _, origin := range []string{own, "HTTP://" + strings.ToUpper(host), "https://app.example"} {
		accCreate(t, p.url)
		status, _, body := accSend(t, p.url, http.MethodPost, "/__admin/reset", "", origin, "text/plain", "")
		if status != http.StatusOK {
			t.Errorf("POST /__admin/reset from %s: %d %s, want 200", origin, status, body)
		}
		if n := accResources(t, p.url); n != 0 {
			t.Errorf("POST /__admin/reset from %s left %d resources", origin, n)
		}
	}
	// A client that is not a browser sends no Origin.
	accCreate(t, p.url)
	if status, _, body := accSend(t, p.url, http.MethodPost, "/__admin/reset", "", "", "", ""); status != http.StatusOK {
		t.Errorf("POST /__admin/reset without Origin: %d %s", status, body)
	}
}

// TestAccessOptionsStar: OPTIONS * goes through the pipeline of the real
// http.Server, not net/http's own plain answer.
func TestAccessOptionsStar(t *testing.T) {
	addr := serveProduction(t, newServer(DefaultConfig(), newStore(nil), nil), nil)
	resp, body, err := rawExchange(t, addr, "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("OPTIONS *: %d %s, want 404", resp.StatusCode, body)
	}
	checkErrorShape(t, "OPTIONS *", resp.Header, body)
}

// Basic authentication and CORS.

func TestAuthRequired(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Auth = "ci:tok:en" // the token may itself hold a colon
	e := startServer(t, cfg, nil)
	paths := []string{"/api/v2/resource", "/__admin/health", "/__admin/requests", "/unknown"}
	for _, path := range paths {
		for _, creds := range []struct {
			name, user, token string
			set               bool
		}{
			{"none", "", "", false},
			{"wrong user", "cj", "tok:en", true},
			{"wrong token", "ci", "tok:em", true},
			{"token prefix", "ci", "tok", true},
			{"empty", "", "", true},
		} {
			req, _ := http.NewRequest(http.MethodGet, e.ts.URL+path, nil)
			if creds.set {
				req.SetBasicAuth(creds.user, creds.token)
			}
			resp, err := e.ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			r := response{resp.StatusCode, resp.Header, b}
			if path == "/__admin/health" && !creds.set {
				// Probes need no secret, and learn nothing but that it is up.
				if r.Status != http.StatusOK || string(r.Body) != `{"Status":"ok"}` {
					t.Errorf("health without credentials: %d %s, want 200 {\"Status\":\"ok\"}", r.Status, r.Body)
				}
				continue
			}
			if r.Status != http.StatusUnauthorized {
				t.Errorf("%s with %s credentials: status %d, want 401", path, creds.name, r.Status)
				continue
			}
			if got := r.Header.Get("WWW-Authenticate"); got != `Basic realm="resourcedir"` {
				t.Errorf("%s: WWW-Authenticate %q", path, got)
			}
			if r.Header.Get("X-Request-Id") == "" {
				t.Errorf("%s: 401 without X-Request-Id", path)
			}
			if ae := r.wantError(t, 0, "", anyModelState); !strings.Contains(ae.Message, "Basic") || ae.ModelState != nil {
				t.Errorf("%s: 401 body %s", path, r.Body)
			}
		}
	}
	auth := []string{"Authorization", "Basic Y2k6dG9rOmVu"} // ci:tok:en
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", auth...)
	e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", `{"Company": "A"}`, auth...)
	e.expect(http.StatusOK, http.MethodGet, "/__admin/health", "", auth...)
	e.expect(http.StatusNotFound, http.MethodGet, "/unknown", "", auth...)
	// Every /api/v2 request is journaled, the refused ones too: five 401s
	// (one per set of credentials), then the 2 authenticated requests.
	var jr struct{ Requests []wireEntry }
	e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "", auth...).decode(t, &jr)
	var statuses []int
	for _, entry := range jr.Requests {
		statuses = append(statuses, entry.Status)
	}
	if want := []int{401, 401, 401, 401, 401, 200, 201}; !slices.Equal(statuses, want) {
		t.Errorf("journal statuses %v, want %v", statuses, want)
	}
}

func TestAuthOffByDefault(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	r := e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	if r.Header.Get("WWW-Authenticate") != "" {
		t.Error("WWW-Authenticate without -auth")
	}
	// Credentials sent anyway are ignored.
	e.expect(http.StatusOK, http.MethodGet, "/__admin/health", "", "Authorization", "Basic eDp5")
}

func TestCORSOffByDefault(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	r := e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", "Origin", "http://app.test")
	pre := e.do(http.MethodOptions, "/api/v2/resource", "", "Origin", "http://app.test", "Access-Control-Request-Method", "POST")
	if pre.Status != http.StatusMethodNotAllowed {
		t.Errorf("preflight with CORS off: %d, want 405", pre.Status)
	}
	for _, h := range []http.Header{r.Header, pre.Header} {
		for name := range h {
			if strings.HasPrefix(name, "Access-Control-") {
				t.Errorf("CORS off, but %s: %s", name, h.Get(name))
			}
		}
	}
}

func TestCORSOn(t *testing.T) {
	t.Parallel()
	const origin = "http://app.test"
	cfg := DefaultConfig()
	cfg.CORSOrigins = []string{origin}
	e := startServer(t, cfg, nil)

	pre := e.expect(http.StatusNoContent, http.MethodOptions, "/api/v2/resource/0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c", "",
		"Origin", origin, "Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", "authorization, content-type")
	want := map[string]string{
		"Access-Control-Allow-Origin":      origin,
		"Access-Control-Allow-Headers":     "authorization, content-type",
		"Access-Control-Allow-Credentials": "true",
		"Access-Control-Max-Age":           "600",
	}
	for name, v := range want {
		if got := pre.Header.Get(name); got != v {
			t.Errorf("preflight %s %q, want %q", name, got, v)
		}
	}
	if m := pre.Header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "PUT") || !strings.Contains(m, "POST") || !strings.Contains(m, "GET") {
		t.Errorf("Access-Control-Allow-Methods %q", m)
	}
	if !slices.Contains(pre.Header.Values("Vary"), "Origin") {
		t.Errorf("Vary %v lacks Origin", pre.Header.Values("Vary"))
	}
	if len(pre.Body) != 0 {
		t.Errorf("preflight body %q", pre.Body)
	}
	// Preflights are not /api/v2 calls: not journaled.
	if j := e.journal(); len(j) != 0 {
		t.Errorf("preflight journaled: %+v", j)
	}
	// Without requested headers, the ones a client needs are allowed.
	pre = e.expect(http.StatusNoContent, http.MethodOptions, "/api/v2/resource", "", "Origin", origin, "Access-Control-Request-Method", "POST")
	if h := pre.Header.Get("Access-Control-Allow-Headers"); !strings.Contains(h, "Authorization") || !strings.Contains(h, "Content-Type") {
		t.Errorf("default Access-Control-Allow-Headers %q", h)
	}

	simple := e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", "Origin", origin)
	if simple.Header.Get("Access-Control-Allow-Origin") != origin || simple.Header.Get("Access-Control-Expose-Headers") != "Location, Retry-After, X-Request-Id" {
		t.Errorf("simple request headers %v", simple.Header)
	}
	if simple.Header.Get("Access-Control-Allow-Methods") != "" {
		t.Error("a simple request got preflight headers")
	}
	e.expect(http.StatusOK, http.MethodGet, "/__admin/health", "", "Origin", origin)

	// Another origin gets no CORS headers, and no preflight answer.
	for _, r := range []response{
		e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", "Origin", "http://evil.test"),
		e.expect(http.StatusMethodNotAllowed, http.MethodOptions, "/api/v2/resource", "", "Origin", "http://evil.test", "Access-Control-Request-Method", "POST"),
		e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", ""), // no Origin: not a browser
	} {
		for name := range r.Header {
			if strings.HasPrefix(name, "Access-Control-") {
				t.Errorf("other origin got %s: %s", name, r.Header.Get(name))
			}
		}
	}
	// A plain OPTIONS (not a preflight) is routed as usual.
	e.expect(http.StatusMethodNotAllowed, http.MethodOptions, "/api/v2/resource", "", "Origin", origin)
}

func TestCORSPreflightWithAuth(t *testing.T) {
	t.Parallel()
	const origin = "http://app.test"
	cfg := DefaultConfig()
	cfg.CORSOrigins = []string{origin}
	cfg.Auth = "ci:secret"
	e := startServer(t, cfg, nil)
	// Browsers send preflights without credentials.
	pre := e.expect(http.StatusNoContent, http.MethodOptions, "/api/v2/resource", "",
		"Origin", origin, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization")
	if pre.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("preflight with auth on: %v", pre.Header)
	}
	// The real request still needs them; its 401 is readable by the page.
	r := e.expect(http.StatusUnauthorized, http.MethodGet, "/api/v2/resource", "", "Origin", origin)
	if r.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("401 lacks Access-Control-Allow-Origin: %v", r.Header)
	}
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", "Origin", origin, "Authorization", "Basic Y2k6c2VjcmV0")
	// A preflight from another origin is not answered, so it needs credentials.
	e.expect(http.StatusUnauthorized, http.MethodOptions, "/api/v2/resource", "", "Origin", "http://evil.test", "Access-Control-Request-Method", "POST")
}

func TestCORSAnyOrigin(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.CORSOrigins = []string{"*"}
	e := startServer(t, cfg, nil)
	for _, origin := range []string{"http://a.test", "https://b.test:8443"} {
		r := e.expect(http.StatusNoContent, http.MethodOptions, "/api/v2/resource", "", "Origin", origin, "Access-Control-Request-Method", "GET")
		if r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("origin %s: %v", origin, r.Header)
		}
	}
}

// HEAD /__admin/health answers as GET does, without the body: a probe that
// sends HEAD under -auth was refused with a 401 that GET did not get.
func TestAuthHealthHead(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Auth = "ci:token"
	e := startServer(t, cfg, nil)
	e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", `{"Company": "A"}`, "Authorization", "Basic Y2k6dG9rZW4=")
	for _, tt := range []struct {
		name string
		hdr  []string
		body string
	}{
		{"anonymous", nil, `{"Status":"ok"}`},
		{"authenticated", []string{"Authorization", "Basic Y2k6dG9rZW4="}, `{"Status":"ok","Resources":1}`}, // ci:token
	} {
		get := e.do(http.MethodGet, "/__admin/health", "", tt.hdr...)
		head := e.do(http.MethodHead, "/__admin/health", "", tt.hdr...)
		if get.Status != http.StatusOK || string(get.Body) != tt.body {
			t.Errorf("%s GET: %d %s, want 200 %s", tt.name, get.Status, get.Body, tt.body)
		}
		if head.Status != http.StatusOK || len(head.Body) != 0 {
			t.Errorf("%s HEAD: %d %q, want 200 and no body", tt.name, head.Status, head.Body)
		}
		for _, h := range []string{"Content-Type", "Content-Length"} {
			if g, hd := get.Header.Get(h), head.Header.Get(h); g != hd || hd == "" {
				t.Errorf("%s: HEAD's %s %q, GET's %q", tt.name, h, hd, g)
			}
		}
		if got := head.Header.Get("WWW-Authenticate"); got != "" {
			t.Errorf("%s HEAD: WWW-Authenticate %q", tt.name, got)
		}
	}
	// Wrong credentials are still refused, whatever the method.
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		if r := e.do(method, "/__admin/health", "", "Authorization", "Basic eDp5"); r.Status != http.StatusUnauthorized {
			t.Errorf("%s with wrong credentials: %d, want 401", method, r.Status)
		}
	}
}

// TestAccessFetchMetadata: a page of another site reaches in without an
// Origin (an <img src="http://127.0.0.1:8080/ns/evil-1/api/v2/resource">),
// but its browser says where the request comes from: such a request is
// refused, whatever its method, and creates no namespace, unless -cors
// admits the page.
func TestAccessFetchMetadata(t *testing.T) {
	p := serveStart(t, Config{CORSOrigins: []string{"https://app.example"}})
	e := clientAt(t, p.url)
	for i, tt := range []struct {
		method, site, origin string
		want                 int
	}{
		{http.MethodGet, "cross-site", "", http.StatusForbidden},
		{http.MethodHead, "cross-site", "", http.StatusForbidden},
		{http.MethodGet, "same-site", "", http.StatusForbidden}, // a page at localhost:3000
		{http.MethodGet, "cross-site", "https://evil.example", http.StatusForbidden},
		{http.MethodGet, "same-site", "http://localhost:3000", http.StatusForbidden},
		{http.MethodPost, "cross-site", "", http.StatusForbidden},
		{http.MethodGet, "cross-site", "https://app.example", http.StatusOK}, // the -cors origin
		{http.MethodPost, "cross-site", "https://app.example", http.StatusCreated},
		{http.MethodGet, "same-origin", "", http.StatusOK}, // the console
		{http.MethodGet, "none", "", http.StatusOK},        // typed in the address bar
		{http.MethodGet, "", "", http.StatusOK},            // not a browser
	} {
		ns := fmt.Sprintf("/ns/site-%d", i)
		body := ""
		if tt.method == http.MethodPost {
			body = `{"Company":"Acme"}`
		}
		hdr := []string{"Sec-Fetch-Site", tt.site, "Sec-Fetch-Mode", "no-cors", "Content-Type", "application/json"}
		if tt.origin != "" {
			hdr = append(hdr, "Origin", tt.origin)
		}
		r := e.do(tt.method, ns+"/api/v2/resource", body, hdr...)
		what := fmt.Sprintf("%s with Sec-Fetch-Site %q, Origin %q", tt.method, tt.site, tt.origin)
		if r.Status != tt.want {
			t.Errorf("%s: %d %s, want %d", what, r.Status, r.Body, tt.want)
			continue
		}
		if tt.want == http.StatusForbidden && tt.method != http.MethodHead {
			// The 403 gives the flag that admits the page, the -cors
			// origins already admitted kept.
			advice := "Start it with -cors ORIGIN (scheme://host[:port]) to admit that page's origin."
			if tt.origin != "" {
				advice = "Start it with -cors https://app.example," + tt.origin + " to admit that page's origin."
			}
			accForbidden(t, what, r.Status, r.Header, r.Body, advice)
		}
	}
	var names []string
	for _, n := range e.namespaces() {
		names = append(names, n.Name)
	}
	if want := []string{"default", "site-10", "site-6", "site-7", "site-8", "site-9"}; !slices.Equal(names, want) {
		t.Errorf("namespaces %v, want %v: a refused request created one", names, want)
	}
}

// TestAuthAnonymousCreatesNothing: a request without credentials neither
// creates a namespace nor counts toward -max-namespaces; the anonymous
// health probe answers for any name without creating it.
func TestAuthAnonymousCreatesNothing(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Auth = "ci:token"
	cfg.MaxNamespaces = 3
	e := startServer(t, cfg, nil)
	auth := []string{"Authorization", "Basic Y2k6dG9rZW4="}                           // ci:token
	e.expect(http.StatusOK, http.MethodGet, "/ns/known/api/v2/resource", "", auth...) // a probe creates nothing
	for i := range 20 {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			r := e.do(method, fmt.Sprintf("/ns/probe-%d/__admin/health", i), "")
			if want := `{"Status":"ok"}`; r.Status != http.StatusOK || method == http.MethodGet && string(r.Body) != want {
				t.Fatalf("anonymous %s health of a new namespace: %d %s, want 200 %s", method, r.Status, r.Body, want)
			}
		}
		for _, req := range [][2]string{
			{http.MethodGet, fmt.Sprintf("/ns/anon-%d/api/v2/resource", i)},
			{http.MethodGet, fmt.Sprintf("/ns/anon-%d/__admin/requests", i)},
			{http.MethodPost, "/__admin/namespaces"},
		} {
			if r := e.do(req[0], req[1], ""); r.Status != http.StatusUnauthorized {
				t.Fatalf("anonymous %s %s: %d %s, want 401", req[0], req[1], r.Status, r.Body)
			}
		}
	}
	if r := e.do(http.MethodGet, "/ns/known/__admin/health", ""); string(r.Body) != `{"Status":"ok"}` {
		t.Errorf("anonymous health of an existing namespace: %d %s", r.Status, r.Body)
	}
	var list struct{ Namespaces []nsEntry }
	e.expect(http.StatusOK, http.MethodGet, "/__admin/namespaces", "", auth...).decode(t, &list)
	if len(list.Namespaces) != 2 || list.Namespaces[0].Name != "default" || list.Namespaces[1].Name != "known" {
		t.Errorf("namespaces %+v, want default and known alone", list.Namespaces)
	}
	// The limit is still there for the test that asks.
	e.expect(http.StatusCreated, http.MethodPost, "/__admin/namespaces", "", auth...)
	e.expect(http.StatusTooManyRequests, http.MethodPost, "/__admin/namespaces", "", auth...)
}

// TestAccessHTTP10WithoutHost: HTTP/1.0 lets a client leave Host out; one
// that came over loopback is this machine's, not a web page's (a browser
// always sends Host), and is served.
func TestAccessHTTP10WithoutHost(t *testing.T) {
	p := serveStart(t, Config{})
	resp, body, err := rawExchange(t, strings.TrimPrefix(p.url, "http://"), "GET /__admin/health HTTP/1.0\r\n\r\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"Status":"ok"`) {
		t.Errorf("HTTP/1.0 without Host over loopback: %d %s, want 200 ok", resp.StatusCode, body)
	}
}

// TestCORSForeignPreflightCreatesNothing: a preflight from a page that
// -cors does not admit, without Sec-Fetch-Site (a browser that sends
// none), must not leave a namespace behind, with -cors set or not.
func TestCORSForeignPreflightCreatesNothing(t *testing.T) {
	for _, cfg := range []Config{{}, {CORSOrigins: []string{"http://app.test"}}} {
		p := serveStart(t, cfg)
		e := clientAt(t, p.url)
		for i, acrm := range []string{"POST", "DELETE", ""} {
			hdr := []string{"Origin", "http://evil.test"}
			if acrm != "" {
				hdr = append(hdr, "Access-Control-Request-Method", acrm)
			}
			path := fmt.Sprintf("/ns/preflight-%d/api/v2/resource", i)
			r := e.expect(http.StatusMethodNotAllowed, http.MethodOptions, path, "", hdr...)
			checkErrorShape(t, "OPTIONS "+path, r.Header, r.Body)
		}
		if ns := e.namespaces(); len(ns) != 1 || ns[0].Name != "default" {
			t.Errorf("%+v: namespaces %+v after foreign preflights, want default alone", cfg, ns)
		}
		p.stopClean()
	}
}

// -cors takes a list: each origin is admitted as itself, another is not,
// and a page may read the headers its client's retries need, with those a
// fault in force adds.
func TestCORSOrigins(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.CORSOrigins = []string{"http://localhost:3000", "http://localhost:5173"}
	e := startServer(t, cfg, nil)
	for _, origin := range cfg.CORSOrigins {
		r := e.expect(http.StatusNoContent, http.MethodOptions, "/api/v2/resource", "", "Origin", origin, "Access-Control-Request-Method", "POST")
		if r.Header.Get("Access-Control-Allow-Origin") != origin || r.Header.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("preflight from %s: %v", origin, r.Header)
		}
	}
	r := e.expect(http.StatusForbidden, http.MethodPost, "/api/v2/resource", `{"Company": "A"}`, "Origin", "http://localhost:4200")
	if want := "Start it with -cors http://localhost:3000,http://localhost:5173,http://localhost:4200 to admit that page's origin."; !strings.Contains(string(r.Body), want) {
		t.Errorf("403 %s lacks %q", r.Body, want)
	}

	exposed := func() string {
		return e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", "Origin", "http://localhost:5173").Header.Get("Access-Control-Expose-Headers")
	}
	if got := exposed(); got != "Location, Retry-After, X-Request-Id" {
		t.Errorf("exposed %q", got)
	}
	e.addFault(`{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Times": 1, "Headers": {"Retry-After": "2", "X-Why": "maintenance"}}`)
	if got := exposed(); got != "Location, Retry-After, X-Request-Id, X-Why" {
		t.Errorf("exposed with a fault in force %q", got)
	}
	r = e.expect(http.StatusServiceUnavailable, http.MethodPost, "/api/v2/resource", `{"Company": "A"}`, "Origin", "http://localhost:3000")
	if r.Header.Get("Access-Control-Expose-Headers") != "Location, Retry-After, X-Request-Id, X-Why" || r.Header.Get("X-Why") != "maintenance" {
		t.Errorf("the fault's answer: %v", r.Header)
	}
	if got := exposed(); got != "Location, Retry-After, X-Request-Id" {
		t.Errorf("exposed once the fault is spent %q", got)
	}
}

// accSend sends one request to base with the Host, Origin and Content-Type
// given ("" for none) and returns the status, headers and body.
func accSend(t *testing.T, base, method, path, host, origin, contentType, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s (Host %q, Origin %q): %v", method, path, host, origin, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// accCreate adds one resource, so that a reset that went through shows.
func accCreate(t *testing.T, base string) {
	t.Helper()
	if status, _, body := accSend(t, base, http.MethodPost, "/api/v2/resource", "", "", "application/json", `{"Company":"Acme"}`); status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
}

// accResources is what GET /__admin/health counts.
func accResources(t *testing.T, base string) int {
	t.Helper()
	status, _, body := accSend(t, base, http.MethodGet, "/__admin/health", "", "", "", "")
	var h struct{ Resources int }
	if err := json.Unmarshal(body, &h); status != http.StatusOK || err != nil {
		t.Fatalf("health: %d %v %s", status, err, body)
	}
	return h.Resources
}
