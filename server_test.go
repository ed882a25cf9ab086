package resourcedir

// Tests of server.go: Config defaults and the one table of routes.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestZeroConfig: a Config left at zero serves with the default limits.
func TestZeroConfig(t *testing.T) {
	t.Parallel()
	a := startServer(t, Config{}, nil).checkingEvery()
	apiSeed(t, a.store, apiNumbered(3)...)
	a.on(t).create(apiPadded(1 << 20))
	if l := a.on(t).list("requestParams.pageSize=1000"); l.TotalResults != 4 || l.TotalPages != 1 || len(l.ResourceList) != 4 {
		t.Errorf("TotalResults %d TotalPages %d, %d items", l.TotalResults, l.TotalPages, len(l.ResourceList))
	}
	a.on(t).do(http.MethodPost, "/api/v2/resource", apiPadded(1<<20+1)).wantError(t, http.StatusRequestEntityTooLarge,
		"The request body is larger than the limit of 1048576 bytes.", nil)
}

// TestRoutesOneTable: the console's page, its assets and the OpenAPI
// document are routes like the others, with the same JSON 405 and 404.
func TestRoutesOneTable(t *testing.T) {
	a := startServer(t, DefaultConfig(), nil)
	tests := []struct {
		method, path string
		status       int
		allow        string
		message      string
	}{
		{http.MethodPost, "/", http.StatusMethodNotAllowed, "GET, HEAD", "The method POST is not allowed on /; allowed: GET, HEAD."},
		{http.MethodDelete, "/ns/demo/", http.StatusMethodNotAllowed, "GET, HEAD", "The method DELETE is not allowed on /; allowed: GET, HEAD."},
		{http.MethodPut, "/__admin/console/console.js", http.StatusMethodNotAllowed, "GET, HEAD", "The method PUT is not allowed on /__admin/console/console.js; allowed: GET, HEAD."},
		{http.MethodPost, "/__admin/openapi.json", http.StatusMethodNotAllowed, "GET, HEAD", "The method POST is not allowed on /__admin/openapi.json; allowed: GET, HEAD."},
		{http.MethodPost, "/api/v2/resource/x", http.StatusMethodNotAllowed, "PUT", "The method POST is not allowed on /api/v2/resource/x; allowed: PUT."},
		{http.MethodGet, "/__admin/console/missing.js", http.StatusNotFound, "", "No resource matches the path /__admin/console/missing.js."},
		{http.MethodGet, "/ns/demo/__admin/console/index.html", http.StatusNotFound, "", "No resource matches the path /ns/demo/__admin/console/index.html."},
	}
	for _, tt := range tests {
		r := a.on(t).do(tt.method, tt.path, "")
		if r.Status != tt.status || r.Header.Get("Allow") != tt.allow {
			t.Errorf("%s %s: %d Allow %q; want %d Allow %q", tt.method, tt.path, r.Status, r.Header.Get("Allow"), tt.status, tt.allow)
		}
		if e := checkErrorShape(t, tt.path, r.Header, r.Body); e.Message != tt.message {
			t.Errorf("%s %s: Message %q, want %q", tt.method, tt.path, e.Message, tt.message)
		}
	}
}

// TestHTTPServerSettings pins the settings of newHTTPServer: each
// is there on purpose (main.go says why), and none may silently go back to
// net/http's zero value, which means "no limit".
func TestHTTPServerSettings(t *testing.T) {
	t.Parallel()
	h := newServer(DefaultConfig(), newStore(nil), nil)
	hs := newHTTPServer(h, discardLogger)
	if hs.Handler != h {
		t.Error("Handler is not the Server")
	}
	if hs.ReadHeaderTimeout <= 0 || hs.ReadHeaderTimeout > 10*time.Second {
		t.Errorf("ReadHeaderTimeout = %v, want (0, 10s]", hs.ReadHeaderTimeout)
	}
	if hs.ReadTimeout < hs.ReadHeaderTimeout {
		t.Errorf("ReadTimeout = %v, want at least ReadHeaderTimeout %v (0 would mean no limit)", hs.ReadTimeout, hs.ReadHeaderTimeout)
	}
	if hs.WriteTimeout <= maxFaultDelay {
		t.Errorf("WriteTimeout = %v, want above maxFaultDelay %v so that an injected delay can be answered", hs.WriteTimeout, maxFaultDelay)
	}
	if hs.IdleTimeout <= 0 {
		t.Errorf("IdleTimeout = %v, want a limit", hs.IdleTimeout)
	}
	if hs.MaxHeaderBytes != 64<<10 {
		t.Errorf("MaxHeaderBytes = %d, want 64 KiB", hs.MaxHeaderBytes)
	}
	if hs.ErrorLog == nil {
		t.Error("ErrorLog is nil: net/http's own complaints would bypass slog")
	}
}

// TestSlowHeaders is the slowloris case: a client that trickles
// its headers byte by byte is cut off once ReadHeaderTimeout has passed,
// while a prompt client on the same server is served.
func TestSlowHeaders(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	addr := serveProduction(t, newServer(DefaultConfig(), newStore(nil), nil), func(hs *http.Server) {
		hs.ReadHeaderTimeout = timeout
	})

	// Not rawExchange: the head goes out a byte at a time, and what is
	// checked is when the server ends the connection.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	// The head takes the trickler over a minute (3,000 bytes, 20 ms
	// apart): the server must end the connection long before it is done.
	head := "GET /__admin/health HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 3000)
	var sent atomic.Int64
	go func() {
		for i := 0; i < len(head); i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{head[i]}); err != nil {
				return // cut off, as expected
			}
			sent.Add(1)
		}
	}()
	// net/http may answer 400 before it closes (Go 1.26 does when some of
	// the headers came); what matters is that the connection ends.
	conn.SetReadDeadline(time.Now().Add(2 * time.Minute)) //nolint:errcheck // a fresh conn
	got, err := io.ReadAll(conn)
	elapsed := time.Since(start)
	var ne net.Error
	if n := sent.Load(); errors.As(err, &ne) && ne.Timeout() || n == int64(len(head)) {
		t.Fatalf("the server kept a trickling connection open while %d of its %d bytes came; ReadHeaderTimeout is %v", n, len(head), timeout)
	}
	if len(got) > 0 && !bytes.HasPrefix(got, []byte("HTTP/1.1 4")) && !bytes.HasPrefix(got, []byte("HTTP/1.0 4")) {
		t.Fatalf("the server answered a request whose headers never ended: %q", got)
	}
	if elapsed < timeout-50*time.Millisecond { // a lower bound: load cannot make it shorter
		t.Errorf("cut off after %v, before ReadHeaderTimeout %v", elapsed, timeout)
	}
	t.Logf("trickling client cut off after %v, %d bytes sent (%q, %v)", elapsed, sent.Load(), got, err)

	// A prompt client is unaffected.
	resp, body, err := rawExchange(t, addr, "GET /__admin/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("prompt request after the slow one: %v %v %s", resp, err, body)
	}
}

// TestSlowBody: a client that sends its headers promptly and then
// trickles the body is cut off by ReadTimeout, and the server keeps serving.
func TestSlowBody(t *testing.T) {
	t.Parallel()
	const timeout = 500 * time.Millisecond
	addr := serveProduction(t, newServer(DefaultConfig(), newStore(nil), nil), func(hs *http.Server) {
		hs.ReadTimeout = timeout
	})
	for _, path := range []string{"/api/v2/resource", "/__admin/resources"} {
		// Not rawExchange: the body goes out a byte at a time, and what is
		// checked is when the server ends the connection.
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		stop := make(chan struct{})
		// The body takes the trickler over a minute (3,000 bytes, 20 ms
		// apart): the server must end the connection long before it is done.
		const size = 3000
		var sent atomic.Int64
		go func() {
			if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", path, size); err != nil {
				return
			}
			for range size {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				if _, err := conn.Write([]byte{' '}); err != nil {
					return
				}
				sent.Add(1)
			}
		}()
		conn.SetReadDeadline(time.Now().Add(2 * time.Minute)) //nolint:errcheck // a fresh conn
		got, err := io.ReadAll(conn)
		elapsed := time.Since(start)
		close(stop)
		conn.Close()
		var ne net.Error
		if n := sent.Load(); errors.As(err, &ne) && ne.Timeout() || n == size {
			t.Fatalf("%s: a trickled body kept the connection open while %d of its %d bytes came; ReadTimeout is %v", path, n, size, timeout)
		}
		if elapsed < timeout-50*time.Millisecond { // a lower bound: load cannot make it shorter
			t.Errorf("%s: cut off after %v, before ReadTimeout %v", path, elapsed, timeout)
		}
		// Whatever is answered (a 400 saying the body could not be read) is
		// not a success and not a 5xx, and does not name the server's
		// address (the text of the net.OpError).
		if len(got) > 0 && !bytes.HasPrefix(got, []byte("HTTP/1.1 4")) {
			t.Errorf("%s: answered %.200q", path, got)
		}
		if host, _, _ := net.SplitHostPort(addr); bytes.Contains(got, []byte(host)) || bytes.Contains(got, []byte("i/o timeout")) {
			t.Errorf("%s: the answer gives away the connection's internals: %q", path, got)
		}
		t.Logf("%s: trickled body cut off after %v: %q", path, elapsed.Round(time.Millisecond), got)
	}
	resp, body, err := rawExchange(t, addr, "GET /__admin/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %v %v %s", resp, err, body)
	}
}

// TestNetHTTPOwnAnswers pins what the README says of the answers net/http
// writes itself, before any handler runs (it offers no hook for them):
// plain text (417: empty), no X-Request-Id, not journaled, and the server
// goes on serving.
func TestNetHTTPOwnAnswers(t *testing.T) {
	t.Parallel()
	addr := serveProduction(t, newServer(DefaultConfig(), newStore(nil), nil), nil)
	for _, tt := range []struct {
		name, head string
		want       int
	}{
		{"malformed request line", "GET /api/v2/resource\r\nHost: x\r\n\r\n", http.StatusBadRequest},
		{"malformed header", "GET /api/v2/resource HTTP/1.1\r\nHost: x\r\nNo colon\r\n\r\n", http.StatusBadRequest},
		{"no Host in HTTP/1.1", "GET /api/v2/resource HTTP/1.1\r\n\r\n", http.StatusBadRequest},
		{"Expect other than 100-continue", "POST /api/v2/resource HTTP/1.1\r\nHost: x\r\nExpect: later\r\nContent-Length: 2\r\n\r\n{}", http.StatusExpectationFailed},
		{"unsupported Transfer-Encoding", "POST /api/v2/resource HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", http.StatusNotImplemented},
		{"HTTP/3.0", "GET /api/v2/resource HTTP/3.0\r\nHost: x\r\n\r\n", http.StatusHTTPVersionNotSupported},
	} {
		resp, body, err := rawExchange(t, addr, tt.head, nil)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		wantType := "text/plain; charset=utf-8"
		if tt.want == http.StatusExpectationFailed {
			wantType = "" // and no body
		}
		if resp.StatusCode != tt.want || resp.Header.Get("Content-Type") != wantType || resp.Header.Get("X-Request-Id") != "" {
			t.Errorf("%s: %d %v %q, want %d, Content-Type %q, no X-Request-Id", tt.name, resp.StatusCode, resp.Header, body, tt.want, wantType)
		}
		if resp, body, err := rawExchange(t, addr, "GET /__admin/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", nil); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("health after %s: %v %v %s", tt.name, resp, err, body)
		}
	}
	resp, body, err := rawExchange(t, addr, "GET /__admin/requests HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", nil)
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"Count":0`)) {
		t.Errorf("journal: %v %v %s, want no entries", resp, err, body)
	}
}

// TestOversizedHeaders sends headers over MaxHeaderBytes through
// the real listener: net/http answers 431 itself (in text/plain: the
// handler never runs), and the server goes on serving.
func TestOversizedHeaders(t *testing.T) {
	t.Parallel()
	addr := serveProduction(t, newServer(DefaultConfig(), newStore(nil), nil), nil)
	manySmall := strings.Builder{}
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&manySmall, "X-H%d: v\r\n", i)
	}
	var longFilter strings.Builder
	for i := 0; i < 10000; i++ {
		if i > 0 {
			longFilter.WriteString("~or~")
		}
		longFilter.WriteString("Id~isnull")
	}
	tests := []struct {
		name string
		head string
		want int
	}{
		{"one 100 KiB header", "GET /__admin/health HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 100<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"10,000 small headers", "GET /__admin/health HTTP/1.1\r\nHost: x\r\n" + manySmall.String() + "\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"1 MiB header", "GET /__admin/health HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 1<<20) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"130 KB request line (10,000-condition filter)", "GET /api/v2/resource?requestParams.filters=" + url.QueryEscape(longFilter.String()) + " HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"60 KiB header is fine", "GET /__admin/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: " + strings.Repeat("a", 60<<10) + "\r\n\r\n", http.StatusOK},
	}
	for _, tt := range tests {
		resp, body, err := rawExchange(t, addr, tt.head, nil)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if resp.StatusCode != tt.want {
			t.Errorf("%s: status %d, want %d: %.200s", tt.name, resp.StatusCode, tt.want, body)
		}
		resp, body, err = rawExchange(t, addr, "GET /__admin/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("health after %s: %v %v %s", tt.name, resp, err, body)
		}
	}
}
