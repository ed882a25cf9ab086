package main

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// createdNamespace is the answer of POST /__admin/namespaces.
type createdNamespace struct{ Name, BaseURL string }

// newNamespace posts body to /__admin/namespaces, requires a 201 with the
// JSON content type and exactly Name and BaseURL, and returns them.
func (e *testClient) newNamespace(body string) createdNamespace {
	e.t.Helper()
	r := e.expect(http.StatusCreated, http.MethodPost, "/__admin/namespaces", body)
	if ct := r.Header.Get("Content-Type"); ct != jsonContentType {
		e.t.Errorf("Content-Type %q, want %q", ct, jsonContentType)
	}
	var out createdNamespace
	r.decode(e.t, &out)
	if want := fmt.Sprintf(`{"Name":%q,"BaseURL":%q}`, out.Name, out.BaseURL); string(r.Body) != want {
		e.t.Errorf("body %s, want exactly Name and BaseURL: %s", r.Body, want)
	}
	if want := e.base + "/ns/" + out.Name; out.BaseURL != want {
		e.t.Errorf("BaseURL %q, want %q", out.BaseURL, want)
	}
	return out
}

func TestNamespaceCreateNames(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	long := strings.Repeat("p", maxNamespacePrefix)
	for _, tt := range []struct{ body, name string }{
		{"", `^ns-[0-9a-f]{16}$`},
		{"  \n", `^ns-[0-9a-f]{16}$`},
		{"{}", `^ns-[0-9a-f]{16}$`},
		{`{"Prefix": null}`, `^ns-[0-9a-f]{16}$`},
		{`{"Prefix": "TestCreate"}`, `^TestCreate-[0-9a-f]{16}$`},
		{`{"prefix": "Test.sub_1-x"}`, `^Test\.sub_1-x-[0-9a-f]{16}$`}, // admin properties match in any case
		{"\uFEFF" + `{"Prefix": "bom"}`, `^bom-[0-9a-f]{16}$`},
		{`{"Prefix": "` + long + `"}`, `^` + long + `-[0-9a-f]{16}$`},
	} {
		got := e.on(t).newNamespace(tt.body)
		if !regexp.MustCompile(tt.name).MatchString(got.Name) || len(got.Name) > maxNamespaceName {
			t.Errorf("body %q: name %q, want one matching %s", tt.body, got.Name, tt.name)
		}
	}
	// Every answer above made a namespace of its own.
	if got := len(e.namespaces()); got != 9 {
		t.Errorf("%d namespaces, want default and the 8 created", got)
	}
}

func TestNamespaceCreateRefused(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	tooLong := strings.Repeat("p", maxNamespacePrefix+1)
	notJSON := "The body is a JSON object such as {\"Prefix\": \"TestCreate\"}, or empty."
	for _, tt := range []struct {
		path, body, msg string
		ms              map[string]string
	}{
		{"/__admin/namespaces", `{"Prefx": "a"}`, "The request is invalid.", map[string]string{"Prefx": `Unknown property "Prefx"; a namespace request has Prefix alone.`}},
		{"/__admin/namespaces", `{"Prefix": "a", "Seed": 1}`, "The request is invalid.", map[string]string{"Seed": `Unknown property "Seed"`}},
		{"/__admin/namespaces", `{"Prefix": "Test/sub"}`, "The request is invalid.", map[string]string{"Prefix": `The Prefix "Test/sub" is not 1 to 47 characters of A-Z a-z 0-9 . _ - (the name adds a dash and 16 more).`}},
		{"/__admin/namespaces", `{"Prefix": ""}`, "The request is invalid.", map[string]string{"Prefix": `The Prefix "" is not 1 to 47`}},
		{"/__admin/namespaces", `{"Prefix": "` + tooLong + `"}`, "The request is invalid.", map[string]string{"Prefix": "is not 1 to 47"}},
		{"/__admin/namespaces", `{"Prefix": 5}`, "The request is invalid.", map[string]string{"Prefix": "Prefix must be a string."}},
		{"/__admin/namespaces", `["a"]`, notJSON, nil},
		{"/__admin/namespaces", `null`, notJSON, nil},
		{"/__admin/namespaces", `{"Prefix": "a"`, notJSON, nil},
		{"/__admin/namespaces?prefix=a", "", "The query string is invalid.", map[string]string{"prefix": `Unknown parameter "prefix"; POST /__admin/namespaces takes none.`}},
	} {
		e.do(http.MethodPost, tt.path, tt.body).wantError(t, http.StatusBadRequest, tt.msg, tt.ms)
	}
	// Server-wide, like the list: not found under a namespace.
	e.do(http.MethodPost, "/ns/a/__admin/namespaces", "").wantError(t, http.StatusNotFound, "No resource matches the path /ns/a/__admin/namespaces.", nil)
	if got := len(e.namespaces()); got != 1 {
		t.Errorf("%d namespaces after refusals, want default alone", got)
	}
}

// A created namespace is like any new one: the seed, a journal and faults
// of its own; it counts toward -max-namespaces and is removed as any other.
func TestNamespaceCreateLifecycle(t *testing.T) {
	t.Parallel()
	cfg := nsConfig(t)
	cfg.MaxNamespaces = 3
	e := startServer(t, cfg, nil)
	e.addFault(`{"Method": "GET", "Path": "/api/v2/resource", "Status": 503}`)
	a, b := e.newNamespace(`{"Prefix": "T"}`), e.newNamespace(`{"Prefix": "T"}`)
	if a.Name == b.Name {
		t.Fatalf("two creates gave the same name %q", a.Name)
	}
	ns := clientAt(t, a.BaseURL)
	var page struct{ TotalResults int }
	ns.getJSON("/api/v2/resource", &page) // the default namespace's fault is not here
	if page.TotalResults != 2 {
		t.Errorf("%d resources in a new namespace, want the seed's 2", page.TotalResults)
	}
	ns.createPerson("Grace")
	if n := ns.health(); n != 3 {
		t.Errorf("%d resources after a create, want 3", n)
	}
	if got := len(ns.journal()); got != 2 {
		t.Errorf("the new namespace's journal holds %d requests, want its own 2", got)
	}
	if got := len(ns.faults()); got != 0 {
		t.Errorf("the new namespace has %d faults, want none", got)
	}
	if n := clientAt(t, b.BaseURL).health(); n != 2 {
		t.Errorf("the other created namespace holds %d resources, want the seed's 2", n)
	}

	e.do(http.MethodPost, "/__admin/namespaces", "").wantError(t, http.StatusTooManyRequests,
		"would be one more than the limit of 3 namespaces (-max-namespaces)", nil)
	e.expect(http.StatusOK, http.MethodDelete, "/__admin/namespaces/"+a.Name, "")
	c := e.newNamespace("")
	want := []nsEntry{{b.Name, 2}, {"default", 2}, {c.Name, 2}}
	slices.SortFunc(want, func(x, y nsEntry) int { return strings.Compare(x.Name, y.Name) })
	if got := e.namespaces(); !slices.Equal(got, want) {
		t.Errorf("namespaces %v, want %v", got, want)
	}
}
