package resourcedir

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestServiceVersionAnswers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		config, want string
	}{
		{"", `{"Major":2026,"Minor":4,"Build":1,"Revision":1,"MajorRevision":0,"MinorRevision":1}`},
		{"2023.1.2.3", `{"Major":2023,"Minor":1,"Build":2,"Revision":3,"MajorRevision":0,"MinorRevision":3}`},
		// 0x7fff_ffff: the high and low 16 bits, read as unsigned.
		{"1.0.0.2147483647", `{"Major":1,"Minor":0,"Build":0,"Revision":2147483647,"MajorRevision":32767,"MinorRevision":65535}`},
		{"0.0.0.65536", `{"Major":0,"Minor":0,"Build":0,"Revision":65536,"MajorRevision":1,"MinorRevision":0}`},
	} {
		cfg := DefaultConfig()
		cfg.ServiceVersion = tt.config
		srv, err := New(cfg)
		if err != nil {
			t.Fatalf("New with %q: %v", tt.config, err)
		}
		rec := serve(srv, http.MethodGet, "/api/v2/version", nil)
		if rec.Code != http.StatusOK || rec.Body.String() != tt.want || rec.Header().Get("Content-Type") != jsonMediaType {
			t.Errorf("%q: %d %s %q, want 200 %s", tt.config, rec.Code, rec.Body, rec.Header().Get("Content-Type"), tt.want)
		}
		srv.Close()
	}
}

func TestServiceVersionRefused(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"2026.4.1", "2026.4.1.1.1", "2026.4.1.-1", "2026.4.1.+1", "2026.4.1.x", "2026..1.1", " 2026.4.1.1",
		"2026.4.1.2147483648", "v2026.4.1.1"} {
		_, err := New(Config{ServiceVersion: v})
		if err == nil || !strings.Contains(err.Error(), `"`+v+`"`) || !strings.Contains(err.Error(), "four non-negative integers") {
			t.Errorf("New with ServiceVersion %q: %v, want a refusal naming it", v, err)
		}
	}
}

func TestServiceVersionRoutes(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Auth = "ci:tok"
	e := startServer(t, cfg, nil).checkingEvery()
	auth := []string{"Authorization", "Basic Y2k6dG9r"}
	const want = `{"Major":2026,"Minor":4,"Build":1,"Revision":1,"MajorRevision":0,"MinorRevision":1}`
	for _, tt := range []struct {
		method, path string
		hdr          []string
		status       int
		body         string
	}{
		{http.MethodGet, "/api/v2/version", auth, 200, want},
		{http.MethodGet, "/API/V2/Version/", auth, 200, want},
		{http.MethodGet, "/ns/v1/api/v2/version", auth, 200, want},
		{http.MethodGet, "/api/v2/version?unknown=1", auth, 200, want}, // the API ignores unknown parameters
		{http.MethodHead, "/api/v2/version", auth, 200, ""},
		{http.MethodGet, "/api/v2/version", nil, 401, `{"Message":"Authentication is required: send HTTP Basic credentials (user name and API token)."}`},
		{http.MethodPost, "/api/v2/version", auth, 405, `{"Message":"The method POST is not allowed on /api/v2/version; allowed: GET, HEAD."}`},
		{http.MethodGet, "/api/v2/version/x", auth, 404, `{"Message":"No resource matches the path /api/v2/version/x."}`},
	} {
		r := e.do(tt.method, tt.path, "", tt.hdr...)
		if r.Status != tt.status || string(r.Body) != tt.body {
			t.Errorf("%s %s: %d %s, want %d %s", tt.method, tt.path, r.Status, r.Body, tt.status, tt.body)
		}
		if tt.status == 405 && r.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow %q", tt.method, tt.path, r.Header.Get("Allow"))
		}
	}
	// Journaled like every /api/v2 request, in its namespace.
	var j struct {
		Requests []struct {
			Path   string
			Status int
		}
	}
	e.expect(http.StatusOK, http.MethodGet, "/ns/v1/__admin/requests", "", auth...).decode(t, &j)
	if len(j.Requests) != 1 || j.Requests[0].Path != "/api/v2/version" || j.Requests[0].Status != 200 {
		t.Errorf("the namespace's journal: %+v", j.Requests)
	}
	// A fault may target it.
	e.expect(http.StatusOK, http.MethodPost, "/__admin/faults", `{"Path": "/API/v2/version", "Status": 503, "Times": 1}`, auth...)
	e.expect(http.StatusServiceUnavailable, http.MethodGet, "/api/v2/version", "", auth...)
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/version", "", auth...)
}

func TestCreateStatus(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		config, want int
	}{{0, 201}, {201, 201}, {200, 200}} {
		cfg := DefaultConfig()
		cfg.CreateStatus = tt.config
		srv, err := New(cfg)
		if err != nil {
			t.Fatalf("New with CreateStatus %d: %v", tt.config, err)
		}
		t.Cleanup(func() { srv.Close() })
		rec := serveBody(srv, http.MethodPost, "/api/v2/resource", `{"Company":"Acme"}`)
		var out struct {
			Data  []map[string]any
			Total int
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); rec.Code != tt.want || err != nil || out.Total != 1 || out.Data[0]["Company"] != "Acme" {
			t.Errorf("CreateStatus %d: create %d %s, want %d", tt.config, rec.Code, rec.Body, tt.want)
		}
		// The controls keep their statuses.
		if rec := serveBody(srv, http.MethodPost, "/__admin/resources", `[{"Company":"Seeded"}]`); rec.Code != 200 {
			t.Errorf("CreateStatus %d: seed %d %s", tt.config, rec.Code, rec.Body)
		}
		if rec := serve(srv, http.MethodPost, "/__admin/namespaces", nil); rec.Code != 201 {
			t.Errorf("CreateStatus %d: new namespace %d %s", tt.config, rec.Code, rec.Body)
		}
		// The document states the status in force, and only it.
		rec = serve(srv, http.MethodGet, "/__admin/openapi.json", nil)
		var doc map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"/api/v2/resource", "/ns/{namespace}/api/v2/resource"} {
			responses := doc["paths"].(map[string]any)[p].(map[string]any)["post"].(map[string]any)["responses"].(map[string]any)
			var twoXX []string
			for code := range responses {
				if strings.HasPrefix(code, "2") {
					twoXX = append(twoXX, code)
				}
			}
			if want := []string{strconv.Itoa(tt.want)}; !slices.Equal(twoXX, want) {
				t.Errorf("CreateStatus %d: %s documents %v, want %v", tt.config, p, twoXX, want)
			}
		}
	}
	for _, bad := range []int{202, 204, 100, -1} {
		if _, err := New(Config{CreateStatus: bad}); err == nil || !strings.Contains(err.Error(), "create status "+strconv.Itoa(bad)) {
			t.Errorf("New with CreateStatus %d: %v, want a refusal naming it", bad, err)
		}
	}
}

func TestOpenAPIScopeAPI(t *testing.T) {
	t.Parallel()
	h := consoleHandler(t)
	rec := serve(h, http.MethodGet, "/__admin/openapi.json?scope=api", nil)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != jsonMediaType {
		t.Fatalf("scope=api: %d %s", rec.Code, rec.Body)
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range doc["paths"].(map[string]any) {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if want := []string{"/api/v2/resource", "/api/v2/resource/{id}", "/api/v2/version"}; !slices.Equal(paths, want) {
		t.Errorf("scope=api paths %v, want %v", paths, want)
	}
	// Nothing of the controls is left: no schema, answer or tag of theirs.
	text := rec.Body.String()
	for _, control := range []string{"FaultSpec", "JournalEntry", "SeedResponse", "NamespaceLimitReached", `"Admin"`, "/ns/{namespace}"} {
		if strings.Contains(text, control) {
			t.Errorf("scope=api mentions %s", control)
		}
	}
	// Every reference resolves.
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	responses := doc["components"].(map[string]any)["responses"].(map[string]any)
	for _, want := range []string{"Resource", "CreateRequest", "CreateResponse", "UpdateRequest", "ResourcePage", "ServiceVersion", "Error"} {
		if schemas[want] == nil {
			t.Errorf("scope=api lacks the schema %s", want)
		}
	}
	for _, ref := range refsIn(doc) {
		kind, name, _ := strings.Cut(strings.TrimPrefix(ref, "#/components/"), "/")
		if (kind == "schemas" && schemas[name] == nil) || (kind == "responses" && responses[name] == nil) {
			t.Errorf("scope=api: %s does not resolve", ref)
		}
	}

	for _, tt := range []struct{ query, body string }{
		{"?scope=admin", `{"Message":"The query string is invalid.","ModelState":{"scope":["Unknown scope \"admin\"; the one scope is \"api\" (the emulated API alone), or no scope for the whole document."]}}`},
		{"?scope=", `{"Message":"The query string is invalid.","ModelState":{"scope":["Unknown scope \"\"; the one scope is \"api\" (the emulated API alone), or no scope for the whole document."]}}`},
		{"?scope=api&scope=api", `{"Message":"The query string is invalid.","ModelState":{"scope":["scope is given 2 times; give it once."]}}`},
		{"?scop=api", `{"Message":"The query string is invalid.","ModelState":{"scop":["Unknown parameter \"scop\"; GET /__admin/openapi.json takes only scope."]}}`},
	} {
		rec := serve(h, http.MethodGet, "/__admin/openapi.json"+tt.query, nil)
		if rec.Code != http.StatusBadRequest || rec.Body.String() != tt.body {
			t.Errorf("%s: %d %s, want 400 %s", tt.query, rec.Code, rec.Body, tt.body)
		}
	}
	// The whole document still has everything, and documents the scope.
	full := openAPIDoc(t)
	if full["paths"].(map[string]any)["/__admin/seed"] == nil && full["paths"].(map[string]any)["/__admin/faults"] == nil {
		t.Error("the whole document lost the controls")
	}
}

// refsIn is every $ref in v.
func refsIn(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "$ref" {
				out = append(out, s)
			}
			out = append(out, refsIn(e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, refsIn(e)...)
		}
	}
	return out
}

// serveBody sends h a JSON body.
func serveBody(h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
