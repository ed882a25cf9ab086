package main

// Tests of faults.go: injected faults, their matching, order, delays and
// their refusal of bad specs.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFaultFiresExactlyNTimes(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	added := e.addFault(`{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Times": 2}`)
	if len(added) != 1 || added[0].ID < 1 || added[0].Method != "POST" || added[0].Status != 503 || added[0].Times != 2 || added[0].Fired != 0 {
		t.Fatalf("added %+v", added)
	}
	for i := range 2 {
		r := e.expect(http.StatusServiceUnavailable, http.MethodPost, "/api/v2/resource", `{"Company": "A"}`)
		if ae := r.wantError(t, 0, "", anyModelState); !strings.Contains(ae.Message, "Injected fault") {
			t.Errorf("firing %d: Message %q", i, ae.Message)
		}
		if r.Header.Get("X-Request-Id") == "" {
			t.Errorf("firing %d: no X-Request-Id", i)
		}
	}
	// Other methods on the path are not affected.
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	e.expect(http.StatusOK, http.MethodPost, "/api/v2/resource", `{"Company": "A"}`)
	e.expect(http.StatusOK, http.MethodPost, "/api/v2/resource", `{"Company": "B"}`)
	if n := e.health(); n != 2 {
		t.Errorf("%d resources, want 2: faulted requests must not reach the store", n)
	}
	fs := e.faults()
	if len(fs) != 1 || fs[0].Fired != 2 || fs[0].Times != 2 || fs[0].ID != added[0].ID {
		t.Errorf("GET /__admin/faults: %+v, want the fault with Fired 2", fs)
	}
	var statuses []int
	for _, g := range e.journal() {
		statuses = append(statuses, g.Status)
	}
	if !slices.Equal(statuses, []int{503, 503, 200, 200, 200}) {
		t.Errorf("journal statuses %v", statuses)
	}
}

func TestFaultUntilCleared(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	e.addFault(`{"path": "/api/v2/resource", "status": 500}`) // Times 0; names matched case-insensitively
	for range 5 {
		e.expect(http.StatusInternalServerError, http.MethodGet, "/api/v2/resource", "")
	}
	if fs := e.faults(); len(fs) != 1 || fs[0].Fired != 5 || fs[0].Times != 0 {
		t.Errorf("faults %+v", fs)
	}
	r := e.expect(http.StatusOK, http.MethodDelete, "/__admin/faults", "")
	if string(r.Body) != `{"Cleared":1}` {
		t.Errorf("DELETE /__admin/faults: %s", r.Body)
	}
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	if r := e.expect(http.StatusOK, http.MethodGet, "/__admin/faults", ""); string(r.Body) != `{"Faults":[]}` {
		t.Errorf("faults after clear: %s", r.Body)
	}
}

func TestFaultMethodMatching(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	e.addFault(`{"Path": "/api/v2/resource", "Status": 502, "Times": 2}`) // Method "": any
	e.expect(http.StatusBadGateway, http.MethodGet, "/api/v2/resource", "")
	e.expect(http.StatusBadGateway, http.MethodPost, "/api/v2/resource", `{"Company": "A"}`)
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")

	fs := e.addFault(`[{"Method": "*", "Path": "/api/v2/resource", "Status": 504, "Times": 1}, {"Method": "get", "Path": "/api/v2/resource", "Status": 429, "Times": 1}]`)
	if fs[0].Method != "" || fs[1].Method != "GET" {
		t.Errorf("methods normalised to %q and %q, want \"\" and GET", fs[0].Method, fs[1].Method)
	}
	e.expect(http.StatusGatewayTimeout, http.MethodPost, "/api/v2/resource", `{"Company": "A"}`)
	e.expect(http.StatusOK, http.MethodPost, "/api/v2/resource", `{"Company": "A"}`) // the GET-only fault waits
	e.expect(http.StatusTooManyRequests, http.MethodGet, "/api/v2/resource", "")
}

func TestFaultIDPatternMatchesPut(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	res := e.seed(`[{"FirstName": "Ada", "Surname": "Lovelace"}]`)[0]
	e.addFault(`{"Method": "PUT", "Path": "/api/v2/resource/{id}", "Status": 409, "Times": 1}`)
	// Neither the collection path nor a deeper one matches the pattern.
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	e.expect(http.StatusNotFound, http.MethodPut, "/api/v2/resource/"+res.Id+"/extra", putBody(res.Id, "FirstName", "X"))
	e.expect(http.StatusConflict, http.MethodPut, "/api/v2/resource/"+res.Id, putBody(res.Id, "FirstName", "Augusta"))
	var updated seededResource
	e.expect(http.StatusOK, http.MethodPut, "/api/v2/resource/"+strings.ToUpper(res.Id), putBody(res.Id, "FirstName", "Augusta")).decode(t, &updated)
	if updated.FirstName == nil || *updated.FirstName != "Augusta" {
		t.Errorf("update after the fault: %+v", updated)
	}
	if fs := e.faults(); fs[0].Fired != 1 {
		t.Errorf("Fired %d, want 1", fs[0].Fired)
	}
}

func TestFaultsAppliedInOrderAdded(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	first := e.addFault(`[{"Path": "/api/v2/resource", "Status": 500, "Times": 1}, {"Path": "/api/v2/resource", "Status": 502, "Times": 1}]`)
	second := e.addFault(`{"Path": "/api/v2/resource", "Status": 503, "Times": 1}`)
	if first[0].ID >= first[1].ID || first[1].ID >= second[0].ID {
		t.Errorf("fault ids not increasing: %+v %+v", first, second)
	}
	for _, want := range []int{500, 502, 503, 200} {
		e.expect(want, http.MethodGet, "/api/v2/resource", "")
	}
	fs := e.faults()
	if len(fs) != 3 || fs[0].Status != 500 || fs[1].Status != 502 || fs[2].Status != 503 {
		t.Errorf("GET /__admin/faults not in the order added: %+v", fs)
	}
}

func TestFaultDelayOnlyThenRealAnswer(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	e.addFault(`{"Method": "POST", "Path": "/api/v2/resource", "DelayMs": 150, "Times": 1}`)
	start := time.Now()
	var out struct {
		Data  []seededResource
		Total int
	}
	e.expect(http.StatusOK, http.MethodPost, "/api/v2/resource", `{"FirstName": "Slow"}`).decode(t, &out)
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Errorf("delayed request answered after %v, want at least 150ms", took)
	}
	if out.Total != 1 || out.Data[0].DisplayName != "Slow" {
		t.Errorf("delay-only fault did not serve the real answer: %+v", out)
	}
	got := e.journal()
	if len(got) != 1 || got[0].Status != 200 || got[0].DurationMs < 150 || string(got[0].Body) != `{"FirstName":"Slow"}` {
		t.Errorf("journal %+v", got)
	}

	// With a Status too, the delay comes first.
	e.addFault(`{"Path": "/api/v2/resource", "Status": 503, "DelayMs": 100, "Times": 1}`)
	start = time.Now()
	e.expect(http.StatusServiceUnavailable, http.MethodGet, "/api/v2/resource", "")
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("delayed 503 answered after %v, want at least 100ms", took)
	}
}

// TestFaultDelayCutShortByClient checks that a client giving up during an
// injected delay frees the handler at once: the journal shows 499.
func TestFaultDelayCutShortByClient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path, body string
	}{
		{"GET", http.MethodGet, "/api/v2/resource", ""},
		{"POST with a body", http.MethodPost, "/api/v2/resource", `{"FirstName": "Impatient"}`},
		{"PUT with a body", http.MethodPut, "/api/v2/resource/0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c", putBody("0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c", "FirstName", "Impatient")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startServer(t, DefaultConfig(), nil)
			e.addFault(fmt.Sprintf(`{"Method": %q, "Path": %q, "DelayMs": 10000}`, tt.method, tt.path))
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req, err := http.NewRequestWithContext(ctx, tt.method, e.ts.URL+tt.path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			start := time.Now()
			resp, err := e.ts.Client().Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("request answered %d during a 10 s delay", resp.StatusCode)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("client error %v, want its deadline", err)
			}
			var entry wireEntry
			eventually(t, 5*time.Second, "the journal entry of the abandoned request", func() bool {
				got := e.journal()
				if len(got) == 0 {
					return false
				}
				entry = got[0]
				return true
			})
			if entry.Status != statusClientClosed {
				t.Errorf("journal status %d, want %d", entry.Status, statusClientClosed)
			}
			if entry.DurationMs >= 5000 {
				t.Errorf("handler ran %v ms of a 10 s delay after the client left", entry.DurationMs)
			}
			if time.Since(start) >= 5*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
			if tt.body != "" && string(entry.Body) != string(mustCompact(t, tt.body)) {
				t.Errorf("journal body %s, want %s", entry.Body, tt.body)
			}
			if n := e.health(); n != 0 {
				t.Errorf("%d resources: the abandoned request was served", n)
			}
		})
	}
}

func mustCompact(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFaultExpectContinue checks that a faulted request whose client waits
// for 100 Continue before sending its body is answered at once, not after
// the client's wait.
func TestFaultExpectContinue(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.MaxBody = 1000
	e := startServer(t, cfg, nil)
	e.addFault(`{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Times": 1}`)
	tr := e.ts.Client().Transport.(*http.Transport).Clone()
	tr.ExpectContinueTimeout = 10 * time.Second
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	for _, tt := range []struct {
		body   string
		status int
	}{
		{`{"Company": "Faulted"}`, http.StatusServiceUnavailable},
		{`{"Company": "` + strings.Repeat("x", 2000) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		req, err := http.NewRequest(http.MethodPost, e.ts.URL+"/api/v2/resource", strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Expect", "100-continue")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
		}
		if took := time.Since(start); took >= 5*time.Second {
			t.Errorf("%d answered after %v: the server waited for a body it had refused", tt.status, took)
		}
	}
}

func TestFaultInvalidBodies(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	tests := []struct {
		body string
		keys []string // ModelState keys; none: the Message alone
	}{
		{`{"Path": "/api/v2/resource"}`, []string{"Status"}},
		{`{"Status": 503}`, []string{"Path"}},
		{`{"Path": "api/v2/resource", "Status": 503}`, []string{"Path"}},
		{`{"Path": "/__admin/reset", "Status": 503}`, []string{"Path"}},
		{`{"Path": "/api/v2/resource", "Status": 42}`, []string{"Status"}},
		{`{"Path": "/api/v2/resource", "Status": 600}`, []string{"Status"}},
		{`{"Path": "/api/v2/resource", "Status": 99}`, []string{"Status"}},
		{`{"Path": "/api/v2/resource", "Status": "503"}`, []string{"Status"}},
		{`{"Path": "/api/v2/resource", "Status": 503, "DelayMs": -1}`, []string{"DelayMs"}},
		{`{"Path": "/api/v2/resource", "DelayMs": 120001}`, []string{"DelayMs"}},
		{`{"Path": "/api/v2/resource", "Status": 503, "Times": -1}`, []string{"Times"}},
		{`{"Path": "/api/v2/resource", "Status": 503, "times": "once"}`, []string{"Times"}},
		{`{"Path": 7, "Status": 503}`, []string{"Path"}},
		{`{"Method": 1, "Path": "/api/v2/resource", "Status": 503}`, []string{"Method"}},
		{`[{"Path": "/api/v2/resource", "Status": 503}, {"Status": 503}]`, []string{"[1].Path"}},
		{`not json`, nil},
		{`{"Path": "/api/v2/resource", "Status": 503}, {"Path": "/api/v2/resource", "Status": 500}`, nil},
		{`[1]`, nil},
		{``, nil},
	}
	for _, tt := range tests {
		r := e.do(http.MethodPost, "/__admin/faults", tt.body)
		if r.Status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400; %s", tt.body, r.Status, r.Body)
			continue
		}
		ae := r.wantError(t, 0, "", anyModelState)
		var keys []string
		for k := range ae.ModelState {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, tt.keys) {
			t.Errorf("%s: ModelState %v, want keys %v", tt.body, ae.ModelState, tt.keys)
		}
	}
	if fs := e.faults(); len(fs) != 0 {
		t.Errorf("invalid bodies added faults: %+v", fs)
	}
	// An empty array adds nothing and is not an error.
	if got := e.addFault(`[]`); len(got) != 0 {
		t.Errorf("[] added %+v", got)
	}
}

// Shutdown waits for in-flight requests, so an injected delay must end when
// it begins, or Ctrl-C would hang for the length of the delay.
func TestFaultDelayEndsAtShutdown(t *testing.T) {
	t.Parallel()
	srv := NewServer(DefaultConfig(), NewStore(nil), nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpSrv := newHTTPServer(srv, slog.New(slog.DiscardHandler))
	httpSrv.RegisterOnShutdown(srv.beginShutdown)
	go httpSrv.Serve(ln)
	e := clientAt(t, "http://"+ln.Addr().String())
	e.addFault(`{"Path": "/api/v2/resource", "DelayMs": 100000}`)

	answered := make(chan response, 1)
	go func() { answered <- e.do("GET", "/api/v2/resource", "") }()
	eventually(t, 10*time.Second, "the delayed request to be in flight", func() bool {
		return e.faults()[0].Fired == 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := httpSrv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a delay pending: %v", err)
	}
	if r := <-answered; r.Status != http.StatusServiceUnavailable {
		t.Fatalf("the delayed request got %d, want 503: %s", r.Status, r.Body)
	}
}
