package main

// Routes are matched as ASP.NET matches them (behaviour.md 1): the fixed
// segments of /api/v2/resource in any case, one trailing slash tolerated;
// an id stays as sent, and a doubled slash matches nothing. Every
// top-level name here starts with route.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestRoutesCaseAndTrailingSlash(t *testing.T) {
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	id := func() string { id, _ := a.create(`{"Company":"Acme"}`); return id }()
	for _, path := range []string{"/API/V2/Resource", "/api/v2/RESOURCE/", "/Api/v2/resource/", "/api/V2/resource?requestParams.pageSize=1"} {
		r := a.on(t).do(http.MethodGet, path, "")
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), id) {
			t.Errorf("GET %s: %d %s, want the list", path, r.Status, r.Body)
		}
	}
	for _, path := range []string{"/Api/V2/resource/" + id, "/API/V2/RESOURCE/" + id + "/", "/api/v2/resource/" + strings.ToUpper(id)} {
		r := a.on(t).do(http.MethodPut, path, putBody(id, "Position", path))
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), path) {
			t.Errorf("PUT %s: %d %s, want the update", path, r.Status, r.Body)
		}
	}
	if r := a.on(t).do(http.MethodPost, "/API/v2/Resource/", `{"Company":"Second"}`); r.Status != http.StatusOK {
		t.Errorf("POST /API/v2/Resource/: %d %s", r.Status, r.Body)
	}
	for _, tt := range []struct{ method, path string }{
		{http.MethodGet, "/api/v2/resource//"},
		{http.MethodGet, "/API/V2/RESOURCE//"},
		{http.MethodPost, "/api/v2/resource//"},
		{http.MethodPut, "/api/v2/resource/" + id + "//"},
		{http.MethodGet, "/api/v2//resource"},
		{http.MethodGet, "/api/v2/resources"},
		{http.MethodGet, "/api/v2/resource/" + id + "/x"},
	} {
		r := a.on(t).do(tt.method, tt.path, `{"Company":"x"}`)
		if r.Status != http.StatusNotFound {
			t.Errorf("%s %s: %d %s, want 404", tt.method, tt.path, r.Status, r.Body)
			continue
		}
		if e := checkErrorShape(t, tt.path, r.Header, r.Body); e.Message != "No resource matches the path "+strings.SplitN(tt.path, "?", 2)[0]+"." {
			t.Errorf("%s %s: Message %q", tt.method, tt.path, e.Message)
		}
	}
}

// TestRoutesNamespaceEdges: the routing decided before any namespace
// exists. GET /ns/{name} sends a browser to its console, a path no route
// answers leaves no namespace behind, and an encoded slash is part of the
// name, not a segment break.
func TestRoutesNamespaceEdges(t *testing.T) {
	a := startServer(t, DefaultConfig(), nil)
	const invalid = `"%s" is not 1 to 64 characters of A-Z a-z 0-9 . _ -.`
	tests := []struct {
		method, path string
		status       int
		location     string
		message      string
	}{
		{http.MethodGet, "/ns/demo", http.StatusPermanentRedirect, "/ns/demo/", "The console of the namespace demo is at /ns/demo/."},
		{http.MethodHead, "/ns/demo", http.StatusPermanentRedirect, "/ns/demo/", ""},
		{http.MethodGet, "/ns/demo?x=1", http.StatusPermanentRedirect, "/ns/demo/?x=1", "The console of the namespace demo is at /ns/demo/."},
		{http.MethodPost, "/ns/demo", http.StatusNotFound, "", "No resource matches the path /ns/demo."},
		{http.MethodGet, "/ns/bad%20name", http.StatusBadRequest, "", "The namespace name " + fmt.Sprintf(invalid, "bad name")},
		{http.MethodGet, "/ns/ghost/nothing", http.StatusNotFound, "", "No resource matches the path /ns/ghost/nothing."},
		{http.MethodPost, "/ns/ghost/api/v2/resources", http.StatusNotFound, "", "No resource matches the path /ns/ghost/api/v2/resources."},
		{http.MethodGet, "/ns/ghost/__admin/nothing", http.StatusNotFound, "", "No resource matches the path /ns/ghost/__admin/nothing."},
		{http.MethodGet, "/ns/sl%2Fash/api/v2/resource", http.StatusBadRequest, "", "The namespace name " + fmt.Sprintf(invalid, "sl/ash")},
		{http.MethodGet, "/ns/sl%2fash/__admin/health", http.StatusBadRequest, "", "The namespace name " + fmt.Sprintf(invalid, "sl/ash")},
	}
	for _, tt := range tests {
		r := a.on(t).do(tt.method, tt.path, "")
		if r.Status != tt.status || r.Header.Get("Location") != tt.location {
			t.Errorf("%s %s: %d Location %q; want %d Location %q", tt.method, tt.path, r.Status, r.Header.Get("Location"), tt.status, tt.location)
		}
		if tt.method == http.MethodHead {
			continue
		}
		if e := checkErrorShape(t, tt.path, r.Header, r.Body); e.Message != tt.message {
			t.Errorf("%s %s: Message %q, want %q", tt.method, tt.path, e.Message, tt.message)
		}
	}
	var list struct {
		Namespaces []struct{ Name string }
		Total      int
	}
	a.getJSON("/__admin/namespaces", &list)
	if list.Total != 1 || list.Namespaces[0].Name != "default" {
		t.Errorf("namespaces %+v, want default alone", list)
	}
	// A path a route answers does create one, the console page included.
	a.expect(http.StatusOK, http.MethodGet, "/ns/demo/", "")
	a.getJSON("/__admin/namespaces", &list)
	if list.Total != 2 || list.Namespaces[1].Name != "demo" {
		t.Errorf("namespaces %+v, want default and demo", list)
	}
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
