package resourcedir

// Tests of the fifth reliability round's library items: request bytes held
// by faults, one body parse per request, namespace activity and removal,
// HTTP/2 refusals, health probes of absent namespaces, refused origins and
// messages.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFaultHeadersTypeNamesTheHeader: a number as a header's value names
// the header and says that values are strings.
func TestFaultHeadersTypeNamesTheHeader(t *testing.T) {
	c := startServer(t, Config{}, nil)
	r := c.expect(400, "POST", "/__admin/faults", `{"Path": "/api/v2/resource", "Status": 503, "Headers": {"Retry-After": 2}}`)
	e := checkErrorShape(t, "Headers", r.Header, r.Body)
	msgs := strings.Join(e.ModelState["Headers"], " ")
	if !strings.Contains(msgs, `"Retry-After"`) || !strings.Contains(msgs, "strings") {
		t.Errorf("ModelState.Headers %q does not name Retry-After and say that values are strings", msgs)
	}
}

// TestFilterDoubleQuotesSaySingle: a value in double quotes is told that
// values are in single quotes, in both dialects.
func TestFilterDoubleQuotesSaySingle(t *testing.T) {
	for _, d := range []filterDialect{dialectAssetic, dialectKendo} {
		_, err := parseFilter(`Surname~eq~"Ada"`, d)
		var fe *filterError
		if !errors.As(err, &fe) {
			t.Fatalf("%s: %v, want a *filterError", d, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "single quotes") || !strings.Contains(msg, "'Ada'") {
			t.Errorf("%s: %q does not say that values are in single quotes ('Ada')", d, msg)
		}
	}
}

// bigCreate is a create body of about n bytes, with Company Acme.
func bigCreate(n int) string {
	doc := `{"FirstName":"Ada","Surname":"Lovelace","Company":"Acme","Email":"` + strings.Repeat("a", n) + `@example.com"}`
	return doc
}

// TestFaultReadAheadHoldsRequestBytes: what a delay or a Match.Body fault
// reads of a body counts against -max-request-bytes, as the handler's
// reading does: past the total the request is the documented 503, with
// Retry-After, journaled; within it, the bytes are counted once and given
// back after the answer.
func TestFaultReadAheadHoldsRequestBytes(t *testing.T) {
	const total = 10 << 10
	for _, tt := range []struct{ name, fault string }{
		{"delay", `{"Method": "POST", "Path": "/api/v2/resource", "Status": 500, "DelayMs": 1}`},
		{"hang", `{"Method": "POST", "Path": "/api/v2/resource", "Kind": "hang", "DelayMs": 1}`},
		{"match body", `{"Method": "POST", "Path": "/api/v2/resource", "Status": 500, "Match": {"Body": {"Company": "Acme"}}}`},
		{"match text", `{"Method": "POST", "Path": "/api/v2/resource", "Status": 500, "Match": {"Body": "Acme"}}`},
	} {
		for _, how := range []string{"declared", "chunked"} {
			t.Run(tt.name+" "+how, func(t *testing.T) {
				c := startServer(t, Config{MaxRequestBytes: total}, nil)
				c.addFault(tt.fault)
				var rd io.Reader = strings.NewReader(bigCreate(2 * total))
				if how == "chunked" {
					rd = chunked(bigCreate(2 * total))
				}
				r := c.stream("POST", "/api/v2/resource", rd)
				if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" {
					t.Fatalf("a %d-byte body past the total of %d: %d, Retry-After %q; want 503 with Retry-After 1 (%s)",
						2*total, total, r.Status, r.Header.Get("Retry-After"), r.Body)
				}
				if e := c.journal(); len(e) != 1 || e[0].Status != http.StatusServiceUnavailable {
					t.Errorf("journal %+v, want the 503", e)
				}
				eventually(t, 10*time.Second, "the bytes to be given back", func() bool { return c.srv.requestBytes.used.Load() == 0 })
			})
		}
	}
	// Within the total: counted once, not once by the fault and again by
	// the handler (6 KiB twice would pass 10 KiB).
	for _, fault := range []string{
		`{"Method": "POST", "Path": "/api/v2/resource", "DelayMs": 1}`,
		`{"Method": "POST", "Path": "/api/v2/resource", "Status": 500, "Match": {"Body": {"Company": "Other"}}}`,
	} {
		c := startServer(t, Config{MaxRequestBytes: total}, nil)
		c.addFault(fault)
		if r := c.do("POST", "/api/v2/resource", bigCreate(6<<10)); r.Status/100 != 2 {
			t.Errorf("%s: a 6 KiB create within the total of 10 KiB: %d %s, want it created", fault, r.Status, r.Body)
		}
		eventually(t, 10*time.Second, "the bytes to be given back", func() bool { return c.srv.requestBytes.used.Load() == 0 })
	}
}

// TestFaultBodyParsedOncePerRequest: however many faults match on body
// properties, a request's body is parsed once, outside the fault list's
// lock (100 such faults held every request 5 s).
func TestFaultBodyParsedOncePerRequest(t *testing.T) {
	c := startServer(t, Config{}, nil)
	for i := range 5 {
		c.addFault(fmt.Sprintf(`{"Method": "POST", "Path": "/api/v2/resource", "Status": 500, "Match": {"Body": {"Company": "Other%d"}}}`, i))
	}
	c.addFault(`{"Method": "POST", "Path": "/api/v2/resource", "Status": 418, "Match": {"Body": {"company": "Acme", "FirstName": "Ada"}}}`)
	faults := &c.srv.defaultNS().faults
	var parses, locked atomic.Int32
	bodyParseHook = func() {
		parses.Add(1)
		if !faults.mu.TryLock() {
			locked.Add(1) // nothing else runs here: the caller holds it
			return
		}
		faults.mu.Unlock()
	}
	t.Cleanup(func() { bodyParseHook = nil })
	if r := c.do("POST", "/api/v2/resource", bigCreate(10)); r.Status != 418 {
		t.Fatalf("the sixth fault's match: %d %s, want 418", r.Status, r.Body)
	}
	if r := c.do("POST", "/api/v2/resource", `{"Company": "None"}`); r.Status/100 != 2 {
		t.Fatalf("no fault's match: %d %s, want it created", r.Status, r.Body)
	}
	if n, l := parses.Load(), locked.Load(); n != 2 || l != 0 {
		t.Errorf("two requests against 6 body faults: %d parses, %d under the faults' lock; want 2 and 0", n, l)
	}
}

// nsListed is a namespace as GET /__admin/namespaces lists it.
type nsListed struct {
	Name         string
	Resources    int
	LastRequest  *time.Time
	LastActivity *time.Time
}

// namespaceList is GET /__admin/namespaces, by name.
func namespaceList(c *testClient) map[string]nsListed {
	c.t.Helper()
	var out struct{ Namespaces []nsListed }
	c.getJSON("/__admin/namespaces", &out)
	m := map[string]nsListed{}
	for _, e := range out.Namespaces {
		m[e.Name] = e
	}
	return m
}

// TestNamespaceNotRemovedUnderItsRequest: a reaper's pass that runs right
// after a request has found its namespace does not remove it: the request
// counts in flight from the moment it finds it, and its create lands in a
// namespace that still exists.
func TestNamespaceNotRemovedUnderItsRequest(t *testing.T) {
	c := startServer(t, Config{NamespaceIdle: time.Hour}, nil)
	ns := c.in("reaped")
	ns.createPerson("Ada")
	var passes atomic.Int32
	afterLookupHook = func() {
		passes.Add(1)
		c.srv.removeIdleNamespaces(time.Now().Add(time.Hour)) // everything idle is older than that
	}
	r := ns.do("POST", "/api/v2/resource", `{"FirstName": "Grace", "Surname": "Hopper"}`)
	afterLookupHook = nil
	if r.Status/100 != 2 || passes.Load() != 1 {
		t.Fatalf("create: %d %s (%d reaper passes), want it created after one pass", r.Status, r.Body, passes.Load())
	}
	if got, ok := namespaceList(c)["reaped"]; !ok || got.Resources != 2 {
		t.Errorf("after a reaper's pass under a create, the namespace is %+v (listed: %v), want it kept with 2 resources", got, ok)
	}
}

// TestConsoleIsActivity: a person using the console keeps a namespace from
// -namespace-idle: a console request is activity (LastActivity) and counts
// in flight, though it is still no client's (LastRequest, the journal); a
// console read of a namespace that does not exist creates nothing.
func TestConsoleIsActivity(t *testing.T) {
	c := startServer(t, Config{NamespaceIdle: time.Hour}, nil)
	ns := c.in("watched")
	ns.touch()
	before := namespaceList(c)["watched"]
	cutoff := time.Now()
	for !time.Now().After(cutoff) {
	}
	ns.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", consoleHeader, "1")
	c.srv.removeIdleNamespaces(cutoff.Add(time.Nanosecond))
	after, ok := namespaceList(c)["watched"]
	switch {
	case !ok:
		t.Fatalf("the namespace the console used since the cutoff was removed as idle")
	case after.LastActivity == nil || !after.LastActivity.After(cutoff):
		t.Errorf("LastActivity %v, want after the console's request (%v)", after.LastActivity, cutoff)
	case before.LastRequest == nil || after.LastRequest == nil || !after.LastRequest.Equal(*before.LastRequest):
		t.Errorf("the console's request moved LastRequest: %v, was %v", after.LastRequest, before.LastRequest)
	}
	if n := len(ns.journal()); n != 1 {
		t.Errorf("journal holds %d entries, want the client's one (not the console's)", n)
	}
	// In flight: a reaper's pass under a console request leaves it.
	afterLookupHook = func() { c.srv.removeIdleNamespaces(time.Now().Add(time.Hour)) }
	ns.expect(http.StatusOK, http.MethodGet, "/__admin/faults", "", consoleHeader, "1")
	afterLookupHook = nil
	if _, ok := namespaceList(c)["watched"]; !ok {
		t.Errorf("a reaper's pass under a console request removed the namespace")
	}
	// A console read of a namespace that does not exist creates nothing.
	ghost := c.in("ghost")
	for _, path := range []string{"/api/v2/resource", "/__admin/requests", "/__admin/faults"} {
		ghost.expect(http.StatusOK, http.MethodGet, path, "", consoleHeader, "1")
	}
	if _, ok := namespaceList(c)["ghost"]; ok {
		t.Errorf("a console read created the namespace it read")
	}
}

// TestHealthOfAbsentNamespace: GET and HEAD of …/ns/NAME/__admin/health of
// a namespace that does not exist answer as a fresh one would, create
// nothing, are never a 429 (even at -max-namespaces) and are no activity.
func TestHealthOfAbsentNamespace(t *testing.T) {
	c := startServer(t, Config{MaxNamespaces: 2}, nil)
	c.in("full").touch() // default and full: the limit
	var h struct {
		Status    string
		Resources int
	}
	c.in("absent").getJSON("/__admin/health", &h)
	if h.Status != "ok" || h.Resources != 0 {
		t.Errorf("health of an absent namespace: %+v, want ok with 0 resources", h)
	}
	c.in("absent").expect(http.StatusOK, http.MethodHead, "/__admin/health", "")
	if got := namespaceList(c); len(got) != 2 {
		t.Errorf("namespaces after probes of an absent one: %v, want default and full", got)
	}
	// No activity: a probe does not move LastActivity.
	before := namespaceList(c)["full"]
	c.in("full").health()
	if after := namespaceList(c)["full"]; before.LastActivity == nil || after.LastActivity == nil || !after.LastActivity.Equal(*before.LastActivity) {
		t.Errorf("a health probe moved LastActivity: %v, was %v", after.LastActivity, before.LastActivity)
	}
}

// TestHTTP2RefusalKeepsTheConnection: over HTTP/2 a 413 or a 503 for
// request bytes refuses that stream only: "Connection: close" made Go
// close the whole connection (GOAWAY), failing every other stream on it.
// Over HTTP/1.1 the connection is still closed after them.
func TestHTTP2RefusalKeepsTheConnection(t *testing.T) {
	srv := newServer(Config{MaxBody: 16 << 10, MaxRequestBytes: 4 << 10}, newStore(nil), nil)
	ts := httptest.NewUnstartedServer(srv)
	ts.EnableHTTP2 = true
	var conns atomic.Int32
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	client := ts.Client()
	for _, tt := range []struct {
		name   string
		size   int
		status int
	}{
		{"over -max-body", 32 << 10, http.StatusRequestEntityTooLarge},
		{"over -max-request-bytes", 8 << 10, http.StatusServiceUnavailable},
		{"within both", 1 << 10, http.StatusOK},
		{"over -max-body again", 32 << 10, http.StatusRequestEntityTooLarge},
		{"within both again", 1 << 10, http.StatusOK},
	} {
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/api/v2/resource", strings.NewReader(bigCreate(tt.size)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		io.Copy(io.Discard, resp.Body) //nolint:errcheck // the status is what counts
		resp.Body.Close()
		if resp.ProtoMajor != 2 || resp.StatusCode/100 != tt.status/100 || resp.StatusCode != tt.status && tt.status != http.StatusOK {
			t.Errorf("%s: %s %d, want HTTP/2 %d", tt.name, resp.Proto, resp.StatusCode, tt.status)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 5 requests over HTTP/2, want 1: a refusal closed the connection", n)
	}
	// HTTP/1.1 still closes after a refusal, so that the body's unread
	// rest is not read as the next request.
	h1 := httptest.NewServer(srv)
	t.Cleanup(h1.Close)
	resp, err := http.Post(h1.URL+"/api/v2/resource", "application/json", strings.NewReader(bigCreate(32<<10)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Errorf("HTTP/1.1 413: %d, closed %v; want 413 and the connection closed", resp.StatusCode, resp.Close)
	}
}

// TestRefusedOriginIsLoggedAndJournaled: a page whose origin is refused
// cannot see the 403 (no CORS headers), so the server says why where a
// person looks: a warning naming the origin and the -cors value that
// admits it, and a journal entry (403) in the namespace it was for, when
// that namespace exists (none is created).
func TestRefusedOriginIsLoggedAndJournaled(t *testing.T) {
	log := &syncBuffer{}
	srv := newServer(Config{CORSOrigins: []string{"http://good.test"}}, newStore(nil), slog.New(slog.NewTextHandler(log, nil)))
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c := &testClient{t: t, srv: srv, ts: ts, base: ts.URL, client: ts.Client()}
	app := c.in("app")
	app.touch()
	app.expect(http.StatusForbidden, http.MethodPost, "/api/v2/resource", `{"FirstName": "Eve"}`, "Origin", "http://evil.test")
	if e := app.journal(); len(e) != 2 || e[1].Status != http.StatusForbidden || e[1].Method != http.MethodPost {
		t.Errorf("journal %+v, want the list and the refused POST (403)", e)
	}
	out := log.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "origin=http://evil.test") ||
		!strings.Contains(out, "-cors http://good.test,http://evil.test") {
		t.Errorf("log does not warn of the refused origin with the -cors value that admits it:\n%s", out)
	}
	c.in("absent").expect(http.StatusForbidden, http.MethodPost, "/api/v2/resource", `{"FirstName": "Eve"}`, "Origin", "http://evil.test")
	if _, ok := namespaceList(c)["absent"]; ok {
		t.Errorf("a refused origin created the namespace it was for")
	}
}

// TestFaultReadAheadBodyHeldOnce: a body that a fault has read ahead is the
// handler's body: its 413 is the 413 it would be without the fault, not a
// 503 for holding the body twice (1,001 bytes read ahead, then 1,001 more
// read again through the read-ahead, past 1,500).
func TestFaultReadAheadBodyHeldOnce(t *testing.T) {
	big := `{"Company":"` + strings.Repeat("x", 1200) + `"}`
	for _, fault := range []string{
		"",
		`{"Method": "POST", "Path": "/api/v2/resource", "Status": 500, "Match": {"Body": {"Company": "X"}}}`,
		`{"Method": "POST", "Path": "/api/v2/resource", "DelayMs": 1}`,
	} {
		c := startServer(t, Config{MaxBody: 1000, MaxRequestBytes: 1500}, nil)
		if fault != "" {
			c.addFault(fault)
		}
		r := c.stream("POST", "/api/v2/resource", chunked(big))
		if r.Status != http.StatusRequestEntityTooLarge {
			t.Errorf("fault %q: a chunked %d-byte create over the limit of 1000: %d %s, want the 413", fault, len(big), r.Status, r.Body)
		}
		eventually(t, 10*time.Second, "the bytes to be given back", func() bool { return c.srv.requestBytes.used.Load() == 0 })
	}
}

// shortBodyExchange sends a create that declares more bytes than it sends,
// then ends its side of the connection, and returns the answer.
func shortBodyExchange(t *testing.T, c *testClient, body string, declared int) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(c.base, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	req := fmt.Sprintf("POST /api/v2/resource HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", declared, body)
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatalf("write request: %v", err)
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatalf("close write: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer's body: %v", err)
	}
	return resp.StatusCode, string(b)
}

// TestFaultReadAheadOfCutOffBody: a body cut off before its declared
// length is the same 400 with a fault that reads it ahead as without one,
// not zeros padding it to its length (read as "data after the JSON
// object").
func TestFaultReadAheadOfCutOffBody(t *testing.T) {
	const body = `{"Company":"Acme"}`
	var want string
	for _, fault := range []string{
		"",
		`{"Method": "POST", "Path": "/api/v2/resource", "Status": 500, "Match": {"Body": {"Company": "Other"}}}`,
		`{"Method": "POST", "Path": "/api/v2/resource", "Status": 500, "Match": {"Body": "Other"}}`,
		// No zero byte was sent: a fault must not see one.
		`{"Method": "POST", "Path": "/api/v2/resource", "Status": 500, "Match": {"Body": "\u0000"}}`,
	} {
		// Not a delay fault: a client that ends its side is one that has
		// gone, whom a delay leaves unanswered (499).
		c := startServer(t, Config{}, nil)
		if fault != "" {
			c.addFault(fault)
		}
		status, got := shortBodyExchange(t, c, body, len(body)+100)
		if status != http.StatusBadRequest || !strings.Contains(got, "could not be read: unexpected EOF") {
			t.Errorf("fault %q: a body cut off %d bytes short: %d %s, want the 400 that it could not be read", fault, 100, status, got)
		}
		if fault == "" {
			want = got
		} else if got != want {
			t.Errorf("fault %q: %s, want what is answered without a fault: %s", fault, got, want)
		}
		eventually(t, 10*time.Second, "the bytes to be given back", func() bool { return c.srv.requestBytes.used.Load() == 0 })
	}
}

// TestReadHeldCutOff: a declared body cut off short is read as the bytes
// that arrived, with the error, not padded with zeros to its length.
func TestReadHeldCutOff(t *testing.T) {
	x := &exchange{srv: &Server{requestBytes: requestBytes{limit: 1 << 20}}}
	got, err := readHeld(x, strings.NewReader("abc"), 10, 11)
	if string(got) != "abc" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("readHeld of 3 bytes declared as 10: %q, %v; want \"abc\", unexpected EOF", got, err)
	}
}

// TestFaultNotSpentOnRefusedRequest: a request refused with the 503 for
// request bytes is not faulted, and does not use up the firing of a delay
// fault, which fires on the next request: whether the body is within
// -max-body (read ahead before the fault is taken) or over it (read ahead
// for the delay only, before the handler's 413).
func TestFaultNotSpentOnRefusedRequest(t *testing.T) {
	for _, size := range []struct {
		cfg   Config
		first int
	}{
		{Config{MaxRequestBytes: 10 << 10}, 20 << 10},
		{Config{MaxBody: 1000, MaxRequestBytes: 500}, 2000},
	} {
		for _, fault := range []string{
			`{"Method": "POST", "Path": "/api/v2/resource", "DelayMs": 1, "Times": 1}`,
			`{"Method": "POST", "Path": "/api/v2/resource", "Status": 502, "DelayMs": 1, "Times": 1}`,
			`{"Method": "POST", "Path": "/api/v2/resource", "Kind": "hang", "DelayMs": 1, "Times": 1}`,
		} {
			t.Run(fmt.Sprintf("%d bytes %s", size.first, fault), func(t *testing.T) {
				notSpentOnRefusal(t, size.cfg, size.first, fault)
			})
		}
	}
}

// notSpentOnRefusal is TestFaultNotSpentOnRefusedRequest for one body size and fault.
func notSpentOnRefusal(t *testing.T, cfg Config, first int, fault string) {
	c := startServer(t, cfg, nil)
	id := c.addFault(fault)[0].ID
	if r := c.do("POST", "/api/v2/resource", bigCreate(first)); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("%s: a %d-byte create past the total of %d: %d %s, want the 503", fault, first, cfg.MaxRequestBytes, r.Status, r.Body)
	}
	if f := c.faults(); f[0].Fired != 0 {
		t.Errorf("%s: Fired %d after a refused request, want 0", fault, f[0].Fired)
	}
	second := bigCreate(10)
	if strings.Contains(fault, "hang") {
		rawConnExchange(t, c.base, rawPost("/api/v2/resource", second)) //nolint:errcheck // a hang ends in a close
	} else {
		c.do("POST", "/api/v2/resource", second)
	}
	if f := c.faults(); f[0].Fired != 1 {
		t.Errorf("%s: Fired %d after the next request, want 1", fault, f[0].Fired)
	}
	e := journalOf(c, 2)
	if e[0].Fault != nil || e[0].Status != http.StatusServiceUnavailable {
		t.Errorf("%s: the refused request's entry: status %d, fault %v; want 503 and no fault", fault, e[0].Status, e[0].Fault)
	}
	if e[1].Fault == nil || *e[1].Fault != id {
		t.Errorf("%s: the next request's entry shows fault %v, want %d", fault, e[1].Fault, id)
	}
}
