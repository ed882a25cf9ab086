package main

// Tests of handlers.go: create, update and list over HTTP, checked against
// behaviour.md sections 1 to 4 and 6 rule by rule.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// wantResource is an expected resource; the test writes it in the
// contract's property order itself rather than trusting the encoder.
type wantResource struct {
	ID                                                    string // "" writes the placeholder "ID"
	DisplayName, FirstName, Surname, Company, Position    any    // nil is null, else a string
	Status                                                string // "" is Active
	Types                                                 []string
	ExternalID, Phone, Mobile, Fax, Email, AddressComment any
	Address                                               string // raw JSON; "" is null
}

// apiTypeIDs is the spec's requestor type table.
var apiTypeIDs = map[string]int{"Team": 2, "Customer": 4, "Contractor": 8, "Employee": 16, "Company": 32}

func (w wantResource) wire(links bool) string {
	id := w.ID
	if id == "" {
		id = "ID"
	}
	status, statusID := "Active", 1
	if w.Status != "" {
		status = w.Status
	}
	if status == "Inactive" {
		statusID = 2
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"Id":%s,"DisplayName":%s,"FirstName":%s,"Surname":%s,"Company":%s,"Position":%s,"Status":%s,"StatusId":%d,"Types":[`,
		encodeJSON(id), encodeJSON(w.DisplayName), encodeJSON(w.FirstName), encodeJSON(w.Surname), encodeJSON(w.Company),
		encodeJSON(w.Position), encodeJSON(status), statusID)
	for i, name := range w.Types {
		if i > 0 {
			b.WriteByte(',')
		}
		typeID, ok := apiTypeIDs[name]
		if !ok {
			panic("no requestor type " + name)
		}
		fmt.Fprintf(&b, `{"Id":%d,"Type":%s`, typeID, encodeJSON(name))
		if links {
			b.WriteString(`,"_links":[],"_embedded":null`)
		}
		b.WriteByte('}')
	}
	address := "null"
	if w.Address != "" {
		address = w.Address
	}
	fmt.Fprintf(&b, `],"ExternalID":%s,"Phone":%s,"Mobile":%s,"Fax":%s,"Email":%s,"AddressComment":%s,"Address":%s`,
		encodeJSON(w.ExternalID), encodeJSON(w.Phone), encodeJSON(w.Mobile), encodeJSON(w.Fax), encodeJSON(w.Email),
		encodeJSON(w.AddressComment), address)
	if links {
		b.WriteString(`,"_links":[],"_embedded":null`)
	}
	b.WriteByte('}')
	return b.String()
}

func (w wantResource) created() string { return `{"Data":[` + w.wire(false) + `],"Total":1}` }

var apiRep = strings.Repeat

func TestCreate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		raw  string // the whole expected response, when given
		want wantResource
	}{
		{
			name: "every property, written in the contract's order",
			body: `{"Address":{"Street":"St James's Square","No":12,"Lines":["a","b"],"Geo":null},"AddressComment":"Near the park",
				"Email":"ada@example.org","Fax":"+44 20 0000","Mobile":"+44 7000","Phone":"+44 20 1111","ExternalID":"X-1",
				"Types":[{"Type":"Employee"},{"Type":"Customer"}],"Status":"Active","Position":"Countess",
				"Company":"Analytical Engines","Surname":"Lovelace","FirstName":"Ada","DisplayName":"Ada Lovelace"}`,
			raw: `{"Data":[{"Id":"ID","DisplayName":"Ada Lovelace","FirstName":"Ada","Surname":"Lovelace","Company":"Analytical Engines",` +
				`"Position":"Countess","Status":"Active","StatusId":1,"Types":[{"Id":16,"Type":"Employee"},{"Id":4,"Type":"Customer"}],` +
				`"ExternalID":"X-1","Phone":"+44 20 1111","Mobile":"+44 7000","Fax":"+44 20 0000","Email":"ada@example.org",` +
				`"AddressComment":"Near the park","Address":{"Street":"St James's Square","No":12,"Lines":["a","b"],"Geo":null}}],"Total":1}`,
		},
		{
			name: "property names are case-insensitive",
			body: `{"displayname":"D","FIRSTNAME":"F","sUrNaMe":"S","company":"C","POSITION":"P","status":"inactive",
				"TYPES":[{"TYPE":"team"},{"type":"CONTRACTOR"}],"externalid":"E","phone":"1","MOBILE":"2","fax":"3",
				"EMAIL":"e@x","addresscomment":"AC","ADDRESS":{"k":1}}`,
			want: wantResource{DisplayName: "D", FirstName: "F", Surname: "S", Company: "C", Position: "P", Status: "Inactive",
				Types: []string{"Team", "Contractor"}, ExternalID: "E", Phone: "1", Mobile: "2", Fax: "3", Email: "e@x",
				AddressComment: "AC", Address: `{"k":1}`},
		},
		{
			name: "unknown properties are ignored",
			body: `{"Company":"C","Nickname":"x","Extra":{"deep":[1,2,{"a":null}]},"_links":[1],"_embedded":{"a":1},"Manager":12,"Types2":"x"}`,
			want: wantResource{DisplayName: "C", Company: "C"},
		},
		{
			name: "StatusId in the body is ignored",
			body: `{"Company":"C","StatusId":2}`,
			want: wantResource{DisplayName: "C", Company: "C"},
		},
		{
			name: "StatusId is derived from Status, not taken from the body",
			body: `{"Company":"C","Status":"Inactive","statusid":1}`,
			want: wantResource{DisplayName: "C", Company: "C", Status: "Inactive"},
		},
		{
			name: "null and empty strings are kept apart",
			body: `{"DisplayName":"D","FirstName":"","Surname":null,"Company":"C","Position":"","ExternalID":"","Phone":null,
				"Mobile":"","Fax":"","Email":null,"AddressComment":""}`,
			want: wantResource{DisplayName: "D", FirstName: "", Company: "C", Position: "", ExternalID: "", Mobile: "", Fax: "",
				AddressComment: ""},
		},
		{
			name: "empty Company is kept when a name is there",
			body: `{"FirstName":null,"Surname":"S","Company":"","Phone":""}`,
			want: wantResource{DisplayName: "S", Surname: "S", Company: "", Phone: ""},
		},
		{
			name: "omitted optional strings are null",
			body: `{"DisplayName":"D","Company":"C"}`,
			want: wantResource{DisplayName: "D", Company: "C"},
		},
		{
			name: "Address is stored and returned as given",
			body: `{"Company":"C","Address":{"Line1":"1 Main St","Zip":"01234","N":1.50,"Big":123456789012345678901234567890,
				"E":-1e400,"U":"\u00e9\u2028\"","Nested":{"A":[true,false,null,{}]},"Dup":1,"dup":2,"Dup":3}}`,
			want: wantResource{DisplayName: "C", Company: "C",
				Address: `{"Line1":"1 Main St","Zip":"01234","N":1.50,"Big":123456789012345678901234567890,"E":-1e400,` +
					`"U":"\u00e9\u2028\"","Nested":{"A":[true,false,null,{}]},"Dup":1,"dup":2,"Dup":3}`},
		},
		{
			name: "Address with white space loses only the white space",
			body: "{\"Company\":\"C\",\"Address\":{ \"A\" :\n[ 1 , \"x y\" ] }}",
			want: wantResource{DisplayName: "C", Company: "C", Address: `{"A":[1,"x y"]}`},
		},
		{
			name: "empty Address object",
			body: `{"Company":"C","Address":{}}`,
			want: wantResource{DisplayName: "C", Company: "C", Address: `{}`},
		},
		{
			name: "null Address",
			body: `{"Company":"C","Address":null}`,
			want: wantResource{DisplayName: "C", Company: "C"},
		},
		{
			name: "Types by name in any case, with the table's ids, Id in an entry ignored, duplicates collapsed keeping the first",
			body: `{"Company":"C","Types":[{"Type":"employee"},{"Type":"TEAM","Id":999},{"Id":4,"Type":"Contractor"},
				{"Type":"Employee","Id":16},{"type":"customer"},{"Id":"x","Type":"COMPANY"},{"Type":"Team"}]}`,
			want: wantResource{DisplayName: "C", Company: "C", Types: []string{"Employee", "Team", "Contractor", "Customer", "Company"}},
		},
		{
			name: "Types entries keep unknown properties out",
			body: `{"Company":"C","Types":[{"Type":"Team","_links":[1],"Name":"x"}]}`,
			want: wantResource{DisplayName: "C", Company: "C", Types: []string{"Team"}},
		},
		{
			name: "null Types is an empty array",
			body: `{"Company":"C","Types":null}`,
			want: wantResource{DisplayName: "C", Company: "C"},
		},
		{
			name: "empty Types",
			body: `{"Company":"C","Types":[]}`,
			want: wantResource{DisplayName: "C", Company: "C"},
		},
		{
			name: "null Status means Active",
			body: `{"Company":"C","Status":null}`,
			want: wantResource{DisplayName: "C", Company: "C"},
		},
		{
			name: "Status is matched case-insensitively and stored canonical",
			body: `{"Company":"C","Status":"ACTIVE"}`,
			want: wantResource{DisplayName: "C", Company: "C"},
		},
		{
			name: "Inactive",
			body: `{"Company":"C","Status":"iNaCtIvE"}`,
			want: wantResource{DisplayName: "C", Company: "C", Status: "Inactive"},
		},
		{
			name: "Id in the body is ignored",
			body: `{"Id":"00000000-0000-4000-8000-000000000001","Company":"C"}`,
			want: wantResource{DisplayName: "C", Company: "C"},
		},
		{
			name: "DisplayName generated from FirstName, Surname and Company",
			body: `{"FirstName":"Ada","Surname":"Lovelace","Company":"Analytical Engines"}`,
			want: wantResource{DisplayName: "Ada Lovelace Analytical Engines", FirstName: "Ada", Surname: "Lovelace",
				Company: "Analytical Engines"},
		},
		{
			name: "generated from trimmed parts, which are stored as sent",
			body: `{"FirstName":"  Ada\t","Surname":"\nLovelace ","Company":" ","DisplayName":null}`,
			want: wantResource{DisplayName: "Ada Lovelace", FirstName: "  Ada\t", Surname: "\nLovelace ", Company: " "},
		},
		{
			name: "white-space-only parts are left out",
			body: `{"FirstName":"   ","Surname":"Lovelace","Company":"AE"}`,
			want: wantResource{DisplayName: "Lovelace AE", FirstName: "   ", Surname: "Lovelace", Company: "AE"},
		},
		{
			name: "inner spaces of a part are kept",
			body: `{"FirstName":"Ada  Augusta","Company":"  Analytical   Engines "}`,
			want: wantResource{DisplayName: "Ada  Augusta Analytical   Engines", FirstName: "Ada  Augusta", Company: "  Analytical   Engines "},
		},
		{
			name: "empty DisplayName is generated",
			body: `{"DisplayName":"","FirstName":"Ada","Surname":"Lovelace"}`,
			want: wantResource{DisplayName: "Ada Lovelace", FirstName: "Ada", Surname: "Lovelace"},
		},
		{
			name: "white-space DisplayName is generated",
			body: `{"DisplayName":" \t ","Surname":"Lovelace"}`,
			want: wantResource{DisplayName: "Lovelace", Surname: "Lovelace"},
		},
		{
			name: "Company alone",
			body: `{"Company":"Acme"}`,
			want: wantResource{DisplayName: "Acme", Company: "Acme"},
		},
		{
			name: "FirstName alone needs no Company",
			body: `{"FirstName":"Ada"}`,
			want: wantResource{DisplayName: "Ada", FirstName: "Ada"},
		},
		{
			name: "Surname alone needs no Company",
			body: `{"Surname":"Lovelace","Company":null}`,
			want: wantResource{DisplayName: "Lovelace", Surname: "Lovelace"},
		},
		{
			name: "a sent DisplayName is stored as sent",
			body: `{"DisplayName":"  Ada  ","Company":"C"}`,
			want: wantResource{DisplayName: "  Ada  ", Company: "C"},
		},
		{
			name: "every limit exactly, in multi-byte characters",
			body: `{"FirstName":"` + apiRep("é", 50) + `","Surname":"` + apiRep("ж", 50) + `","Company":"` + apiRep("語", 100) +
				`","DisplayName":"` + apiRep("ß", 100) + `"}`,
			want: wantResource{DisplayName: apiRep("ß", 100), FirstName: apiRep("é", 50), Surname: apiRep("ж", 50), Company: apiRep("語", 100)},
		},
		{
			name: "DisplayName of 100 characters outside the BMP",
			body: `{"Company":"C","DisplayName":"` + apiRep("😀", 100) + `"}`,
			want: wantResource{DisplayName: apiRep("😀", 100), Company: "C"},
		},
		{
			name: "generated DisplayName of exactly 100 characters",
			body: `{"FirstName":"` + apiRep("é", 49) + `","Surname":"` + apiRep("ж", 50) + `"}`,
			want: wantResource{DisplayName: apiRep("é", 49) + " " + apiRep("ж", 50), FirstName: apiRep("é", 49), Surname: apiRep("ж", 50)},
		},
		{
			name: "the limit of a generated name counts the trimmed parts",
			body: `{"FirstName":" ` + apiRep("é", 49) + `","Surname":"` + apiRep("ж", 49) + ` ","Company":" "}`,
			want: wantResource{DisplayName: apiRep("é", 49) + " " + apiRep("ж", 49), FirstName: " " + apiRep("é", 49), Surname: apiRep("ж", 49) + " ",
				Company: " "},
		},
		{
			name: "strings are escaped as JSON, HTML characters left alone",
			body: `{"Company":"C","DisplayName":"<b>\"Tom\" & Jerry\\</b>\n\t\u0001\u2028","Email":"a+b@x.org"}`,
			want: wantResource{DisplayName: "<b>\"Tom\" & Jerry\\</b>\n\t\u0001\u2028", Company: "C", Email: "a+b@x.org"},
		},
		{
			name: "invalid UTF-8 in a string becomes U+FFFD",
			body: "{\"Company\":\"C\",\"Position\":\"a\xffb\"}",
			want: wantResource{DisplayName: "C", Company: "C", Position: "a\ufffdb"},
		},
		{
			name: "a duplicated property, last one wins",
			body: `{"Company":"C","Position":"first","position":"second"}`,
			want: wantResource{DisplayName: "C", Company: "C", Position: "second"},
		},
	}
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, got := a.on(t).create(c.body)
			want := c.raw
			if want == "" {
				want = c.want.created()
			}
			if string(got) != want {
				t.Errorf("body %s\n got %s\nwant %s", c.body, got, want)
			}
		})
	}
}

func TestCreateGeneratesID(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	const sent = "00000000-0000-4000-8000-000000000001"
	seen := map[string]bool{sent: true}
	for range 50 {
		id, _ := a.on(t).create(`{"Id":"` + sent + `","Company":"C"}`)
		if seen[id] {
			t.Fatalf("Id %s given twice (or taken from the body)", id)
		}
		seen[id] = true
	}
	// The Id in the body names nothing: it was not stored.
	r := a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.filters="+url.QueryEscape("Id~eq~'"+sent+"'"), "")
	if r.Status != http.StatusOK || !bytes.HasPrefix(r.Body, []byte(`{"TotalResults":0,`)) {
		t.Errorf("the body's Id was stored: %d %s", r.Status, r.Body)
	}
}

const apiAda = `{"DisplayName":"Ada Lovelace","FirstName":"Ada","Surname":"Lovelace","Company":"Analytical Engines",
	"Position":"Countess","Phone":"","Email":"ada@example.org","AddressComment":"London","ExternalID":"X-1",
	"Types":[{"Type":"Employee"}],"Address":{"Street":"St James's Square","No":12}}`

// apiAdaWant is apiAda as stored, and so what putBody(id) gives back.
func apiAdaWant(id string) wantResource {
	return wantResource{ID: id, DisplayName: "Ada Lovelace", FirstName: "Ada", Surname: "Lovelace", Company: "Analytical Engines",
		Position: "Countess", Types: []string{"Employee"}, ExternalID: "X-1", Phone: "", Email: "ada@example.org",
		AddressComment: "London", Address: `{"Street":"St James's Square","No":12}`}
}

func TestUpdate(t *testing.T) {
	t.Parallel()
	const unknown = "00000000-0000-4000-8000-00000000abcd"
	allKeys := map[string]string{}
	for _, k := range []string{"Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Phone", "Mobile", "Fax",
		"Email", "AddressComment", "ExternalID", "Status", "Types"} {
		allKeys[k] = "The " + k + " property is required in an update (its value may be null)."
	}
	// Status may not be null in an update, so its message does not say it may.
	allKeys["Status"] = "The Status property is required in an update, with the value 'Active' or 'Inactive'."
	allKeys["Company"] = "" // also "Company is required…": the body has no name at all
	cases := []struct {
		name   string
		path   func(id string) string // default: the resource's own path
		body   func(id string) string
		status int
		want   func(w *wantResource) // edits apiAdaWant, for a 200
		msg    string
		ms     map[string]string
	}{
		{
			name:   "the body as it is",
			body:   func(id string) string { return putBody(id) },
			status: 200,
			want:   func(w *wantResource) {},
		},
		{
			name: "full replacement: Inactive, types by name, Address and StatusId ignored",
			body: func(id string) string {
				return putBody(id, "Status", "inactive", "Position", nil, "Phone", "0", "Mobile", "", "StatusId", 1,
					"Types", []any{map[string]any{"Id": 2, "Type": "customer"}, map[string]any{"Type": "TEAM", "Id": 4},
						map[string]any{"Type": "Customer"}},
					"Address", map[string]any{"Street": "elsewhere"})
			},
			status: 200,
			want: func(w *wantResource) {
				w.Status, w.Position, w.Phone, w.Mobile, w.Types = "Inactive", nil, "0", "", []string{"Customer", "Team"}
			},
		},
		{
			name:   "null Address is ignored too",
			body:   func(id string) string { return putBody(id, "Address", nil) },
			status: 200,
			want:   func(w *wantResource) {},
		},
		{
			name:   "Status is canonicalised",
			body:   func(id string) string { return putBody(id, "Status", "ACTIVE") },
			status: 200,
			want:   func(w *wantResource) {},
		},
		{
			name:   "empty Types",
			body:   func(id string) string { return putBody(id, "Types", []any{}) },
			status: 200,
			want:   func(w *wantResource) { w.Types = nil },
		},
		{
			name:   "null Types",
			body:   func(id string) string { return putBody(id, "Types", nil) },
			status: 200,
			want:   func(w *wantResource) { w.Types = nil },
		},
		{
			name: "keys in any case, null values count as present",
			body: func(id string) string {
				return `{"id":"` + id + `","displayname":null,"FIRSTNAME":null,"surName":null,"company":"Acme","position":null,
					"phone":null,"mobile":null,"fax":null,"email":null,"addresscomment":null,"externalid":null,"STATUS":"Active","types":null}`
			},
			status: 200,
			want: func(w *wantResource) {
				*w = wantResource{ID: w.ID, DisplayName: "Acme", Company: "Acme", Address: w.Address}
			},
		},
		{
			name: "DisplayName null is generated from trimmed parts",
			body: func(id string) string {
				return putBody(id, "DisplayName", nil, "FirstName", " Ada ", "Surname", nil, "Company", "AE")
			},
			status: 200,
			want:   func(w *wantResource) { w.DisplayName, w.FirstName, w.Surname, w.Company = "Ada AE", " Ada ", nil, "AE" },
		},
		{
			name: "limits exactly",
			body: func(id string) string {
				return putBody(id, "DisplayName", apiRep("ß", 100), "FirstName", apiRep("é", 50))
			},
			status: 200,
			want:   func(w *wantResource) { w.DisplayName, w.FirstName = apiRep("ß", 100), apiRep("é", 50) },
		},
		{
			name:   "upper-case GUID in the path and the body",
			path:   func(id string) string { return "/api/v2/resource/" + strings.ToUpper(id) },
			body:   func(id string) string { return putBody(strings.ToUpper(id)) },
			status: 200,
			want:   func(w *wantResource) {},
		},
		{
			name:   "upper-case GUID in the path only",
			path:   func(id string) string { return "/api/v2/resource/" + strings.ToUpper(id) },
			body:   func(id string) string { return putBody(id) },
			status: 200,
			want:   func(w *wantResource) {},
		},
		{
			name:   "upper-case GUID in the body only",
			body:   func(id string) string { return putBody(strings.ToUpper(id)) },
			status: 200,
			want:   func(w *wantResource) {},
		},
		{
			name:   "path not a GUID",
			path:   func(string) string { return "/api/v2/resource/not-a-guid" },
			body:   func(id string) string { return putBody(id) },
			status: 400,
			msg:    `The id in the path, "not-a-guid", is not a GUID.`,
		},
		{
			name:   "path a number",
			path:   func(string) string { return "/api/v2/resource/12345" },
			body:   func(id string) string { return putBody(id) },
			status: 400,
			msg:    `The id in the path, "12345", is not a GUID.`,
		},
		{
			name:   "path a GUID with a character too many",
			path:   func(id string) string { return "/api/v2/resource/" + id + "0" },
			body:   func(id string) string { return putBody(id) },
			status: 400,
			msg:    "is not a GUID.",
		},
		{
			name:   "unknown GUID",
			path:   func(string) string { return "/api/v2/resource/" + unknown },
			body:   func(string) string { return putBody(unknown) },
			status: 404,
			msg:    "No resource has the id " + unknown + ".",
		},
		{
			name:   "unknown GUID in upper case",
			path:   func(string) string { return "/api/v2/resource/" + strings.ToUpper(unknown) },
			body:   func(string) string { return putBody(unknown) },
			status: 404,
			msg:    "No resource has the id " + unknown + ".",
		},
		{
			name:   "empty object: every editable key is missing",
			body:   func(string) string { return `{}` },
			status: 400,
			msg:    "Partial updates are not supported: the body lacks Id, DisplayName, FirstName, Surname, Company, Position, Phone, Mobile, Fax, Email, AddressComment, ExternalID, Status, Types. Send every editable property with its current or new value.",
			ms:     allKeys,
		},
		{
			name:   "two keys missing",
			body:   func(id string) string { return putBody(id, "Fax", omit, "Types", omit) },
			status: 400,
			msg:    "Partial updates are not supported: the body lacks Fax, Types. Send every editable property with its current or new value.",
			ms: map[string]string{"Fax": "The Fax property is required in an update (its value may be null).",
				"Types": "The Types property is required in an update (its value may be null)."},
		},
		{
			name:   "Id missing",
			body:   func(id string) string { return putBody(id, "Id", omit) },
			status: 400,
			msg:    "the body lacks Id.",
			ms:     map[string]string{"Id": "The Id property is required"},
		},
		{
			name:   "Status missing",
			body:   func(id string) string { return putBody(id, "Status", omit) },
			status: 400,
			msg:    "the body lacks Status.",
			ms:     map[string]string{"Status": "The Status property is required"},
		},
		{
			name:   "a missing key and another fault are reported together",
			body:   func(id string) string { return putBody(id, "Fax", omit, "FirstName", apiRep("é", 51)) },
			status: 400,
			msg:    "the body lacks Fax.",
			ms:     map[string]string{"Fax": "required", "FirstName": "51 characters"},
		},
		{
			name:   "body Id differs from the path",
			body:   func(string) string { return putBody(unknown) },
			status: 400,
			msg:    "The request is invalid.",
			ms:     map[string]string{"Id": `Id in the body ("` + unknown + `") must equal the id in the path`},
		},
		{
			name:   "body Id null",
			body:   func(string) string { return putBody("", "Id", nil) },
			status: 400,
			msg:    "The request is invalid.",
			ms:     map[string]string{"Id": "must equal the id in the path"},
		},
		{
			name:   "body Id not a GUID",
			body:   func(string) string { return putBody("abc") },
			status: 400,
			msg:    "The request is invalid.",
			ms:     map[string]string{"Id": `Id in the body ("abc") must equal the id in the path`},
		},
		{
			name:   "body Id not a string",
			body:   func(string) string { return putBody("", "Id", 7) },
			status: 400,
			msg:    "The request is invalid.",
			ms:     map[string]string{"Id": "Id must be a string or null."},
		},
		{
			name:   "Status null",
			body:   func(id string) string { return putBody(id, "Status", nil) },
			status: 400,
			msg:    "The request is invalid.",
			ms:     map[string]string{"Status": "Status must be 'Active' or 'Inactive' in an update; null is not allowed."},
		},
		{
			name:   "Status unknown",
			body:   func(id string) string { return putBody(id, "Status", "Deleted") },
			status: 400,
			msg:    "The request is invalid.",
			ms:     map[string]string{"Status": `not "Deleted"`},
		},
		{
			name:   "DisplayName one over",
			body:   func(id string) string { return putBody(id, "DisplayName", apiRep("ß", 101)) },
			status: 400,
			msg:    "The request is invalid.",
			ms:     map[string]string{"DisplayName": "DisplayName is 101 characters long; the limit is 100."},
		},
		{
			name: "generated DisplayName too long",
			body: func(id string) string {
				return putBody(id, "DisplayName", nil, "FirstName", apiRep("é", 50), "Surname", apiRep("ж", 50))
			},
			status: 400,
			msg:    "The request is invalid.",
			ms:     map[string]string{"DisplayName": "Send a DisplayName"},
		},
		{
			name: "Company rule",
			body: func(id string) string {
				return putBody(id, "FirstName", nil, "Surname", "  ", "Company", nil)
			},
			status: 400,
			msg:    "The request is invalid.",
			ms:     map[string]string{"Company": "Company is required when FirstName and Surname are both empty."},
		},
		{
			name:   "unknown requestor type",
			body:   func(id string) string { return putBody(id, "Types", []any{map[string]any{"Id": 16}}) },
			status: 400,
			msg:    "The request is invalid.",
			ms:     map[string]string{"Types[0].Type": "Type is required"},
		},
		{
			name:   "wrong JSON types",
			body:   func(id string) string { return putBody(id, "Types", "Employee", "Phone", 5, "Fax", []any{}) },
			status: 400,
			msg:    "The request is invalid.",
			ms:     map[string]string{"Types": "Types must be an array", "Phone": "Phone must be a string or null.", "Fax": "Fax must be a string or null."},
		},
		{
			name:   "Address is ignored whatever its type",
			body:   func(id string) string { return putBody(id, "Address", "x", "address", []any{1}) },
			status: 200,
			want:   func(w *wantResource) {},
		},
		{
			name: "every violation at once, the Id's included",
			body: func(string) string {
				return putBody(unknown, "FirstName", apiRep("é", 51), "Types", []any{map[string]any{"Type": "x"}}, "Status", nil)
			},
			status: 400,
			msg:    "The request is invalid.",
			ms:     map[string]string{"Id": "must equal the id in the path", "FirstName": "51 characters", "Types[0].Type": `"x"`, "Status": "null is not allowed"},
		},
	}
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, _ := a.on(t).create(apiAda)
			path := "/api/v2/resource/" + id
			if c.path != nil {
				path = c.path(id)
			}
			r := a.on(t).do(http.MethodPut, path, c.body(id))
			if c.status != http.StatusOK {
				r.wantError(t, c.status, c.msg, c.ms)
				// Nothing changed.
				list := a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.filters="+url.QueryEscape("Id~eq~'"+id+"'"), "")
				want := `{"TotalResults":1,"TotalPages":1,"Page":1,"ResourceList":[` + apiAdaWant(id).wire(true) + `],"_links":[],"_embedded":null}`
				if string(list.Body) != want {
					t.Errorf("after a failed update the resource is\n%s\nwant\n%s", list.Body, want)
				}
				return
			}
			w := apiAdaWant(id)
			c.want(&w)
			if r.Status != http.StatusOK || string(r.Body) != w.wire(true) {
				t.Errorf("status %d\n got %s\nwant %s", r.Status, r.Body, w.wire(true))
			}
			// The list shows what the update answered.
			list := a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.filters="+url.QueryEscape("Id~eq~'"+id+"'"), "")
			if want := `{"TotalResults":1,"TotalPages":1,"Page":1,"ResourceList":[` + w.wire(true) + `],"_links":[],"_embedded":null}`; string(list.Body) != want {
				t.Errorf("listed after the update\n got %s\nwant %s", list.Body, want)
			}
		})
	}
}

func TestUpdateStatusTransitions(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	id, _ := a.on(t).create(apiAda)
	for _, status := range []string{"Inactive", "Inactive", "Active", "inactive", "active", "Active"} {
		r := a.on(t).do(http.MethodPut, "/api/v2/resource/"+id, putBody(id, "Status", status))
		w := apiAdaWant(id)
		w.Status = strings.ToUpper(status[:1]) + status[1:]
		if r.Status != http.StatusOK || string(r.Body) != w.wire(true) {
			t.Fatalf("Status %s: %d\n got %s\nwant %s", status, r.Status, r.Body, w.wire(true))
		}
	}
}

func TestUpdateKeepsCreationOrder(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	var ids []string
	for _, name := range []string{"A", "B", "C", "D"} {
		id, _ := a.on(t).create(`{"Company":"` + name + `"}`)
		ids = append(ids, id)
	}
	for _, i := range []int{2, 0, 3, 0} {
		body := putBody(ids[i], "DisplayName", "Z"+strconv.Itoa(i), "Status", "Inactive")
		if r := a.on(t).do(http.MethodPut, "/api/v2/resource/"+ids[i], body); r.Status != http.StatusOK {
			t.Fatalf("update: %d %s", r.Status, r.Body)
		}
	}
	l := a.on(t).list("")
	if !slices.Equal(l.ids(), ids) {
		t.Errorf("after updates the default order is %v, want creation order %v", l.ids(), ids)
	}
	if got, want := l.names(), []string{"Z0", "B", "Z2", "Z3"}; !slices.Equal(got, want) {
		t.Errorf("DisplayNames %v, want %v", got, want)
	}
	// Ties in a sort follow creation order too.
	if got, want := a.on(t).list("requestParams.sorts=Status-desc").ids(), []string{ids[0], ids[2], ids[3], ids[1]}; !slices.Equal(got, want) {
		t.Errorf("sorted by Status-desc: %v, want %v", got, want)
	}
}

// apiList is a decoded list response.
type apiList struct {
	TotalResults, TotalPages, Page int
	ResourceList                   []struct {
		Id          string
		DisplayName *string
	}
}

func (l apiList) ids() []string {
	out := []string{}
	for _, r := range l.ResourceList {
		out = append(out, r.Id)
	}
	return out
}

func (l apiList) names() []string {
	out := []string{}
	for _, r := range l.ResourceList {
		out = append(out, *r.DisplayName)
	}
	return out
}

// list gets /api/v2/resource?query, requires a 200 and checks the shape of
// the response.
func (a *testClient) list(query string) apiList {
	t := a.t
	t.Helper()
	r := a.do(http.MethodGet, "/api/v2/resource?"+query, "")
	if r.Status != http.StatusOK {
		t.Fatalf("list %s: %d %s", query, r.Status, r.Body)
	}
	if keys, _ := topKeys(r.Body); !slices.Equal(keys, []string{"TotalResults", "TotalPages", "Page", "ResourceList", "_links", "_embedded"}) {
		t.Errorf("list properties %v, want the list properties", keys)
	}
	if !bytes.HasSuffix(r.Body, []byte(`],"_links":[],"_embedded":null}`)) {
		t.Errorf("list body does not end with empty _links and null _embedded: %s", r.Body)
	}
	var l apiList
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	if err := dec.Decode(&l); err != nil {
		t.Fatalf("list %s: %v", query, err)
	}
	var items struct{ ResourceList []json.RawMessage }
	if err := json.Unmarshal(r.Body, &items); err != nil {
		t.Fatal(err)
	}
	for _, item := range items.ResourceList {
		if !bytes.HasSuffix(item, []byte(`,"_links":[],"_embedded":null}`)) {
			t.Errorf("list item without _links and _embedded: %s", item)
		}
	}
	return l
}

// apiSeed stores resources made from create bodies straight through the
// store, for lists too long to post one by one.
func apiSeed(t testing.TB, s *Store, bodies ...string) []string {
	t.Helper()
	var ids []string
	for _, body := range bodies {
		r, err := buildBody([]byte(body), modeCreate, "")
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		r, err = s.Create(r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID())
	}
	return ids
}

func apiNumbered(n int) []string {
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = fmt.Sprintf(`{"DisplayName":"R%04d","Company":"C"}`, i+1)
	}
	return bodies
}

func apiNames(from, to int) []string {
	out := []string{}
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("R%04d", i))
	}
	return out
}

func TestListEmpty(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	for _, q := range []string{"", "requestParams.page=3&requestParams.pageSize=7", "requestParams.filters=" + url.QueryEscape("DisplayName~eq~'x'")} {
		r := a.on(t).do(http.MethodGet, "/api/v2/resource?"+q, "")
		page := "1"
		if strings.Contains(q, "page=3") {
			page = "3"
		}
		if want := `{"TotalResults":0,"TotalPages":0,"Page":` + page + `,"ResourceList":[],"_links":[],"_embedded":null}`; r.Status != 200 || string(r.Body) != want {
			t.Errorf("%q: %d\n got %s\nwant %s", q, r.Status, r.Body, want)
		}
	}
}

func TestListExactBody(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	id1, _ := a.on(t).create(apiAda)
	id2, _ := a.on(t).create(`{"Company":"Acme","Status":"Inactive","Types":[{"Type":"Team"},{"Type":"Company"}],"Phone":"","Fax":""}`)
	w1 := apiAdaWant(id1)
	w2 := wantResource{ID: id2, DisplayName: "Acme", Company: "Acme", Status: "Inactive", Types: []string{"Team", "Company"}, Phone: "", Fax: ""}
	r := a.on(t).do(http.MethodGet, "/api/v2/resource", "")
	want := `{"TotalResults":2,"TotalPages":1,"Page":1,"ResourceList":[` + w1.wire(true) + `,` + w2.wire(true) + `],"_links":[],"_embedded":null}`
	if r.Status != http.StatusOK || string(r.Body) != want {
		t.Errorf("%d\n got %s\nwant %s", r.Status, r.Body, want)
	}
}

func TestListPaging(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	apiSeed(t, a.store, apiNumbered(45)...)
	cases := []struct {
		query             string
		page, totalPages  int
		from, to          int // DisplayNames R<from>..R<to>; to < from for none
		totalResults, err int
	}{
		{"", 1, 3, 1, 20, 45, 0},
		{"requestParams.page=1", 1, 3, 1, 20, 45, 0},
		{"requestParams.page=2", 2, 3, 21, 40, 45, 0},
		{"requestParams.page=3", 3, 3, 41, 45, 45, 0},
		{"requestParams.page=4", 4, 3, 1, 0, 45, 0},
		{"requestParams.page=1000000", 1000000, 3, 1, 0, 45, 0},
		{"requestParams.page=9223372036854775807", 9223372036854775807, 3, 1, 0, 45, 0},
		{"requestParams.pageSize=45", 1, 1, 1, 45, 45, 0},
		{"requestParams.pageSize=44&requestParams.page=2", 2, 2, 45, 45, 45, 0},
		{"requestParams.pageSize=46", 1, 1, 1, 45, 45, 0},
		{"requestParams.pageSize=1&requestParams.page=45", 45, 45, 45, 45, 45, 0},
		{"requestParams.pageSize=9223372036854775807", 1, 1, 1, 45, 45, 0},
		{"REQUESTPARAMS.PAGE=2&requestparams.PAGESIZE=10", 2, 5, 11, 20, 45, 0},
		{"RequestParams.Page=3&REQUESTPARAMS.pagesize=22", 3, 3, 45, 45, 45, 0},
		{"page=3&pageSize=1&foo=bar&requestParams.other=1&requestParams=2", 1, 3, 1, 20, 45, 0},
		{"requestParams.filters=" + url.QueryEscape("DisplayName~gt~'R0040'") + "&requestParams.pageSize=2&requestParams.page=3", 3, 3, 45, 45, 5, 0},
		{"requestParams.filters=" + url.QueryEscape("DisplayName~eq~'nobody'"), 1, 0, 1, 0, 0, 0},
		{"requestParams.filters=" + url.QueryEscape("DisplayName~eq~'nobody'") + "&requestParams.page=2", 2, 0, 1, 0, 0, 0},
	}
	for _, c := range cases {
		l := a.on(t).list(c.query)
		if l.Page != c.page || l.TotalPages != c.totalPages || l.TotalResults != c.totalResults {
			t.Errorf("%s: Page %d TotalPages %d TotalResults %d, want %d %d %d", c.query, l.Page, l.TotalPages, l.TotalResults,
				c.page, c.totalPages, c.totalResults)
		}
		if got, want := l.names(), apiNames(c.from, c.to); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", c.query, got, want)
		}
	}
}

func TestListPageSizeClamp(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	apiSeed(t, a.store, apiNumbered(1001)...)
	for _, c := range []struct {
		query                string
		page, pages, from, n int
	}{
		{"requestParams.pageSize=500", 1, 3, 1, 500},
		{"requestParams.pageSize=501", 1, 3, 1, 500},
		{"requestParams.pageSize=100000&requestParams.page=2", 2, 3, 501, 500},
		{"requestParams.pageSize=100000&requestParams.page=3", 3, 3, 1001, 1},
		{"requestParams.pageSize=499&requestParams.page=3", 3, 3, 999, 3},
	} {
		l := a.on(t).list(c.query)
		if l.Page != c.page || l.TotalPages != c.pages || l.TotalResults != 1001 {
			t.Errorf("%s: Page %d TotalPages %d TotalResults %d", c.query, l.Page, l.TotalPages, l.TotalResults)
		}
		if got, want := l.names(), apiNames(c.from, c.from+c.n-1); !slices.Equal(got, want) {
			t.Errorf("%s: %d items from %v, want %d from R%04d", c.query, len(got), got[:min(len(got), 1)], c.n, c.from)
		}
	}

	cfg := DefaultConfig()
	cfg.MaxPageSize = 7
	b := startServer(t, cfg, nil).checkingEvery()
	apiSeed(t, b.store, apiNumbered(45)...)
	for _, c := range []struct {
		query          string
		page, from, to int
	}{
		{"", 1, 1, 7},
		{"requestParams.pageSize=100", 1, 1, 7},
		{"requestParams.pageSize=8&requestParams.page=2", 2, 8, 14},
		{"requestParams.pageSize=7&requestParams.page=7", 7, 43, 45},
		{"requestParams.pageSize=3&requestParams.page=2", 2, 4, 6},
	} {
		l := b.on(t).list(c.query)
		pages := 7
		if strings.Contains(c.query, "pageSize=3") {
			pages = 15
		}
		if l.Page != c.page || l.TotalPages != pages || l.TotalResults != 45 {
			t.Errorf("max 7, %s: Page %d TotalPages %d TotalResults %d", c.query, l.Page, l.TotalPages, l.TotalResults)
		}
		if got, want := l.names(), apiNames(c.from, c.to); !slices.Equal(got, want) {
			t.Errorf("max 7, %s: %v, want %v", c.query, got, want)
		}
	}
}

func TestListBadPaging(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	apiSeed(t, a.store, apiNumbered(3)...)
	for _, name := range []string{"requestParams.page", "requestParams.pageSize"} {
		for _, v := range []string{"0", "-1", "x", "1.5", "99999999999999999999", "", "1e3", "0x10", "-0"} {
			for _, sent := range []string{name, strings.ToLower(name)} {
				r := a.on(t).do(http.MethodGet, "/api/v2/resource?"+sent+"="+url.QueryEscape(v), "")
				msg := fmt.Sprintf("%s must be an integer of at least 1, not %q.", name, v)
				r.wantError(t, http.StatusBadRequest, msg, map[string]string{name: msg})
			}
		}
	}
	// Both at once, with a bad filter and a bad sort: all reported.
	r := a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.page=0&requestParams.pageSize=x&requestParams.filters=Nope~eq~1&requestParams.sorts=Nope", "")
	r.wantError(t, http.StatusBadRequest, "The request is invalid.", map[string]string{
		"requestParams.page": "not \"0\"", "requestParams.pageSize": "not \"x\"",
		"requestParams.filters": `unknown field "Nope"`, "requestParams.sorts": `unknown field "Nope"`,
	})
}

// TestListDuplicateParameter: a parameter sent twice, in two spellings, is
// read the same way every time (the first one).
func TestListDuplicateParameter(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	apiSeed(t, a.store, apiNumbered(3)...)
	for range 30 {
		l := a.on(t).list("requestParams.pageSize=1&requestParams.page=1&REQUESTPARAMS.PAGE=2&requestparams.page=3")
		if l.Page != 1 {
			t.Fatalf("Page %d, want the first parameter's 1", l.Page)
		}
	}
}

func TestListSorts(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	for _, body := range []string{
		`{"DisplayName":"zola","Position":null,"Surname":"B"}`,
		`{"DisplayName":"Émile","Position":"beta","Surname":"A","Status":"Inactive"}`,
		`{"DisplayName":"Zola","Position":"Alpha","Surname":"A"}`,
		`{"DisplayName":"adam","Surname":"C","Status":"Inactive"}`,
		`{"DisplayName":"Bob","Position":"alpha","Surname":"B"}`,
	} {
		a.on(t).create(body)
	}
	cases := []struct {
		query string
		want  string
	}{
		{"", "zola Émile Zola adam Bob"},
		{"requestParams.sorts=", "zola Émile Zola adam Bob"},
		{"requestParams.sorts=DisplayName", "adam Bob zola Zola Émile"},
		{"requestParams.sorts=DisplayName-asc", "adam Bob zola Zola Émile"},
		{"requestParams.sorts=DisplayName-desc", "Émile zola Zola Bob adam"},
		{"requestParams.sorts=displayname-desc", "Émile zola Zola Bob adam"},
		{"requestParams.sorts=DISPLAYNAME", "adam Bob zola Zola Émile"},
		{"REQUESTPARAMS.SORTS=displayName", "adam Bob zola Zola Émile"},
		{"requestParams.sorts=Position", "zola adam Zola Bob Émile"},
		{"requestParams.sorts=Position-desc", "Émile Zola Bob zola adam"},
		{"requestParams.sorts=Status~DisplayName-desc", "zola Zola Bob Émile adam"},
		{"requestParams.sorts=Surname-desc~Position", "adam zola Bob Zola Émile"},
		{"requestParams.sorts=Surname~Position-desc~DisplayName", "Émile Zola Bob zola adam"},
		{"requestParams.sorts=StatusId-desc", "Émile adam zola Zola Bob"},
		{"requestParams.sorts=Id~DisplayName", ""}, // checked below: by Id
		{"requestParams.sorts=DisplayName&requestParams.pageSize=2&requestParams.page=2", "zola Zola"},
		{"requestParams.sorts=DisplayName-desc&requestParams.filters=" + url.QueryEscape("Status~eq~'Active'"), "zola Zola Bob"},
	}
	for _, c := range cases {
		l := a.on(t).list(c.query)
		if c.want == "" {
			if !slices.IsSorted(l.ids()) {
				t.Errorf("%s: ids %v not sorted", c.query, l.ids())
			}
			continue
		}
		if got := strings.Join(l.names(), " "); got != c.want {
			t.Errorf("%s: %s, want %s", c.query, got, c.want)
		}
	}
	for _, c := range []struct{ sorts, frag string }{
		{"Nope", `unknown field "Nope"`},
		{"Nope-asc", `unknown field "Nope"`},
		{"DisplayName~Types", `unknown field "Types"`},
		{"DisplayName-sideways", `unknown direction "sideways"`},
		{"DisplayName~~Surname", "no field"},
	} {
		r := a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.sorts="+url.QueryEscape(c.sorts), "")
		r.wantError(t, http.StatusBadRequest, c.frag, map[string]string{"requestParams.sorts": c.frag})
	}
}

func TestListFilters(t *testing.T) {
	t.Parallel()
	a := startServer(t, kendoConfig(), nil).checkingEvery()
	for _, body := range []string{
		`{"DisplayName":"Ada Lovelace","FirstName":"Ada","Surname":"Lovelace","Company":"Analytical Engines","Email":"ada@example.org","ExternalID":"E-1","Fax":null}`,
		`{"DisplayName":"Grace Hopper","FirstName":"Grace","Surname":"Hopper","Company":"Navy","Email":"grace@navy.mil","ExternalID":"","Fax":"123","Status":"Inactive"}`,
		`{"DisplayName":"Tom & Jerry~(Ltd)","Company":"A&B~C","ExternalID":null,"Email":"tj@example.org"}`,
		`{"DisplayName":"Miles O'Brien","FirstName":"Miles","Surname":"O'Brien","Company":"Starfleet","Email":"miles@example.com"}`,
	} {
		a.on(t).create(body)
	}
	q := url.QueryEscape
	cases := []struct {
		query string
		want  string
	}{
		{"requestParams.filters=DisplayName~eq~'Ada%20Lovelace'", "Ada Lovelace"},
		{"requestParams.filters=DisplayName~eq~'ada%20lovelace'", "Ada Lovelace"},
		{"requestParams.filters=" + q("FirstName~eq~'ada'~and~Surname~eq~'LOVELACE'"), "Ada Lovelace"},
		{"requestParams.filters=Status='Inactive'", "Grace Hopper"},
		{"requestParams.filters=Fax~eq~null", "Ada Lovelace|Tom & Jerry~(Ltd)|Miles O'Brien"},
		{"requestParams.filters=ExternalID~eq~''", "Grace Hopper"},
		{"requestParams.filters=ExternalID~isnull~undefined", "Tom & Jerry~(Ltd)|Miles O'Brien"},
		{"requestParams.filters=Company~eq~'A%26B~C'", "Tom & Jerry~(Ltd)"},
		{"requestParams.filters=" + q("DisplayName~eq~'Tom & Jerry~(Ltd)'"), "Tom & Jerry~(Ltd)"},
		{"requestParams.filters=" + q("(Company~contains~'eng'~or~Email~endswith~'.org')~and~Status~eq~'Active'"), "Ada Lovelace|Tom & Jerry~(Ltd)"},
		{"requestParams.filters=" + q("Surname~eq~'O''Brien'"), "Miles O'Brien"},
		{"requestparams.FILTERS=Email~contains~'EXAMPLE'", "Ada Lovelace|Tom & Jerry~(Ltd)|Miles O'Brien"},
		{"requestParams.filters=Email~contains~'example'&requestParams.sorts=DisplayName-desc", "Tom & Jerry~(Ltd)|Miles O'Brien|Ada Lovelace"},
		{"requestParams.filters=" + q("Email~doesnotcontain~'example'~or~FirstName~neq~'Ada'"), "Grace Hopper|Tom & Jerry~(Ltd)|Miles O'Brien"},
		{"requestParams.filters=", "Ada Lovelace|Grace Hopper|Tom & Jerry~(Ltd)|Miles O'Brien"},
		{"requestParams.filters=StatusId~eq~2", "Grace Hopper"},
	}
	for _, c := range cases {
		l := a.on(t).list(c.query)
		if got := strings.Join(l.names(), "|"); got != c.want {
			t.Errorf("%s: %s, want %s", c.query, got, c.want)
		}
		if l.TotalResults != len(l.ResourceList) {
			t.Errorf("%s: TotalResults %d for %d items", c.query, l.TotalResults, len(l.ResourceList))
		}
	}
	for _, c := range []struct{ filter, frag string }{
		{"DisplayName~eq~'Ada", "at character 20: expected ' to close the value that starts at character 16"},
		{"Nope~eq~'x'", `at character 1: unknown field "Nope"`},
		{"DisplayName~eq~'Ada'~and~", "at character 26: expected a condition"},
		{"DisplayName~like~'Ada'", `at character 13: unknown operator "like"`},
		{"DisplayName~eq~'Émile'~xor~FirstName~eq~'x'", "at character 23: expected ~and~ or ~or~"},
	} {
		r := a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.filters="+q(c.filter), "")
		r.wantError(t, http.StatusBadRequest, c.frag, map[string]string{"requestParams.filters": c.frag})
	}
}

// TestListIndexedMatchesScan checks Store.List, which answers eq filters
// from its indexes and pages early, against a plain scan of every resource
// with filterNode.match, the same comparator and slicing.
func TestListIndexedMatchesScan(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	seed := uint64(42)
	s := NewStore(&seed)

	pools := map[field][]string{
		fieldDisplayName:    {"Ada Lovelace", "ada lovelace", "ADA LOVELACE", "Grace Hopper", "Émile Zola", "émile zola", "O'Brien", "Zoë", "ß", " "},
		fieldFirstName:      {"Ada", "ada", "Grace", "Émile", "", " ", "O'Brien", "Zoë"},
		fieldSurname:        {"Lovelace", "LOVELACE", "Hopper", "Zola", "", "O'Brien"},
		fieldCompany:        {"Acme", "ACME", "acme", "Globex", "Initech", "", "A&B~(C)"},
		fieldPosition:       {"Engineer", "engineer", "Manager", "", "Intern"},
		fieldExternalID:     {"E-1", "e-1", "E-2", "", "123", "0123"},
		fieldPhone:          {"+44 1", "+44 2", "", "123"},
		fieldMobile:         {"07000", "07001", ""},
		fieldFax:            {"1", "2", ""},
		fieldEmail:          {"a@x.org", "A@X.ORG", "g@y.com", "", "o'b@z.net"},
		fieldAddressComment: {"London", "london", "Paris", ""},
	}
	randomValue := func(f field) (string, bool) {
		if rng.IntN(5) == 0 {
			return "", false
		}
		p := pools[f]
		return p[rng.IntN(len(p))], true
	}
	newResource := func() *Resource {
		r := &Resource{types: []requestorType{}}
		for f := fieldDisplayName; f < numStringFields; f++ {
			if f == fieldStatus {
				r.set(f, []string{statusActive, statusInactive}[rng.IntN(2)], true)
				continue
			}
			v, ok := randomValue(f)
			r.set(f, v, ok)
		}
		return r
	}
	for range 400 {
		if _, err := s.Create(newResource()); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := s.All()
	// Updates move resources between index entries; they keep their slots.
	for range 150 {
		r := newResource()
		r.set(fieldID, all[rng.IntN(len(all))].ID(), true)
		if _, ok := s.Update(r); !ok {
			t.Fatal("update of a stored resource failed")
		}
	}
	all, _ = s.All()

	quote := func(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }
	randomCase := func(v string) string {
		switch rng.IntN(3) {
		case 0:
			return strings.ToUpper(v)
		case 1:
			return strings.ToLower(v)
		}
		return v
	}
	indexed := []field{fieldDisplayName, fieldFirstName, fieldSurname, fieldCompany, fieldExternalID, fieldEmail, fieldStatus}
	unindexed := []field{fieldPosition, fieldPhone, fieldMobile, fieldFax, fieldAddressComment}
	condition := func() string {
		var f field
		switch rng.IntN(10) {
		case 0:
			// Id: a stored one in any case, or an unknown one.
			id := all[rng.IntN(len(all))].ID()
			if rng.IntN(4) == 0 {
				id = "00000000-0000-4000-8000-000000000000"
			}
			return "Id~eq~" + quote(randomCase(id))
		case 1:
			return "StatusId~" + []string{"eq", "neq", "lt", "gte"}[rng.IntN(4)] + "~" + strconv.Itoa(1+rng.IntN(2))
		case 2, 3, 4, 5, 6:
			f = indexed[rng.IntN(len(indexed))]
		default:
			f = unindexed[rng.IntN(len(unindexed))]
		}
		var v string
		if f == fieldStatus {
			v = []string{"Active", "inactive", "ACTIVE", "Other"}[rng.IntN(4)]
		} else {
			p := pools[f]
			v = p[rng.IntN(len(p))]
			if rng.IntN(8) == 0 {
				v += "x" // matches nothing
			}
		}
		v = randomCase(v)
		name := f.String()
		if rng.IntN(4) == 0 {
			name = strings.ToLower(name)
		}
		switch rng.IntN(12) {
		case 0, 1, 2, 3, 4:
			return name + "~eq~" + quote(v)
		case 5:
			return name + "=" + quote(v)
		case 6:
			return name + "~neq~" + quote(v)
		case 7:
			if v == "" {
				v = "a"
			}
			return name + "~" + []string{"contains", "startswith", "endswith", "doesnotcontain"}[rng.IntN(4)] + "~" + quote(string([]rune(v)[:utf8.RuneCountInString(v)/2+1]))
		case 8:
			return name + "~" + []string{"lt", "lte", "gt", "gte"}[rng.IntN(4)] + "~" + quote(v)
		case 9:
			return name + "~" + []string{"eq", "neq"}[rng.IntN(2)] + "~null"
		default:
			return name + "~" + []string{"isnull", "isnotnull", "isempty", "isnotempty", "isnullorempty", "isnotnullorempty"}[rng.IntN(6)]
		}
	}
	var expr func(depth int) string
	expr = func(depth int) string {
		if depth == 0 || rng.IntN(3) == 0 {
			return condition()
		}
		n := 2 + rng.IntN(3)
		sep := []string{"~and~", "~or~"}[rng.IntN(2)]
		terms := make([]string, n)
		for i := range terms {
			terms[i] = expr(depth - 1)
			if rng.IntN(2) == 0 {
				terms[i] = "(" + terms[i] + ")"
			}
		}
		return strings.Join(terms, sep)
	}
	sortable := []string{"Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Status", "StatusId", "ExternalID",
		"Phone", "Mobile", "Fax", "Email", "AddressComment"}

	usedIndex := 0
	const rounds = 800
	for i := range rounds {
		text := ""
		if i%20 != 0 {
			text = expr(rng.IntN(4))
		}
		filter, err := parseFilter(text, dialectKendo)
		if err != nil {
			t.Fatalf("filter %q: %v", text, err)
		}
		var sorts []sortKey
		sortText := ""
		if rng.IntN(2) == 0 {
			var parts []string
			for range 1 + rng.IntN(3) {
				parts = append(parts, sortable[rng.IntN(len(sortable))]+[]string{"", "-asc", "-desc"}[rng.IntN(3)])
			}
			sortText = strings.Join(parts, "~")
			if sorts, err = parseSorts(sortText); err != nil {
				t.Fatalf("sorts %q: %v", sortText, err)
			}
		}
		var matched []*Resource
		for _, r := range all {
			if filter == nil || filter.match(r) {
				matched = append(matched, r)
			}
		}
		if sorts != nil {
			slices.SortStableFunc(matched, func(a, b *Resource) int { return compareEntries(newEntry(a), newEntry(b), sorts) })
		}
		size := 1 + rng.IntN(60)
		page := 1 + rng.IntN(len(matched)/size+2)
		var want []string
		for _, r := range matched[min((page-1)*size, len(matched)):min(page*size, len(matched))] {
			want = append(want, r.ID())
		}

		if filter != nil {
			s.mu.RLock()
			if _, ok := s.candidatesLocked(filter); ok {
				usedIndex++
			}
			s.mu.RUnlock()
		}
		total, got := s.List(Query{Filter: filter, Sorts: sorts, Page: page, PageSize: size})
		var gotIDs []string
		for _, r := range got {
			gotIDs = append(gotIDs, r.ID())
		}
		if total != len(matched) || !slices.Equal(gotIDs, want) {
			t.Fatalf("filter %q sorts %q page %d size %d: total %d, want %d\n got %v\nwant %v",
				text, sortText, page, size, total, len(matched), gotIDs, want)
		}
	}
	if usedIndex < rounds/5 {
		t.Errorf("only %d of %d filters used an index; the test does not exercise the indexed plans", usedIndex, rounds)
	}
}
