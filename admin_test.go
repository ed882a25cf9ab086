package main

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
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAdminHealthCounts(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	r := e.expect(http.StatusOK, http.MethodGet, "/__admin/health", "")
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id on an admin response")
	}
	if string(r.Body) != `{"Status":"ok","Resources":0}` {
		t.Errorf("health body %s", r.Body)
	}
	e.createPerson("Ada")
	e.createPerson("Grace")
	if n := e.health(); n != 2 {
		t.Errorf("health Resources %d after 2 creates, want 2", n)
	}
	e.seed(`[{"Company":"Acme"}]`)
	if n := e.health(); n != 3 {
		t.Errorf("health Resources %d after a seed of 1, want 3", n)
	}
	e.expect(http.StatusOK, http.MethodHead, "/__admin/health", "")
}

func TestSeedThenFilterBySeededID(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	const given = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
	want := strings.ToLower(given)
	data := e.seed(`[
		{"Id": "` + given + `", "FirstName": "Ada", "Surname": "Lovelace", "Status": "inactive",
		 "Types": [{"Type": "employee"}, {"Type": "Team"}], "ExternalID": "EXT-1", "Address": {"City": "London"}},
		{"Company": "Analytical Engines", "StatusId": 7, "Id": null},
		{"FirstName": "Grace"}
	]`)
	if len(data) != 3 {
		t.Fatalf("seed returned %d resources, want 3", len(data))
	}
	if data[0].Id != want {
		t.Errorf("seeded Id %q, want %q (canonical lower case)", data[0].Id, want)
	}
	if data[0].DisplayName != "Ada Lovelace" || data[0].Status != "Inactive" || data[0].StatusId != 2 {
		t.Errorf("create rules not applied to the seed: %+v", data[0])
	}
	if len(data[0].Types) != 2 || data[0].Types[0].Id != 16 || data[0].Types[0].Type != "Employee" || data[0].Types[1].Id != 2 {
		t.Errorf("Types %+v", data[0].Types)
	}
	if string(data[0].Address) != `{"City":"London"}` {
		t.Errorf("Address %s", data[0].Address)
	}
	for _, r := range data[1:] {
		if !guidV4.MatchString(r.Id) {
			t.Errorf("generated Id %q is not a lower-case v4 GUID", r.Id)
		}
	}
	if data[1].StatusId != 1 || data[1].DisplayName != "Analytical Engines" {
		t.Errorf("second item %+v", data[1])
	}

	for _, filter := range []string{want, given} {
		var list struct {
			TotalResults int
			ResourceList []seededResource
		}
		e.getJSON("/api/v2/resource?requestParams.filters="+urlQueryEscape("Id~eq~'"+filter+"'"), &list)
		if list.TotalResults != 1 || len(list.ResourceList) != 1 || list.ResourceList[0].Id != want {
			t.Errorf("filter by seeded Id %s: %+v", filter, list)
		}
	}

	all := e.all()
	if len(all) != 3 || all[0].Id != want || all[1].Id != data[1].Id || all[2].Id != data[2].Id {
		t.Errorf("GET /__admin/resources is not every resource in creation order: %+v", all)
	}
	r := e.expect(http.StatusOK, http.MethodGet, "/__admin/resources", "")
	if bytes.Contains(r.Body, []byte("_links")) {
		t.Errorf("admin resources carry _links: %s", r.Body)
	}

	// A created resource comes after the seeded ones.
	created := e.createPerson("Alan")
	all = e.all()
	if len(all) != 4 || all[3].Id != created.Id {
		t.Errorf("created resource not last: %+v", all)
	}
}

func urlQueryEscape(s string) string {
	return strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", " ", "%20", "#", "%23", "'", "%27", "~", "%7E").Replace(s)
}

func TestSeedDuplicateIDWithinArray(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	const id = "0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c"
	r := e.expect(http.StatusBadRequest, http.MethodPost, "/__admin/resources", `[
		{"Id": "`+id+`", "Company": "A"},
		{"Company": "B"},
		{"Id": "`+strings.ToUpper(id)+`", "Company": "C"}
	]`)
	ae := r.wantError(t, 0, "", anyModelState)
	msgs := ae.ModelState["[2].Id"]
	if len(msgs) != 1 || !strings.Contains(msgs[0], id) || !strings.Contains(msgs[0], "item 0") {
		t.Errorf("ModelState %v, want [2].Id naming %s and item 0", ae.ModelState, id)
	}
	if !strings.Contains(ae.Message, "nothing was seeded") {
		t.Errorf("Message %q should say nothing was seeded", ae.Message)
	}
	if n := e.health(); n != 0 {
		t.Errorf("%d resources after a refused seed, want 0", n)
	}
}

func TestSeedDuplicateIDAgainstExisting(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	const id = "0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c"
	e.seed(`[{"Id": "` + id + `", "Company": "A"}]`)
	r := e.expect(http.StatusBadRequest, http.MethodPost, "/__admin/resources", `[
		{"Company": "B"},
		{"Id": "`+strings.ToUpper(id)+`", "Company": "C"},
		{"Company": "D"}
	]`)
	ae := r.wantError(t, 0, "", anyModelState)
	msgs := ae.ModelState["[1].Id"]
	if len(msgs) != 1 || !strings.Contains(msgs[0], id) || !strings.Contains(msgs[0], "nothing was seeded") {
		t.Errorf("ModelState %v, want [1].Id naming %s", ae.ModelState, id)
	}
	if n := e.health(); n != 1 {
		t.Errorf("%d resources after a refused seed, want the 1 already there", n)
	}
	// A generated Id can never collide with a given one either.
	e.createPerson("After")
	if n := e.health(); n != 2 {
		t.Errorf("%d resources, want 2", n)
	}
}

func TestSeedPerItemErrorsNameIndexAndField(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	e.seed(`[{"Company": "Existing"}]`)
	long := strings.Repeat("x", 51)
	r := e.expect(http.StatusBadRequest, http.MethodPost, "/__admin/resources", `[
		{"FirstName": "Ok"},
		{"FirstName": "`+long+`", "Company": "Acme"},
		{"FirstName": "Bob", "Status": "Retired", "Types": [{"Type": "Alien"}]},
		"not an object",
		{"Id": "not-a-guid", "Company": "Acme"},
		{"Surname": 42},
		{}
	]`)
	ae := r.wantError(t, 0, "", anyModelState)
	for _, key := range []string{"[1].FirstName", "[2].Status", "[2].Types[0].Type", "[3]", "[4].Id", "[5].Surname", "[6].Company"} {
		if len(ae.ModelState[key]) == 0 {
			t.Errorf("ModelState lacks %s: %v", key, ae.ModelState)
		}
	}
	for key := range ae.ModelState {
		if strings.HasPrefix(key, "[0]") {
			t.Errorf("valid item 0 reported: %s %v", key, ae.ModelState[key])
		}
	}
	if !strings.Contains(strings.Join(ae.ModelState["[1].FirstName"], " "), "51") {
		t.Errorf("[1].FirstName message should give the length: %v", ae.ModelState["[1].FirstName"])
	}
	if n := e.health(); n != 1 {
		t.Errorf("%d resources after a refused seed, want 1", n)
	}
}

func TestSeedBodyNotAnArray(t *testing.T) {
	e := startServer(t, Config{MaxPageSize: 500, MaxBody: 1 << 20, MaxSeedBody: 100, JournalSize: 10}, nil)
	for _, body := range []string{`{"Company": "A"}`, `null`, `"x"`, `[{"Company": "A"}`, `[{"Company": "A"}] x`, ``} {
		r := e.do(http.MethodPost, "/__admin/resources", body)
		if r.Status != http.StatusBadRequest {
			t.Errorf("seed body %q: status %d, want 400; %s", body, r.Status, r.Body)
			continue
		}
		r.wantError(t, 0, "", anyModelState)
	}
	// An empty array is a valid, empty seed.
	if got := e.seed(`[]`); len(got) != 0 {
		t.Errorf("empty seed returned %v", got)
	}
	big := `[` + strings.Repeat(`{"Company":"A"},`, 20) + `{"Company":"A"}]`
	e.expect(http.StatusRequestEntityTooLarge, http.MethodPost, "/__admin/resources", big).wantError(t, 0, "", anyModelState)
	if n := e.health(); n != 0 {
		t.Errorf("%d resources, want 0", n)
	}
}

func TestAdminDeleteResources(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	e.seed(`[{"Company": "A"}, {"Company": "B"}]`)
	r := e.expect(http.StatusOK, http.MethodDelete, "/__admin/resources", "")
	if string(r.Body) != `{"Deleted":2}` {
		t.Errorf("DELETE body %s", r.Body)
	}
	if n := e.health(); n != 0 {
		t.Errorf("%d resources after DELETE, want 0", n)
	}
	all := e.all()
	if all == nil || len(all) != 0 {
		t.Errorf("GET /__admin/resources after DELETE: %v, want []", all)
	}
	r = e.expect(http.StatusOK, http.MethodGet, "/__admin/resources", "")
	if string(r.Body) != `{"Data":[],"Total":0}` {
		t.Errorf("empty resources body %s, want no Data", r.Body)
	}
}

func TestAdminMethodNotAllowed(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	tests := []struct {
		path, method, allow string
	}{
		{"/__admin/health", http.MethodPost, "GET, HEAD"},
		{"/__admin/resources", http.MethodPut, "DELETE, GET, HEAD, POST"},
		{"/__admin/requests", http.MethodPost, "DELETE, GET, HEAD"},
		{"/__admin/faults", http.MethodPatch, "DELETE, GET, HEAD, POST"},
		{"/__admin/snapshot", http.MethodGet, "POST"},
		{"/__admin/reset", http.MethodGet, "POST"},
		{"/__admin/reset", http.MethodDelete, "POST"},
	}
	for _, tt := range tests {
		r := e.do(tt.method, tt.path, "")
		if r.Status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: status %d, want 405", tt.method, tt.path, r.Status)
			continue
		}
		if got := r.Header.Get("Allow"); got != tt.allow {
			t.Errorf("%s %s: Allow %q, want %q", tt.method, tt.path, got, tt.allow)
		}
		if ae := r.wantError(t, 0, "", anyModelState); !strings.Contains(ae.Message, tt.method) {
			t.Errorf("%s %s: Message %q does not name the method", tt.method, tt.path, ae.Message)
		}
	}
	e.expect(http.StatusNotFound, http.MethodGet, "/__admin/nope", "").wantError(t, 0, "", anyModelState)
}

func TestJournalEntryFields(t *testing.T) {
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

// TestJournalEarly413DoesNotWait: a body declared over the limit is refused
// from its Content-Length at once, though the client has sent none of it.
func TestJournalEarly413DoesNotWait(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	pr, pw := io.Pipe()
	defer pw.Close()
	req, err := http.NewRequest(http.MethodPost, e.ts.URL+"/api/v2/resource", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = DefaultConfig().MaxBody + 1
	// A client that waits for 100 Continue gets its 413 at once; others
	// have their body read and thrown away first (TestOversizedBodyIs413).
	req.Header.Set("Expect", "100-continue")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := e.ts.Client().Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("no answer while the body is held back: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", resp.StatusCode)
	}
	got := e.journal()
	if len(got) != 1 || got[0].Status != 413 || !got[0].BodyTruncated {
		t.Errorf("journal %+v, want one 413 with BodyTruncated", got)
	}
}

func TestJournalUnreadBodyIsCaptured(t *testing.T) {
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

// TestJournalPanicIs500 checks that a request whose handler panics is
// journaled with the 500 the client gets, not 200.
func TestJournalPanicIs500(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	e.srv.mux.HandleFunc("GET /api/v2/boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	r := e.expect(http.StatusInternalServerError, http.MethodGet, "/api/v2/boom", "")
	ae := r.wantError(t, 0, "", anyModelState)
	if !strings.Contains(ae.Message, r.Header.Get("X-Request-Id")) {
		t.Errorf("500 Message %q does not give the request id", ae.Message)
	}
	got := e.journal()
	if len(got) != 1 || got[0].Status != http.StatusInternalServerError {
		t.Errorf("journal of a panic: %+v, want status 500", got)
	}
}

func TestFaultFiresExactlyNTimes(t *testing.T) {
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

func TestAdminSnapshot(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	r := e.expect(http.StatusConflict, http.MethodPost, "/__admin/snapshot", "")
	if ae := r.wantError(t, 0, "", anyModelState); !strings.Contains(ae.Message, "-snapshot") {
		t.Errorf("409 Message %q should say how snapshots are turned on", ae.Message)
	}

	path := filepath.Join(t.TempDir(), "dir.gob")
	e.srv.snap = newSnapshotter(path, e.srv, slog.New(slog.DiscardHandler))
	e.seed(`[{"Company": "A"}, {"Company": "B"}]`)
	var out struct {
		Path       string
		Resources  int
		Bytes      int64
		DurationMs float64
	}
	e.expect(http.StatusOK, http.MethodPost, "/__admin/snapshot", "").decode(t, &out)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if out.Path != path || out.Resources != 2 || out.Bytes != info.Size() || out.Bytes == 0 || out.DurationMs < 0 {
		t.Errorf("snapshot answer %+v; file %d bytes", out, info.Size())
	}
	loaded, err := readSnapshotFile(path)
	if err != nil || len(loaded) != 2 {
		t.Errorf("reading the snapshot back: %d resources, %v", len(loaded), err)
	}

	// A snapshot that cannot be written is a 500 that says why.
	e.srv.snap = newSnapshotter(filepath.Join(t.TempDir(), "missing", "dir.gob"), e.srv, slog.New(slog.DiscardHandler))
	r = e.expect(http.StatusInternalServerError, http.MethodPost, "/__admin/snapshot", "")
	if ae := r.wantError(t, 0, "", anyModelState); !strings.Contains(ae.Message, "snapshot") {
		t.Errorf("500 Message %q", ae.Message)
	}
}

func TestAdminReset(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	e.seed(`[{"Company": "A"}, {"Company": "B"}]`)
	e.createPerson("Ada")
	e.addFault(`{"Path": "/api/v2/resource", "Status": 503}`)
	e.expect(http.StatusServiceUnavailable, http.MethodGet, "/api/v2/resource", "")
	if len(e.journal()) == 0 || len(e.faults()) == 0 {
		t.Fatal("nothing to reset")
	}
	r := e.expect(http.StatusOK, http.MethodPost, "/__admin/reset", "")
	if string(r.Body) != `{"Status":"reset","Resources":0}` {
		t.Errorf("reset body %s", r.Body)
	}
	if n := e.health(); n != 0 {
		t.Errorf("%d resources after reset", n)
	}
	if j := e.journal(); len(j) != 0 {
		t.Errorf("journal after reset: %+v", j)
	}
	if f := e.faults(); len(f) != 0 {
		t.Errorf("faults after reset: %+v", f)
	}
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
}

func TestAdminIDSeedRestartsAfterReset(t *testing.T) {
	seed := uint64(42)
	ids := func(e *testClient) []string {
		var out []string
		for _, r := range e.seed(`[{"Company": "A"}, {"Id": "0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c", "Company": "B"}, {"Company": "C"}]`) {
			out = append(out, r.Id)
		}
		out = append(out, e.createPerson("D").Id, e.createPerson("E").Id)
		return out
	}
	a := startServer(t, DefaultConfig(), &seed)
	first := ids(a)
	for _, id := range first {
		if !guidV4.MatchString(id) {
			t.Errorf("Id %q is not a lower-case v4 GUID", id)
		}
	}
	b := startServer(t, DefaultConfig(), &seed)
	if second := ids(b); !slices.Equal(first, second) {
		t.Errorf("same seed, different ids:\n%v\n%v", first, second)
	}
	for _, restart := range []string{"/__admin/reset", "/__admin/resources"} {
		method := http.MethodPost
		if restart == "/__admin/resources" {
			method = http.MethodDelete
		}
		a.expect(http.StatusOK, method, restart, "")
		if again := ids(a); !slices.Equal(first, again) {
			t.Errorf("after %s %s the ids do not restart:\n%v\n%v", method, restart, first, again)
		}
	}
	other := uint64(43)
	if third := ids(startServer(t, DefaultConfig(), &other)); slices.Equal(first, third) {
		t.Errorf("seeds 42 and 43 gave the same ids %v", third)
	}
	if random := ids(startServer(t, DefaultConfig(), nil)); slices.Equal(first, random) {
		t.Errorf("no seed gave the seeded ids %v", random)
	}
}

func TestAuthRequired(t *testing.T) {
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
	// Refused requests are not journaled; accepted ones are.
	var jr struct{ Requests []wireEntry }
	e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "", auth...).decode(t, &jr)
	if len(jr.Requests) != 2 {
		t.Errorf("journal has %d entries, want the 2 authenticated /api/v2 requests", len(jr.Requests))
	}
}

func TestAuthOffByDefault(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	r := e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	if r.Header.Get("WWW-Authenticate") != "" {
		t.Error("WWW-Authenticate without -auth")
	}
	// Credentials sent anyway are ignored.
	e.expect(http.StatusOK, http.MethodGet, "/__admin/health", "", "Authorization", "Basic eDp5")
}

func TestCORSOffByDefault(t *testing.T) {
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

// Shutdown waits for in-flight requests, so an injected delay must end when
// it begins, or Ctrl-C would hang for the length of the delay.
func TestFaultDelayEndsAtShutdown(t *testing.T) {
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

// A seed large enough to be decoded and answered in parts on several CPUs
// must come back whole and in order, as GET /__admin/resources lists it.
func TestSeedLargeKeepsOrder(t *testing.T) {
	e := startServer(t, DefaultConfig(), nil)
	var items []string
	for i := range 1500 {
		items = append(items, fmt.Sprintf(`{"Company": "Co %d", "ExternalID": "X-%d"}`, i, i))
	}
	seeded := e.seed("[" + strings.Join(items, ",") + "]")
	listed := e.all()
	if len(seeded) != 1500 || len(listed) != 1500 {
		t.Fatalf("seeded %d, listed %d, want 1500", len(seeded), len(listed))
	}
	for i := range seeded {
		if want := fmt.Sprintf("X-%d", i); seeded[i].ExternalID == nil || *seeded[i].ExternalID != want || seeded[i].Id != listed[i].Id {
			t.Fatalf("item %d: seeded %+v, listed %+v", i, seeded[i], listed[i])
		}
	}
}
