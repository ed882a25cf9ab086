package main

// Tests of journal.go: what GET /__admin/requests records and how the ring
// stays bounded.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestJournalEntryFields(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	before := time.Now()
	created := e.expect(http.StatusOK, http.MethodPost, "/api/v2/resource", "{\n  \"FirstName\": \"Ada\",\n  \"Surname\": \"Lovelace\"\n}")
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
		{created, "POST", "/api/v2/resource", "", `{"FirstName":"Ada","Surname":"Lovelace"}`, 200},
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
	srv := NewServer(cfg, NewStore(nil), nil)
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
		srv.defaultNS().journal.mu.Lock()
		kept, ring := srv.defaultNS().journal.count, len(srv.defaultNS().journal.ring)
		srv.defaultNS().journal.mu.Unlock()
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
	cfg.JournalSize = 0
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
