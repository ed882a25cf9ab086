package main

// Bodies on /api/v2 must be declared as JSON (behaviour.md 1 and 6), as
// ASP.NET reads nothing else as JSON: anything else is a 415 that says
// what was sent. Every top-level name here starts with media.

import (
	"net/http"
	"strings"
	"testing"
)

func TestMediaTypes(t *testing.T) {
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	id := func() string { id, _ := a.create(`{"Company":"Acme"}`); return id }()
	tests := []struct {
		contentType string // "" sends none
		status      int
		message     string
	}{
		{"", http.StatusUnsupportedMediaType, "The request body was sent with no Content-Type; send it as JSON with Content-Type: application/json."},
		{"application/x-www-form-urlencoded", http.StatusUnsupportedMediaType, `The request body was sent with Content-Type "application/x-www-form-urlencoded"; send it as JSON with Content-Type: application/json.`},
		{"text/plain", http.StatusUnsupportedMediaType, `The request body was sent with Content-Type "text/plain"; send it as JSON with Content-Type: application/json.`},
		{"text/plain; charset=utf-8", http.StatusUnsupportedMediaType, `The request body was sent with Content-Type "text/plain; charset=utf-8"; send it as JSON with Content-Type: application/json.`},
		{"multipart/form-data; boundary=x", http.StatusUnsupportedMediaType, `The request body was sent with Content-Type "multipart/form-data; boundary=x"; send it as JSON with Content-Type: application/json.`},
		{"application/jsonx", http.StatusUnsupportedMediaType, `The request body was sent with Content-Type "application/jsonx"; send it as JSON with Content-Type: application/json.`},
		{"application/json", http.StatusOK, ""},
		{"application/json; charset=utf-8", http.StatusOK, ""},
		{"Application/JSON", http.StatusOK, ""},
		{"text/json", http.StatusOK, ""},
	}
	for _, tt := range tests {
		for _, req := range []struct{ method, path, body string }{
			{http.MethodPost, "/api/v2/resource", `{"Company":"Acme"}`},
			{http.MethodPut, "/api/v2/resource/" + id, putBody(id)},
		} {
			what := req.method + " with Content-Type " + tt.contentType
			status, h, body := accSend(t, a.base, req.method, req.path, "", "", tt.contentType, req.body)
			if status != tt.status {
				t.Errorf("%s: %d %s, want %d", what, status, body, tt.status)
				continue
			}
			if tt.status == http.StatusOK {
				continue
			}
			if e := checkErrorShape(t, what, h, body); e.Message != tt.message || e.ModelState != nil {
				t.Errorf("%s: %s\nwant Message %q and no ModelState", what, body, tt.message)
			}
		}
	}
	// An empty body is the 400 of an empty body, whatever it was declared as.
	for _, contentType := range []string{"", "text/plain", "application/json"} {
		status, h, body := accSend(t, a.base, http.MethodPost, "/api/v2/resource", "", "", contentType, "")
		if status != http.StatusBadRequest {
			t.Errorf("an empty body with Content-Type %q: %d %s, want 400", contentType, status, body)
			continue
		}
		if e := checkErrorShape(t, "an empty body", h, body); !strings.Contains(e.Message, "empty") {
			t.Errorf("an empty body with Content-Type %q: Message %q does not say it is empty", contentType, e.Message)
		}
	}
	// The first create and one for each accepted Content-Type; a refused
	// body stored nothing.
	if n := a.store.Len(); n != 1+4 {
		t.Errorf("the store holds %d resources, want 5", n)
	}
}
