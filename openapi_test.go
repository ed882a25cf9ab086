package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
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
	// Every operation names the answers every request can get.
	for p, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if method == "parameters" || method == "description" {
				continue
			}
			responses := at(t, op, "responses").(map[string]any)
			for _, code := range []string{"200", "401", "403", "405", "429", "500"} {
				if _, ok := responses[code]; !ok {
					t.Errorf("%s %s lacks a %s response", method, p, code)
				}
			}
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

	limits := map[field]int{fieldFirstName: maxFirstName, fieldSurname: maxSurname, fieldCompany: maxCompany, fieldDisplayName: maxDisplayName}
	for f, limit := range limits {
		for _, schema := range []string{"Resource", "ResourceCreated", "CreateRequest", "UpdateRequest", "SeedResource"} {
			if got := at(t, schemas, schema, "properties", fieldNames[f], "maxLength"); got != float64(limit) {
				t.Errorf("%s.%s maxLength = %v, want %d", schema, fieldNames[f], got, limit)
			}
		}
	}

	for _, name := range []string{"RequestorType", "RequestorTypeLinked"} {
		alts := at(t, schemas, name, "oneOf").([]any)
		if len(alts) != len(requestorTypeTable) {
			t.Fatalf("%s has %d alternatives, want %d", name, len(alts), len(requestorTypeTable))
		}
		for i, e := range requestorTypeTable {
			if id, typ := at(t, alts[i], "properties", "Id", "const"), at(t, alts[i], "properties", "Type", "const"); id != float64(e.id) || typ != e.name {
				t.Errorf("%s[%d] = %v %v, want %d %s", name, i, id, typ, e.id, e.name)
			}
		}
	}
	var typeNames []string
	for _, e := range requestorTypeTable {
		typeNames = append(typeNames, e.name)
	}
	if got := at(t, schemas, "CreateRequest", "properties", "Types", "items", "properties", "Type", "pattern"); got != caseInsensitive(typeNames) {
		t.Errorf("CreateRequest Types pattern = %v", got)
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
		if rec.Code != http.StatusOK {
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

	checks := []struct {
		what   string
		value  any
		schema string
	}{
		{"create answer", created, "CreateResponse"},
		{"created resource", res, "ResourceCreated"},
		{"created type", at(t, res, "Types", 0), "RequestorType"},
		{"updated resource", updated, "Resource"},
		{"updated type", at(t, updated, "Types", 0), "RequestorTypeLinked"},
		{"list answer", list, "ResourcePage"},
		{"listed resource", at(t, list, "ResourceList", 0), "Resource"},
	}
	for _, c := range checks {
		schema := schemas[c.schema].(map[string]any)
		if alts, ok := schema["oneOf"].([]any); ok {
			schema = alts[0].(map[string]any) // the alternatives share their keys
		}
		got := keys(c.value)
		want := keys(schema["properties"])
		if !slices.Equal(got, want) {
			t.Errorf("%s has keys %v; %s has %v", c.what, got, c.schema, want)
		}
		if required := sorted(strs(t, schema["required"])); !slices.Equal(required, got) {
			t.Errorf("%s: %s requires %v, the answer has %v", c.what, c.schema, required, got)
		}
	}
}
