package main

// Tests of access.go: Basic authentication and CORS.

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

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
	e.expect(http.StatusOK, http.MethodPost, "/api/v2/resource", `{"Company": "A"}`, auth...)
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
	if want := []int{401, 401, 401, 401, 401, 200, 200}; !slices.Equal(statuses, want) {
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
	cfg.CORSOrigin = origin
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
	if simple.Header.Get("Access-Control-Allow-Origin") != origin || simple.Header.Get("Access-Control-Expose-Headers") != "X-Request-Id" {
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
	cfg.CORSOrigin = origin
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
	cfg.CORSOrigin = "*"
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
	e.expect(http.StatusOK, http.MethodPost, "/api/v2/resource", `{"Company": "A"}`, "Authorization", "Basic Y2k6dG9rZW4=")
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
