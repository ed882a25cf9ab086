package main

// Routes are matched as ASP.NET matches them (behaviour.md 1): the fixed
// segments of /api/v2/resource in any case, one trailing slash tolerated;
// an id stays as sent, and a doubled slash matches nothing. Every
// top-level name here starts with route.

import (
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
