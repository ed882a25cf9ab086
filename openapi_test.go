package resourcedir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// openAPIDoc fetches the document from a default server and decodes it.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	rec := serve(consoleHandler(t), http.MethodGet, "/__admin/openapi.json", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /__admin/openapi.json = %d %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("Content-Type"); got != "application/json; charset=utf-8" {
		t.Fatalf("Content-Type = %q", got)
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	return doc
}

// at walks a decoded JSON document by keys and array indexes.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %q is not in an object", path, k)
			}
			v, ok = m[k]
			if !ok {
				t.Fatalf("at %v: no %q", path, k)
			}
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at %v: no element %d", path, k)
			}
			v = a[k]
		}
	}
	return v
}

func strs(t *testing.T, v any) []string {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("%v is not an array", v)
	}
	out := make([]string, len(a))
	for i, e := range a {
		out[i] = fmt.Sprint(e)
	}
	return out
}

func keys(m any) []string {
	var out []string
	for k := range m.(map[string]any) {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestOpenAPIDocumentIsOpenAPI31(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Errorf("openapi = %q, want 3.1.x", v)
	}
	// Every $ref points at something that exists.
	raw, _ := json.Marshal(doc)
	for _, part := range strings.Split(string(raw), `"$ref":"#/`)[1:] {
		ref := part[:strings.IndexByte(part, '"')]
		var path []any
		for _, seg := range strings.Split(ref, "/") {
			path = append(path, seg)
		}
		at(t, doc, path...)
	}
	// Every operation names the answers every request can get, and a
	// success; a HEAD answer has no body.
	for p, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if method == "parameters" || method == "description" {
				continue
			}
			responses := at(t, op, "responses").(map[string]any)
			for _, code := range []string{"401", "403", "405", "429", "500"} {
				if _, ok := responses[code]; !ok {
					t.Errorf("%s %s lacks a %s response", method, p, code)
				}
			}
			if !slices.ContainsFunc(keys(responses), func(code string) bool { return strings.HasPrefix(code, "2") }) {
				t.Errorf("%s %s has no success response", method, p)
			}
			if method != "head" {
				continue
			}
			for code, r := range responses {
				if _, ok := r.(map[string]any)["content"]; ok {
					t.Errorf("head %s: the %s answer has content", p, code)
				}
			}
		}
	}
}

// walkSchemas calls f with every JSON object of the document and its path.
func walkSchemas(v any, path string, f func(path string, m map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(path, v)
		for k, e := range v {
			walkSchemas(e, path+"/"+k, f)
		}
	case []any:
		for i, e := range v {
			walkSchemas(e, fmt.Sprintf("%s/%d", path, i), f)
		}
	}
}

// TestOpenAPIForGenerators holds the document to the forms that
// oapi-codegen, ogen and openapi-typescript turn into usable types (CI
// generates and runs those clients; this finds a regression without Node
// or the network).
func TestOpenAPIForGenerators(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	walkSchemas(doc, "#", func(path string, m map[string]any) {
		if strings.HasSuffix(path, "/properties") {
			return // a map of property names, not a schema
		}
		// A type list is only ever a type and null: Go generators have no
		// type for string-or-array.
		if list, ok := m["type"].([]any); ok {
			if len(list) != 2 || list[1] != "null" || list[0] == "null" {
				t.Errorf("%s: type %v is not [T, null]", path, list)
			}
		}
		if m["type"] == "null" {
			t.Errorf("%s: a null-only schema (openapi-fetch's Readable drops the key)", path)
		}
		if _, ok := m["const"]; ok {
			t.Errorf("%s: const (Go generators make it interface{}): use a typed enum", path)
		}
		if e, ok := m["enum"].([]any); ok {
			if _, typed := m["type"].(string); !typed {
				t.Errorf("%s: an enum without one type", path)
			}
			if slices.Contains(e, nil) {
				t.Errorf("%s: null in an enum (oapi-codegen makes a \"<nil>\" constant)", path)
			}
		}
		if _, ok := m["pattern"]; ok && strings.Contains(path, "/schemas/") && strings.Contains(path, "Request") {
			t.Errorf("%s: a pattern on a request property: use an enum", path)
		}
		if m["type"] == "object" || slices.Contains(anySlice(m["type"]), "object") {
			_, props := m["properties"]
			_, extra := m["additionalProperties"]
			if !props && !extra {
				t.Errorf("%s: an object with neither properties nor additionalProperties (Record<string, never> in TypeScript)", path)
			}
		}
	})

	schemas := at(t, doc, "components", "schemas").(map[string]any)
	rt := schemas["RequestorType"].(map[string]any)
	if rt["type"] != "object" || rt["oneOf"] != nil {
		t.Errorf("RequestorType is not one object: %v", rt)
	}
	for _, name := range []string{"CreateRequest", "UpdateRequest", "SeedResource"} {
		if got := at(t, schemas, name, "properties", "Types", "items", "$ref"); got != "#/components/schemas/RequestorTypeInput" {
			t.Errorf("%s Types items = %v, want the named RequestorTypeInput", name, got)
		}
		for prop, s := range at(t, schemas, name, "properties").(map[string]any) {
			if _, ok := s.(map[string]any)["type"]; !ok {
				t.Errorf("%s.%s has no type", name, prop)
			}
		}
	}
	for _, name := range []string{"Resource", "ResourceCreated", "CreateRequest"} {
		addr := at(t, schemas, name, "properties", "Address").(map[string]any)
		if !slices.Equal(anySlice(addr["type"]), []any{"object", "null"}) || addr["additionalProperties"] != true {
			t.Errorf("%s.Address = %v, want a nullable open object", name, addr)
		}
	}
	for _, name := range []string{"Resource", "ResourcePage"} {
		if got := at(t, schemas, name, "properties", "_embedded", "type"); !slices.Equal(anySlice(got), []any{"object", "null"}) {
			t.Errorf("%s._embedded type = %v, want [object null]", name, got)
		}
	}

	// 429s are named for what gives them; a fault's Retry-After is declared.
	responses := at(t, doc, "components", "responses").(map[string]any)
	if _, ok := responses["TooManyNamespaces"]; ok {
		t.Error("a 429 is still named TooManyNamespaces")
	}
	for _, name := range []string{"InjectedFault", "TooManyRequests", "ServiceUnavailable"} {
		if got := at(t, responses, name, "headers", "Retry-After", "$ref"); got != "#/components/headers/Retry-After" {
			t.Errorf("%s does not declare Retry-After: %v", name, got)
		}
	}
	for _, p := range []string{"/api/v2/resource", "/api/v2/resource/{id}"} {
		for method, op := range at(t, doc, "paths", p).(map[string]any) {
			if method == "parameters" || method == "description" {
				continue
			}
			if got := at(t, op, "responses", "429"); got.(map[string]any)["$ref"] != "#/components/responses/TooManyRequests" &&
				got.(map[string]any)["headers"].(map[string]any)["Retry-After"] == nil {
				t.Errorf("%s %s: 429 = %v", method, p, got)
			}
		}
	}
}

func anySlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestOpenAPIHeadWhereServed: every path with a GET has a HEAD, and the
// server answers HEAD there with GET's status and no body.
func TestOpenAPIHeadWhereServed(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	// A real server: a recorder keeps the body a handler writes for HEAD,
	// which net/http drops.
	srv := httptest.NewServer(consoleHandler(t))
	defer srv.Close()
	for p, item := range doc["paths"].(map[string]any) {
		ops := item.(map[string]any)
		_, get := ops["get"]
		_, head := ops["head"]
		if get != head {
			t.Errorf("%s: get %v, head %v", p, get, head)
		}
		if !get {
			continue
		}
		target := srv.URL + examplePath(t, doc, p)
		g, err := http.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		g.Body.Close()
		r, err := http.Head(target)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode != g.StatusCode || r.StatusCode != http.StatusOK {
			t.Errorf("HEAD %s = %d, GET = %d", p, r.StatusCode, g.StatusCode)
		}
		if n != 0 {
			t.Errorf("HEAD %s has a body of %d bytes", p, n)
		}
		if r.Header.Get("Content-Type") != g.Header.Get("Content-Type") {
			t.Errorf("HEAD %s Content-Type = %q, GET's = %q", p, r.Header.Get("Content-Type"), g.Header.Get("Content-Type"))
		}
	}
}

// examplePath fills the path template p of doc with its parameters'
// examples, as Dredd does.
func examplePath(t *testing.T, doc map[string]any, p string) string {
	t.Helper()
	out := p
	for _, param := range anySlice(at(t, doc, "paths", p).(map[string]any)["parameters"]) {
		m := param.(map[string]any)
		ex, ok := m["example"]
		if !ok {
			t.Fatalf("%s: the path parameter %s has no example", p, m["name"])
		}
		out = strings.Replace(out, "{"+m["name"].(string)+"}", fmt.Sprint(ex), 1)
	}
	if strings.Contains(out, "{") {
		t.Fatalf("%s: a path parameter is not declared: %s", p, out)
	}
	return out
}

// TestOpenAPINamespacedPaths: every path served under /ns/{name} is listed
// there too, with the same operations under ids of their own, for the tools
// that do not expand the document's /ns/{namespace} server (Prism, Dredd);
// the server-wide controls are not.
func TestOpenAPINamespacedPaths(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	paths := doc["paths"].(map[string]any)
	ids := map[string]string{}
	var plain, spaced int
	for p, item := range paths {
		for method, op := range item.(map[string]any) {
			if method == "parameters" || method == "description" {
				continue
			}
			id := at(t, op, "operationId").(string)
			if other, dup := ids[id]; dup {
				t.Errorf("operationId %s is both %s and %s %s", id, other, method, p)
			}
			ids[id] = method + " " + p
		}
		rest, ok := strings.CutPrefix(p, "/ns/{namespace}")
		if ok {
			spaced++
			if _, ok := paths[rest]; !ok {
				t.Errorf("%s has no unprefixed twin", p)
			}
			ns := at(t, item, "parameters", 0).(map[string]any)
			if ns["name"] != "namespace" || ns["in"] != "path" || ns["required"] != true {
				t.Errorf("%s: the first parameter is %v", p, ns)
			}
			if got := at(t, ns, "schema", "pattern"); got != namespacePattern {
				t.Errorf("%s: namespace pattern %v", p, got)
			}
			continue
		}
		plain++
		twin, ok := paths["/ns/{namespace}"+p]
		if wide := p == "/__admin/snapshot" || p == "/__admin/seed" || strings.HasPrefix(p, "/__admin/namespaces"); wide {
			if ok {
				t.Errorf("the server-wide %s is listed under /ns/{namespace}, where it is not found", p)
			}
			continue
		}
		if !ok {
			t.Errorf("%s is not listed under /ns/{namespace}", p)
			continue
		}
		if got, want := keys(twin), sorted(append(keys(item), "parameters")); !slices.Equal(slices.Compact(got), slices.Compact(want)) {
			t.Errorf("/ns/{namespace}%s has %v, %s has %v", p, got, p, keys(item))
		}
		upper := func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
		for method, op := range item.(map[string]any) {
			if method == "parameters" || method == "description" {
				continue
			}
			want := "ns" + upper(at(t, op, "operationId").(string))
			if method == "head" { // named after the namespaced GET
				want = "head" + upper("ns"+upper(at(t, item, "get", "operationId").(string)))
			}
			if got := at(t, twin, method, "operationId"); got != want {
				t.Errorf("%s /ns/{namespace}%s: operationId %v, want %s", method, p, got, want)
			}
			if _, ok := at(t, twin, method, "responses").(map[string]any)["400"]; !ok {
				t.Errorf("%s /ns/{namespace}%s: no 400 for a bad namespace name", method, p)
			}
		}
	}
	if spaced != plain-4 {
		t.Errorf("%d namespaced paths for %d paths, want all but the 4 server-wide ones", spaced, plain)
	}
	// The examples are valid: the namespaced list answers 200 in the
	// example namespace, and a bad name is the 400 declared.
	h := consoleHandler(t)
	if rec := serve(h, http.MethodGet, examplePath(t, doc, "/ns/{namespace}/api/v2/resource"), nil); rec.Code != http.StatusOK {
		t.Errorf("GET in the example namespace = %d %s", rec.Code, rec.Body)
	}
	if rec := serve(h, http.MethodGet, "/ns/bad!name/__admin/health", nil); rec.Code != http.StatusBadRequest {
		t.Errorf("GET with a bad namespace name = %d %s", rec.Code, rec.Body)
	}
}

// TestOpenAPIPathParameterExamples: every path parameter has an example
// its own schema admits, so that Dredd fills every path in.
func TestOpenAPIPathParameterExamples(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	for p, item := range doc["paths"].(map[string]any) {
		for _, param := range anySlice(item.(map[string]any)["parameters"]) {
			m := param.(map[string]any)
			ex, schema := m["example"], m["schema"].(map[string]any)
			switch {
			case ex == nil:
				t.Errorf("%s: %s has no example", p, m["name"])
			case schema["enum"] != nil:
				if !slices.Contains(anySlice(schema["enum"]), ex) {
					t.Errorf("%s: %s example %v not in %v", p, m["name"], ex, schema["enum"])
				}
			case schema["type"] == "integer":
				if n, ok := ex.(float64); !ok || n < schema["minimum"].(float64) {
					t.Errorf("%s: %s example %v is not an integer of at least %v", p, m["name"], ex, schema["minimum"])
				}
			case schema["pattern"] != nil:
				if !regexp.MustCompile(schema["pattern"].(string)).MatchString(fmt.Sprint(ex)) {
					t.Errorf("%s: %s example %v does not match %v", p, m["name"], ex, schema["pattern"])
				}
			}
		}
		for method, op := range item.(map[string]any) {
			if method == "parameters" || method == "description" {
				continue
			}
			for _, param := range anySlice(op.(map[string]any)["parameters"]) {
				if param.(map[string]any)["in"] == "path" {
					t.Errorf("%s %s: the path parameter %v is not declared on the path", method, p, param.(map[string]any)["name"])
				}
			}
		}
	}
	if got := examplePath(t, doc, "/api/v2/resource/{id}"); !regexp.MustCompile("^/api/v2/resource/" + openAPIGUIDPattern[1:]).MatchString(got) {
		t.Errorf("the example resource path %s has no GUID", got)
	}
}

// TestOpenAPITextJSON: every request body is declared as application/json
// and as text/json alike, since the server reads both as JSON, and it does.
func TestOpenAPITextJSON(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	bodies := 0
	for p, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if method == "parameters" || method == "description" {
				continue
			}
			body, ok := op.(map[string]any)["requestBody"]
			if !ok {
				continue
			}
			bodies++
			content := at(t, body, "content").(map[string]any)
			if got := keys(content); !slices.Equal(got, []string{"application/json", "text/json"}) {
				t.Errorf("%s %s: request body media types %v", method, p, got)
			}
			a, _ := json.Marshal(content["application/json"])
			b, _ := json.Marshal(content["text/json"])
			if !bytes.Equal(a, b) {
				t.Errorf("%s %s: text/json is %s, application/json %s", method, p, b, a)
			}
		}
	}
	// create, update, seed, generate and faults, each also under
	// /ns/{namespace}, and createNamespace and putSeed.
	if bodies != 12 {
		t.Errorf("%d request bodies, want 12", bodies)
	}
	req := httptest.NewRequest(http.MethodPost, "/ns/textjson/api/v2/resource", strings.NewReader(`{"Company":"Text"}`))
	req.Header.Set("Content-Type", "text/json; charset=utf-8")
	rec := httptest.NewRecorder()
	consoleHandler(t).ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Errorf("a create sent as text/json = %d %s", rec.Code, rec.Body)
	}
}

// TestOpenAPIFilterDialect: the filter parameter says what the dialect in
// force accepts.
func TestOpenAPIFilterDialect(t *testing.T) {
	t.Parallel()
	filters := func(dialect filterDialect) string {
		doc := openAPIDocument(openAPILimits{MaxPageSize: 500, Filters: dialect}, routes, operations)
		for _, p := range at(t, doc, "paths", "/api/v2/resource", "get", "parameters").([]any) {
			if p.(obj)["name"] == paramFilters {
				return p.(obj)["description"].(string)
			}
		}
		t.Fatal("no filter parameter")
		return ""
	}
	assetic, kendo := filters(""), filters(dialectKendo)
	if filters(dialectAssetic) != assetic {
		t.Error("the default dialect is not assetic")
	}
	for _, want := range []string{"`-filters assetic` (the default)", "Not accepted here", "`-filters kendo` accepts it", "isnull", "doesnotstartwith"} {
		if !strings.Contains(assetic, want) {
			t.Errorf("the assetic description lacks %q", want)
		}
	}
	if strings.Contains(assetic, "| null") {
		t.Error("the assetic grammar admits null")
	}
	for _, want := range []string{"This server runs `-filters kendo`", "| null", "unary: isnull", "doesnotstartwith", "doesnotendwith"} {
		if !strings.Contains(kendo, want) {
			t.Errorf("the kendo description lacks %q", want)
		}
	}
}

// TestOpenAPIMatchesCodeTables is the drift test: the document's property
// lists, enums and limits are the code's.
func TestOpenAPIMatchesCodeTables(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	schemas := at(t, doc, "components", "schemas")
	cfg := DefaultConfig()

	resourceProps := append(slices.Clone(fieldNames[:]), "Types", "Address")
	for name, extra := range map[string][]string{"ResourceCreated": nil, "Resource": {"_links", "_embedded"}} {
		want := sorted(append(slices.Clone(resourceProps), extra...))
		if got := keys(at(t, schemas, name, "properties")); !slices.Equal(got, want) {
			t.Errorf("%s properties = %v, want %v", name, got, want)
		}
		if got := sorted(strs(t, at(t, schemas, name, "required"))); !slices.Equal(got, want) {
			t.Errorf("%s required = %v, want %v", name, got, want)
		}
		if got := strs(t, at(t, schemas, name, "properties", "Status", "enum")); !slices.Equal(got, []string{statusActive, statusInactive}) {
			t.Errorf("%s Status enum = %v", name, got)
		}
	}

	limits := map[field]int{fieldFirstName: maxLength(fieldFirstName), fieldSurname: maxLength(fieldSurname), fieldCompany: maxLength(fieldCompany), fieldDisplayName: maxLength(fieldDisplayName)}
	for f, limit := range limits {
		for _, schema := range []string{"Resource", "ResourceCreated", "CreateRequest", "UpdateRequest", "SeedResource"} {
			if got := at(t, schemas, schema, "properties", fieldNames[f], "maxLength"); got != float64(limit) {
				t.Errorf("%s.%s maxLength = %v, want %d", schema, fieldNames[f], got, limit)
			}
		}
	}

	var typeNames, typeIDs []string
	for _, e := range requestorTypeTable {
		typeNames = append(typeNames, e.name)
		typeIDs = append(typeIDs, fmt.Sprint(int(e.id)))
	}
	if got := strs(t, at(t, schemas, "RequestorType", "properties", "Id", "enum")); !slices.Equal(got, typeIDs) {
		t.Errorf("RequestorType Id enum = %v, want %v", got, typeIDs)
	}
	for _, name := range []string{"RequestorType", "RequestorTypeInput"} {
		if got := strs(t, at(t, schemas, name, "properties", "Type", "enum")); !slices.Equal(got, typeNames) {
			t.Errorf("%s Type enum = %v, want %v", name, got, typeNames)
		}
	}
	for _, name := range []string{"CreateRequest", "UpdateRequest", "SeedResource"} {
		if got := strs(t, at(t, schemas, name, "properties", "Status", "enum")); !slices.Equal(got, []string{statusActive, statusInactive}) {
			t.Errorf("%s Status enum = %v", name, got)
		}
	}

	var editable []string
	for _, p := range editableProps {
		editable = append(editable, p.String())
	}
	if got := strs(t, at(t, schemas, "UpdateRequest", "required")); !slices.Equal(sorted(got), sorted(editable)) {
		t.Errorf("UpdateRequest required = %v, want %v", got, editable)
	}

	if got := at(t, schemas, "ResourcePage", "properties", "ResourceList", "maxItems"); got != float64(cfg.MaxPageSize) {
		t.Errorf("ResourceList maxItems = %v, want %d", got, cfg.MaxPageSize)
	}
	if got := keys(at(t, schemas, "FaultSpec", "properties")); !slices.Equal(got, sorted(faultProps)) {
		t.Errorf("FaultSpec properties = %v, want faultProps %v", got, faultProps)
	}
	if got := keys(at(t, schemas, "Fault", "properties")); !slices.Equal(got, sorted(append(slices.Clone(faultProps), "Id", "Fired"))) {
		t.Errorf("Fault properties = %v, want faultProps with Id and Fired", got)
	}
	if got := at(t, schemas, "FaultSpec", "properties", "DelayMs", "maximum"); got != float64(maxFaultDelay.Milliseconds()) {
		t.Errorf("DelayMs maximum = %v, want %d", got, maxFaultDelay.Milliseconds())
	}
	if got := strs(t, at(t, schemas, "FaultSpec", "properties", "Kind", "enum")); !slices.Equal(got, faultKinds) {
		t.Errorf("Kind enum = %v, want faultKinds %v", got, faultKinds)
	}
	if got := at(t, schemas, "FaultSpec", "properties", "Skip", "maximum"); got != float64(maxSkip) {
		t.Errorf("Skip maximum = %v, want %d", got, maxSkip)
	}
	for prop, kib := range map[string]int{"HeadersTruncated": maxJournalHeaders >> 10, "BodyTruncated": maxJournalBody >> 10, "ResponseTruncated": maxJournalResponse >> 10} {
		if got := at(t, schemas, "JournalEntry", "properties", prop, "description").(string); !strings.Contains(got, fmt.Sprintf(" %d KiB", kib)) {
			t.Errorf("JournalEntry %s says %q, not the journal's cap of %d KiB", prop, got, kib)
		}
	}

	params := map[string]map[string]any{}
	for _, p := range at(t, doc, "paths", "/api/v2/resource", "get", "parameters").([]any) {
		params[p.(map[string]any)["name"].(string)] = p.(map[string]any)
	}
	if got := sorted(keys(anyMap(params))); !slices.Equal(got, sorted([]string{paramFilters, paramPage, paramPageSize, paramSorts})) {
		t.Errorf("list parameters = %v", got)
	}
	filters := params[paramFilters]["description"].(string)
	for _, name := range fieldNames {
		if !strings.Contains(filters, name) {
			t.Errorf("the filter description lacks the field %s", name)
		}
	}
	for _, op := range append(opNames[:], "notsubstringof") {
		if !strings.Contains(filters, " "+op) {
			t.Errorf("the filter description lacks the operator %s", op)
		}
	}
	for _, limit := range []int{maxFilterBytes, maxFilterConditions, maxFilterDepth} {
		if !strings.Contains(filters, fmt.Sprint(limit)) {
			t.Errorf("the filter description lacks the limit %d", limit)
		}
	}
	if got := at(t, params[paramFilters], "schema", "maxLength"); got != float64(maxFilterBytes) {
		t.Errorf("filters maxLength = %v", got)
	}
	if got := params[paramPageSize]["description"].(string); !strings.Contains(got, fmt.Sprint(cfg.MaxPageSize)) || !strings.Contains(got, fmt.Sprint(defaultPageSize)) {
		t.Errorf("pageSize description %q lacks the default or the maximum", got)
	}
	info := at(t, doc, "info", "description").(string)
	for _, want := range []string{fmt.Sprint(cfg.MaxBody), fmt.Sprint(cfg.MaxSeedBody)} {
		if !strings.Contains(info, want) {
			t.Errorf("info.description lacks the body limit %s", want)
		}
	}
}

// TestOpenAPIPatternsMatchCode: the document's patterns admit exactly what
// the code's rules admit: a namespace name as validNamespaceName, an Id as
// the store keys one (isCanonicalGUID).
func TestOpenAPIPatternsMatchCode(t *testing.T) {
	t.Parallel()
	name := regexp.MustCompile(namespacePattern)
	for c := range 256 {
		s := string([]byte{byte(c)})
		if name.MatchString(s) != validNamespaceName(s) {
			t.Errorf("the name %q: pattern %v, validNamespaceName %v", s, name.MatchString(s), validNamespaceName(s))
		}
	}
	for _, s := range []string{"", strings.Repeat("a", maxNamespaceName), strings.Repeat("a", maxNamespaceName+1), "a b", "ns-1.x_Y"} {
		if name.MatchString(s) != validNamespaceName(s) {
			t.Errorf("the name %q: pattern %v, validNamespaceName %v", s, name.MatchString(s), validNamespaceName(s))
		}
	}
	guid := regexp.MustCompile(openAPIGUIDPattern)
	for _, s := range []string{"0b6f4ad2-5a57-4cc5-9a0f-7f3c1f7f0c11", "00000000-0000-0000-0000-000000000000", "0B6F4AD2-5A57-4CC5-9A0F-7F3C1F7F0C11",
		"0b6f4ad25a574cc59a0f7f3c1f7f0c11", "{0b6f4ad2-5a57-4cc5-9a0f-7f3c1f7f0c11}", "0b6f4ad2-5a57-4cc5-9a0f-7f3c1f7f0c1", "0b6f4ad2-5a57-4cc5-9a0f-7f3c1f7f0c1g"} {
		if guid.MatchString(s) != isCanonicalGUID(s) {
			t.Errorf("the Id %q: pattern %v, isCanonicalGUID %v", s, guid.MatchString(s), isCanonicalGUID(s))
		}
	}
}

func anyMap[V any](m map[string]V) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestOpenAPIMatchesWire compares the document with what the server
// writes: every key of a real create, update and list answer is in the
// schema, and every required key is in the answer.
func TestOpenAPIMatchesWire(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	schemas := at(t, doc, "components", "schemas").(map[string]any)
	h := consoleHandler(t)
	send := func(method, target, body string) map[string]any {
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != success(method, target) {
			t.Fatalf("%s %s = %d %s", method, target, rec.Code, rec.Body)
		}
		var out map[string]any
		dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
		if err := dec.Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	created := send(http.MethodPost, "/api/v2/resource", `{"FirstName":"Ada","Company":"Engines","Types":[{"Type":"team"}],"Address":{"City":"London"}}`)
	res := at(t, created, "Data", 0).(map[string]any)
	id := res["Id"].(string)
	updated := send(http.MethodPut, "/api/v2/resource/"+id, `{"Id":"`+id+`","DisplayName":null,"FirstName":"Ada","Surname":null,"Company":"E","Position":null,
		"Phone":null,"Mobile":null,"Fax":null,"Email":null,"AddressComment":null,"ExternalID":null,"Status":"inactive","Types":[{"Type":"Customer"}]}`)
	list := send(http.MethodGet, "/api/v2/resource", "")

	seeded := send(http.MethodPost, "/__admin/resources", `[{"Id":"00000000-0000-0000-0000-000000000001","Company":"Zero"},{"Id":"ABCDEF00-0000-4000-8000-000000000001","Company":"Upper"}]`)

	checks := []struct {
		what   string
		value  any
		schema string
		absent []string // optional properties this answer never carries
	}{
		{"create answer", created, "CreateResponse", nil},
		{"created resource", res, "ResourceCreated", nil},
		{"created type", at(t, res, "Types", 0), "RequestorType", []string{"_links", "_embedded"}},
		{"updated resource", updated, "Resource", nil},
		{"updated type", at(t, updated, "Types", 0), "RequestorType", nil},
		{"list answer", list, "ResourcePage", nil},
		{"listed resource", at(t, list, "ResourceList", 0), "Resource", nil},
		{"listed type", at(t, list, "ResourceList", 0, "Types", 0), "RequestorType", nil},
		{"seed answer", seeded, "SeedResponse", nil},
	}
	for _, c := range checks {
		schema := schemas[c.schema].(map[string]any)
		got := keys(c.value)
		var want []string
		for _, k := range keys(schema["properties"]) {
			if !slices.Contains(c.absent, k) {
				want = append(want, k)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s has keys %v; %s has %v", c.what, got, c.schema, want)
		}
		for _, k := range strs(t, schema["required"]) {
			if !slices.Contains(got, k) {
				t.Errorf("%s: %s requires %s, the answer lacks it", c.what, c.schema, k)
			}
		}
	}

	// Every GUID the server writes matches the Id pattern: generated ones
	// and the ones seeds gave, of any version.
	idPattern := regexp.MustCompile(at(t, schemas, "Resource", "properties", "Id", "pattern").(string))
	ids := append(strs(t, seeded["Ids"]), id)
	if !slices.Equal(ids[:2], []string{"00000000-0000-0000-0000-000000000001", "abcdef00-0000-4000-8000-000000000001"}) {
		t.Errorf("seeded Ids = %v", ids[:2])
	}
	for _, id := range ids {
		if !idPattern.MatchString(id) {
			t.Errorf("the Id %s does not match the pattern %s", id, idPattern)
		}
	}
	for _, e := range []any{res, updated} {
		if got := at(t, e, "Types", 0, "Id"); !slices.Contains(anySlice(at(t, schemas, "RequestorType", "properties", "Id", "enum")), got) {
			t.Errorf("type Id %v is not in the enum", got)
		}
	}
}
