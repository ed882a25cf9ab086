package resourcedir

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPropTableContract pins what the contract says of each property, so
// that a change to propTable that changes the API fails here.
func TestPropTableContract(t *testing.T) {
	var wire []string
	for _, s := range propTable {
		wire = append(wire, s.name)
	}
	wantWire := []string{"Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Status",
		"StatusId", "ContractorOrganization", "Types", "ExternalID", "Phone", "Mobile", "Fax", "Email", "AddressComment", "Address"}
	if !slices.Equal(wire, wantWire) {
		t.Errorf("wire order %v, want %v", wire, wantWire)
	}
	limits := map[field]int{fieldFirstName: 50, fieldSurname: 50, fieldCompany: 100, fieldDisplayName: 100}
	for f := range numStringFields {
		if got := maxLength(f); got != limits[f] {
			t.Errorf("%s limit %d, want %d", f, got, limits[f])
		}
	}
	var editable []string
	for _, p := range editableProps {
		editable = append(editable, p.String())
	}
	wantEditable := []string{"Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Phone", "Mobile",
		"Fax", "Email", "AddressComment", "ExternalID", "Status", "Types"}
	if !slices.Equal(editable, wantEditable) {
		t.Errorf("editable %v, want %v", editable, wantEditable)
	}
	wantIndexed := []field{fieldDisplayName, fieldFirstName, fieldSurname, fieldCompany, fieldStatus, fieldExternalID, fieldEmail}
	if !slices.Equal(indexedFields, wantIndexed) {
		t.Errorf("indexed %v, want %v", indexedFields, wantIndexed)
	}
	if fieldNames[fieldStatusID] != "StatusId" || propStatusID.String() != "StatusId" {
		t.Errorf("StatusId is %q", fieldNames[fieldStatusID])
	}
}

// TestPropTableWellFormed: each prop once, update ranks 1..n without gaps.
func TestPropTableWellFormed(t *testing.T) {
	seen := map[prop]bool{}
	var ranks []int
	for _, s := range propTable {
		if seen[s.prop] {
			t.Errorf("%s twice", s.name)
		}
		seen[s.prop] = true
		if s.update > 0 {
			ranks = append(ranks, s.update)
		}
	}
	if len(seen) != int(numProps)+1 {
		t.Errorf("%d props in the table, want %d", len(seen), numProps+1)
	}
	slices.Sort(ranks)
	for i, r := range ranks {
		if r != i+1 {
			t.Fatalf("update ranks %v, want 1..%d", ranks, len(ranks))
		}
	}
}

// TestResourceFieldsMatchPropTable: the struct encoding/json reads bodies
// into reads each string field by its name, in any case, into the slot of
// its field, and reads no other name.
func TestResourceFieldsMatchPropTable(t *testing.T) {
	for f := range numStringFields {
		body := `{"` + strings.ToLower(fieldNames[f]) + `":"v"}`
		b := newResourceFields(bodyJSON)
		if err := json.Unmarshal([]byte(body), b.target()); err != nil {
			t.Fatal(err)
		}
		for g := range numStringFields {
			p := propOf[stringProp](b, prop(g))
			if want := field(g) == f; p.sent != want || (want && string(p.raw) != `"v"`) {
				t.Errorf("%s: slot of %s sent %v raw %s", body, field(g), p.sent, p.raw)
			}
		}
	}
	var names, strs []string
	typ := resourceJSON
	for i := range typ.NumField() {
		sf := typ.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" {
			name = sf.Name
		}
		names = append(names, name)
		if sf.Type == reflect.TypeFor[stringProp]() {
			strs = append(strs, name)
		}
	}
	if !slices.Equal(strs, fieldNames[:numStringFields]) {
		t.Errorf("resourceFields' string properties %v, want the string fields %v", strs, fieldNames[:numStringFields])
	}
	if !slices.Equal(names, resourceNames) {
		t.Errorf("resourceFields reads %v, want %v", names, resourceNames)
	}
}

// TestGeneratorCoversPropTable: generated items carry every property a
// seed item takes, in the API's order, and the generator has a value for
// each string field (a field it never fills would always be null).
func TestGeneratorCoversPropTable(t *testing.T) {
	var buf bytes.Buffer
	if err := GenerateSeed(&buf, 300, 1); err != nil {
		t.Fatal(err)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &items); err != nil {
		t.Fatal(err)
	}
	var want []string // no Id, which the seed derives, nor StatusId
	for _, s := range propTable {
		if s.prop != prop(fieldID) && s.prop != propStatusID {
			want = append(want, s.name)
		}
	}
	valued := map[string]bool{}
	for _, raw := range items {
		var keys []string
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.Token()
		for dec.More() {
			k, _ := dec.Token()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k.(string))
			if s, ok := v.(string); ok && s != "" {
				valued[k.(string)] = true
			}
		}
		if !slices.Equal(keys, want) {
			t.Fatalf("item keys %v, want %v", keys, want)
		}
	}
	for f := fieldID + 1; f < numStringFields; f++ {
		if !valued[fieldNames[f]] {
			t.Errorf("the generator never gives %s a value", f)
		}
	}
}

// TestConsoleShowsPropTable: the console page has a form field for each
// property propTable puts in the form, in its order, and tells console.js
// the columns and text fields.
func TestConsoleShowsPropTable(t *testing.T) {
	t.Parallel()
	rec := serve(consoleHandler(t), http.MethodGet, "/", nil)
	page := rec.Body.String()
	for _, placeholder := range []string{consoleColumns, consoleFormProps, consoleForm} {
		if strings.Contains(page, placeholder) {
			t.Errorf("the page still has %s", placeholder)
		}
	}
	var form []string
	for _, m := range regexp.MustCompile(` id="f-([A-Za-z]+)"`).FindAllStringSubmatch(page, -1) {
		form = append(form, m[1])
	}
	want := []string{"DisplayName", "FirstName", "Surname", "Company", "ContractorOrganization", "Position", "Status",
		"ExternalID", "Email", "Phone", "Mobile", "Fax", "AddressComment", "Types"}
	if !slices.Equal(form, want) {
		t.Errorf("the form's fields are %v, want %v", form, want)
	}
	for _, attr := range []string{
		`data-columns="Id DisplayName FirstName Surname Company Status ExternalID Email Types"`,
		`data-props="DisplayName FirstName Surname Company Position ContractorOrganization ExternalID Phone Mobile Fax Email AddressComment"`,
	} {
		if !strings.Contains(page, attr) {
			t.Errorf("the page lacks %s", attr)
		}
	}
}
