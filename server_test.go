package resourcedir

// Tests of server.go: Config defaults and the one table of routes.

import (
	"net/http"
	"testing"
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
	a := startServer(t, defaultConfig(), nil)
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
