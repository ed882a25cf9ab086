package main

// Local access (behaviour.md 11): a web page may not reach a server that
// listens on loopback, neither by DNS rebinding (a foreign Host) nor by a
// form posted across sites (a foreign Origin). Requests carry the headers a
// browser sends; servers are started through run, as main starts them.
// Every top-level name here starts with acc.

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

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

// accCreate adds one resource, so that a reset that went through shows.
func accCreate(t *testing.T, base string) {
	t.Helper()
	if status, _, body := accSend(t, base, http.MethodPost, "/api/v2/resource", "", "", "application/json", `{"Company":"Acme"}`); status != http.StatusOK {
		t.Fatalf("create: %d %s", status, body)
	}
}

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
	p := runStart(t, runArgs(), nil)
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
	p := runStart(t, runArgs("-allowed-hosts", "devbox.test, Api.Example"), nil)
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

	any := runStart(t, runArgs("-allowed-hosts", "*"), nil)
	if status, _, body := accSend(t, any.url, http.MethodGet, "/api/v2/resource", "anything.example", "", "", ""); status != http.StatusOK {
		t.Errorf("-allowed-hosts *: %d %s", status, body)
	}
}

// TestAccessHostNotCheckedOffLoopback: a server that listens on other
// interfaces is reached by names of its own; only Origin is checked.
func TestAccessHostNotCheckedOffLoopback(t *testing.T) {
	addr := serveProduction(t, NewServer(DefaultConfig(), NewStore(nil), nil), nil)
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
	p := runStart(t, runArgs("-cors", "https://app.example"), nil)
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
	addr := serveProduction(t, NewServer(DefaultConfig(), NewStore(nil), nil), nil)
	resp, body, err := rawExchange(t, addr, "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("OPTIONS *: %d %s, want 404", resp.StatusCode, body)
	}
	checkErrorShape(t, "OPTIONS *", resp.Header, body)
}
