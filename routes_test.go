package resourcedir

// Tests of routes.go: every route is documented, and the OpenAPI document
// lists exactly the routes the server serves.

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRoutesDocumented: every route names an operation of operations, with
// its id, a summary and a success, and every parameter of its path; every
// operation documents one route; a route's flags agree with what its
// operation says: a strict one documents no query parameter, and every
// control that documents none is strict; a serverWide one is a control.
func TestRoutesDocumented(t *testing.T) {
	t.Parallel()
	d := openAPILimitsOf(DefaultConfig())
	ids := map[string]string{}
	pathParams := map[string][]string{} // by pattern, from the routes that declare them
	for _, rt := range routes {
		where := rt.method + " " + rt.pattern
		doc := operations[rt.op]
		if doc == nil {
			t.Errorf("%s names the operation %q, which operations lacks", where, rt.op)
			continue
		}
		o := doc(d)
		if o.id != rt.op || o.summary == "" {
			t.Errorf("%s: operationId %q under the key %q, summary %q", where, o.id, rt.op, o.summary)
		}
		control := strings.HasPrefix(rt.pattern, adminPrefix)
		if strict := rt.flags&strict != 0; strict != (control && len(o.params) == 0) {
			t.Errorf("%s: strict is %v, but it is a control %v documenting %d query parameters", where, strict, control, len(o.params))
		}
		if rt.flags&serverWide != 0 && !control {
			t.Errorf("%s is serverWide but no control", where)
		}
		if other, dup := ids[o.id]; dup {
			t.Errorf("operationId %s is both %s and %s", o.id, other, where)
		}
		ids[o.id] = where
		if !slices.ContainsFunc(keys(map[string]any(o.answers)), func(code string) bool { return strings.HasPrefix(code, "2") }) {
			t.Errorf("%s documents no success", where)
		}
		for _, p := range o.pathParams {
			pathParams[rt.pattern] = append(pathParams[rt.pattern], p.(obj)["name"].(string))
		}
	}
	for op := range operations {
		if _, ok := ids[op]; !ok {
			t.Errorf("the operation %s documents no route", op)
		}
	}
	for _, rt := range routes {
		for _, m := range regexp.MustCompile(`\{([a-z]+)\}`).FindAllStringSubmatch(rt.pattern, -1) {
			if !slices.Contains(pathParams[rt.pattern], m[1]) {
				t.Errorf("%s %s: the path parameter %s is not documented", rt.method, rt.pattern, m[1])
			}
		}
	}
}

// TestOpenAPIPathsAreRoutes: the document lists every route under its path
// with the route's operationId, names no method or path that no route
// serves, and every operation it lists is answered by the route it names,
// under /ns/{namespace} too.
func TestOpenAPIPathsAreRoutes(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	paths := doc["paths"].(map[string]any)
	served := map[string]route{} // "method path" as the document spells it
	for _, rt := range routes {
		p := strings.TrimSuffix(rt.pattern, "{$}")
		served[rt.method+" "+p] = rt
		item, _ := paths[p].(map[string]any)
		op, ok := item[strings.ToLower(rt.method)]
		if !ok {
			t.Errorf("the document lacks %s %s", rt.method, p)
			continue
		}
		if got, want := op.(map[string]any)["operationId"], rt.op; got != want {
			t.Errorf("%s %s: operationId %v, the route's %s", rt.method, p, got, want)
		}
	}
	srv := newServer(DefaultConfig(), newStore(nil), nil)
	for p, item := range paths {
		plain := strings.TrimPrefix(p, "/ns/{namespace}")
		for method := range item.(map[string]any) {
			if method == "parameters" || method == "description" {
				continue
			}
			method = strings.ToUpper(method)
			rt, ok := served[method+" "+plain]
			if method == http.MethodHead {
				rt, ok = served[http.MethodGet+" "+plain]
			}
			if !ok {
				t.Errorf("the document lists %s %s, which no route serves", method, p)
				continue
			}
			target := examplePath(t, doc, p)
			if plain == p { // the mux picks the route itself
				req := httptest.NewRequest(method, target, nil)
				if _, pattern := srv.mux.Handler(req); pattern != rt.method+" "+rt.pattern {
					t.Errorf("%s %s is served by %q, not by the route %s %s", method, target, pattern, rt.method, rt.pattern)
				}
			}
			rec := serve(srv, method, target, nil)
			if rec.Code == http.StatusMethodNotAllowed || rec.Code == http.StatusNotFound && strings.Contains(rec.Body.String(), "No resource matches") {
				t.Errorf("%s %s (documented as %s) = %d %s", method, target, p, rec.Code, rec.Body)
			}
		}
	}
}

// TestRouteDocumentsItself: a route added to the table gets its OpenAPI
// entry, its HEAD and its /ns/{namespace} twin with no other change.
func TestRouteDocumentsItself(t *testing.T) {
	t.Parallel()
	extra := route{http.MethodGet, "/__admin/example/{n}", (*Server).health, "example", strict}
	ops := maps.Clone(operations)
	ops["example"] = fixed(operation{id: "example", summary: "An example control",
		pathParams: []any{obj{"name": "n", "in": "path", "required": true, "schema": obj{"type": "integer"}, "example": 1}},
		answers:    obj{"200": okAnswer("Fine.", counter("N"))}})
	doc := openAPIDocument(openAPILimitsOf(DefaultConfig()), append(slices.Clone(routes), extra), ops)
	raw, _ := json.Marshal(doc)
	var decoded map[string]any
	if err := json.Unmarshal(raw, &decoded); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"/__admin/example/{n}":                "example",
		"/ns/{namespace}/__admin/example/{n}": "nsExample",
	} {
		if got := at(t, decoded, "paths", p, "get", "operationId"); got != want {
			t.Errorf("GET %s: operationId %v, want %s", p, got, want)
		}
		if got := at(t, decoded, "paths", p, "head", "operationId"); got != "head"+strings.ToUpper(want[:1])+want[1:] {
			t.Errorf("HEAD %s: operationId %v", p, got)
		}
		answers := at(t, decoded, "paths", p, "get", "responses").(map[string]any)
		for _, code := range []string{"200", "401", "403", "405", "429", "500", "503"} {
			if _, ok := answers[code]; !ok {
				t.Errorf("GET %s lacks the %s answer", p, code)
			}
		}
		if got := at(t, decoded, "paths", p, "get", "tags", 0); got != "Admin" {
			t.Errorf("GET %s: tag %v", p, got)
		}
	}
	if got := len(decoded["paths"].(map[string]any)); got != len(openAPIDoc(t)["paths"].(map[string]any))+2 {
		t.Errorf("%d paths with one route more", got)
	}
}

// TestControlsRefuseUnknownQuery: every strict control answers a query
// parameter with a 400 naming it, before anything else (an unknown id or a
// body is not looked at), in every namespace, naming the route's path; the
// controls that read parameters, the API and the console do not.
func TestControlsRefuseUnknownQuery(t *testing.T) {
	t.Parallel()
	c := startServer(t, DefaultConfig(), nil)
	fill := strings.NewReplacer("{id}", "0b7c5e2a-4f1d-4c3b-9a8e-1d2c3b4a5f60", "{name}", "no-such-space",
		"{file}", consoleAssetNames()[0], "{$}", "")
	refusing := 0
	for _, rt := range routes {
		path := fill.Replace(rt.pattern)
		for _, prefix := range []string{"", "/ns/team-q"} {
			if prefix != "" && isServerWide(routes, path) {
				continue
			}
			r := c.on(t).do(rt.method, prefix+path+"?Colour=red", "{}")
			if rt.flags&strict == 0 {
				if strings.Contains(string(r.Body), "takes none") {
					t.Errorf("%s %s: refused a parameter it ignores or reads itself: %s", rt.method, prefix+path, r.Body)
				}
				continue
			}
			refusing++
			want := `{"Message":"The query string is invalid.","ModelState":{"Colour":["Unknown parameter \"Colour\"; ` +
				rt.method + " " + path + ` takes none."]}}`
			if r.Status != http.StatusBadRequest || string(r.Body) != want {
				t.Errorf("%s %s?Colour=red: %d %s\nwant 400 %s", rt.method, prefix+path, r.Status, r.Body, want)
			}
		}
	}
	if refusing < 15 {
		t.Errorf("%d strict controls checked; the table has more", refusing)
	}
}
