package resourcedir

// Tests of handlers.go: create, update and list over HTTP, checked against
// the contract rule by rule, and as hostile and
// concurrent clients meet them.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// wantResource is an expected resource; the test writes it in the
// contract's property order itself rather than trusting the encoder.
type wantResource struct {
	ID                                                    string // "" writes the placeholder "ID"
	DisplayName, FirstName, Surname, Company, Position    any    // nil is null, else a string
	Status                                                string // "" is Active
	ContractorOrganization                                any
	Types                                                 []string
	ExternalID, Phone, Mobile, Fax, Email, AddressComment any
	Address                                               string // raw JSON; "" is null
}

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
	fmt.Fprintf(&b, `{"Id":%s,"DisplayName":%s,"FirstName":%s,"Surname":%s,"Company":%s,"Position":%s,"Status":%s,"StatusId":%d,"ContractorOrganization":%s,"Types":[`,
		encodeJSON(id), encodeJSON(w.DisplayName), encodeJSON(w.FirstName), encodeJSON(w.Surname), encodeJSON(w.Company),
		encodeJSON(w.Position), encodeJSON(status), statusID, encodeJSON(w.ContractorOrganization))
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
				"Company":"Analytical Engines","Surname":"Lovelace","FirstName":"Ada","DisplayName":"Ada Lovelace",
				"ContractorOrganization":"Babbage & Co"}`,
			raw: `{"Data":[{"Id":"ID","DisplayName":"Ada Lovelace","FirstName":"Ada","Surname":"Lovelace","Company":"Analytical Engines",` +
				`"Position":"Countess","Status":"Active","StatusId":1,"ContractorOrganization":"Babbage & Co","Types":[{"Id":16,"Type":"Employee"},{"Id":4,"Type":"Customer"}],` +
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
			name: "ContractorOrganization in any case, with no length limit",
			body: `{"Company":"C","contractororganization":"` + strings.Repeat("é", 5000) + `"}`,
			want: wantResource{DisplayName: "C", Company: "C", ContractorOrganization: strings.Repeat("é", 5000)},
		},
		{
			name: "ContractorOrganization null and empty are kept apart",
			body: `{"Company":"C","ContractorOrganization":""}`,
			want: wantResource{DisplayName: "C", Company: "C", ContractorOrganization: ""},
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
			msg:    "Partial updates are not supported: the body lacks Id, DisplayName, FirstName, Surname, Company, Position, Phone, Mobile, Fax, Email, AddressComment, ExternalID, Status, Types. Send these too, as null if they have no value: a PUT carries every editable property.",
			ms:     allKeys,
		},
		{
			name:   "two keys missing",
			body:   func(id string) string { return putBody(id, "Fax", omit, "Types", omit) },
			status: 400,
			msg:    "Partial updates are not supported: the body lacks Fax, Types. Send these too, as null if they have no value: a PUT carries every editable property.",
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

// TestListDuplicateParameter: a page sent twice, in two spellings, is a 400
// naming it, every time.
func TestListDuplicateParameter(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	apiSeed(t, a.store, apiNumbered(3)...)
	msg := "requestParams.page is given 3 times; send it once."
	for range 10 {
		r := a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.pageSize=1&requestParams.page=1&REQUESTPARAMS.PAGE=2&requestparams.page=3", "")
		r.wantError(t, http.StatusBadRequest, msg, map[string]string{"requestParams.page": msg})
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
	s := newStore(&seed)

	pools := map[field][]string{
		fieldDisplayName:            {"Ada Lovelace", "ada lovelace", "ADA LOVELACE", "Grace Hopper", "Émile Zola", "émile zola", "O'Brien", "Zoë", "ß", " "},
		fieldFirstName:              {"Ada", "ada", "Grace", "Émile", "", " ", "O'Brien", "Zoë"},
		fieldSurname:                {"Lovelace", "LOVELACE", "Hopper", "Zola", "", "O'Brien"},
		fieldCompany:                {"Acme", "ACME", "acme", "Globex", "Initech", "", "A&B~(C)"},
		fieldPosition:               {"Engineer", "engineer", "Manager", "", "Intern"},
		fieldExternalID:             {"E-1", "e-1", "E-2", "", "123", "0123"},
		fieldPhone:                  {"+44 1", "+44 2", "", "123"},
		fieldMobile:                 {"07000", "07001", ""},
		fieldFax:                    {"1", "2", ""},
		fieldEmail:                  {"a@x.org", "A@X.ORG", "g@y.com", "", "o'b@z.net"},
		fieldAddressComment:         {"London", "london", "Paris", ""},
		fieldContractorOrganization: {"Acme Staffing", "acme staffing", ""},
	}
	randomValue := func(f field) (string, bool) {
		if rng.IntN(5) == 0 {
			return "", false
		}
		p := pools[f]
		return p[rng.IntN(len(p))], true
	}
	newResource := func() *resource {
		r := &resource{types: []requestorType{}}
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
		if _, err := s.create(newResource()); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := s.all()
	// Updates move resources between index entries; they keep their slots.
	for range 150 {
		r := newResource()
		r.set(fieldID, all[rng.IntN(len(all))].id(), true)
		if _, ok := s.update(r); !ok {
			t.Fatal("update of a stored resource failed")
		}
	}
	all, _ = s.all()

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
			id := all[rng.IntN(len(all))].id()
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
			if sorts, err = parseSorts(sortText, dialectKendo); err != nil {
				t.Fatalf("sorts %q: %v", sortText, err)
			}
		}
		var matched []*resource
		for _, r := range all {
			if filter == nil || filter.match(newEntry(r)) {
				matched = append(matched, r)
			}
		}
		if sorts != nil {
			slices.SortStableFunc(matched, func(a, b *resource) int { return compareEntries(newEntry(a), newEntry(b), sorts) })
		}
		size := 1 + rng.IntN(60)
		page := 1 + rng.IntN(len(matched)/size+2)
		var want []string
		for _, r := range matched[min((page-1)*size, len(matched)):min(page*size, len(matched))] {
			want = append(want, r.id())
		}

		if filter != nil {
			s.mu.RLock()
			if _, ok := s.candidatesLocked(filter); ok {
				usedIndex++
			}
			s.mu.RUnlock()
		}
		total, got := s.list(listQuery{Filter: filter, Sorts: sorts, Page: page, PageSize: size})
		var gotIDs []string
		for _, r := range got {
			gotIDs = append(gotIDs, r.id())
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

// The API as hostile and concurrent clients meet it: malformed input of
// every kind, list queries at their edges, many writers and readers at once
// under -race, and a fuzzer for the list query.

// hostileCase is one hostile request. ms says what the error's ModelState must
// be: "" anything, "-" absent, otherwise a key it must hold.
type hostileCase struct {
	name   string
	method string
	target string // path and query, sent as written
	body   []byte
	want   int
	ms     string
}

// TestHostileInput sends hostile requests through a real HTTP
// round trip and checks that each is refused (or, where the contract says
// so, accepted) with the documented status and error shape, never a 5xx,
// and that the server is healthy afterwards.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	api := startServer(t, kendoConfig(), nil)
	for i := range 30 {
		api.create(fmt.Sprintf(`{"FirstName":"F%02d","Surname":"S%02d","Company":"C"}`, i, i))
	}
	id, _ := api.create(`{"FirstName":"Ada","Surname":"Lovelace"}`)
	put := "/api/v2/resource/" + id

	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	filter := func(f string) string { return "/api/v2/resource?requestParams.filters=" + url.QueryEscape(f) }
	conds := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = "Id~isnull"
		}
		return strings.Join(parts, "~or~")
	}
	const createPath = "/api/v2/resource"
	cases := []hostileCase{
		// Bodies that are not a JSON object.
		{"create: null body", "POST", createPath, []byte("null"), 400, "-"},
		{"create: string body", "POST", createPath, []byte(`"Company"`), 400, "-"},
		{"create: array body", "POST", createPath, []byte(`[{"Company":"x"}]`), 400, "-"},
		{"create: number body", "POST", createPath, []byte(`12.5e300`), 400, "-"},
		{"create: true body", "POST", createPath, []byte(`true`), 400, "-"},
		{"create: empty body", "POST", createPath, []byte(``), 400, "-"},
		{"create: blank body", "POST", createPath, []byte(" \r\n\t "), 400, "-"},
		{"create: truncated object", "POST", createPath, []byte(`{"Company":"x"`), 400, "-"},
		{"create: truncated string", "POST", createPath, []byte(`{"Company":"x`), 400, "-"},
		{"create: two objects", "POST", createPath, []byte(`{"Company":"x"}{"Company":"y"}`), 400, "-"},
		{"create: trailing garbage", "POST", createPath, []byte(`{"Company":"x"} x`), 400, "-"},
		{"create: single quotes", "POST", createPath, []byte(`{'Company':'x'}`), 400, "-"},
		{"create: trailing comma", "POST", createPath, []byte(`{"Company":"x",}`), 400, "-"},
		{"create: NaN", "POST", createPath, []byte(`{"Company":"x","Phone":NaN}`), 400, "-"},
		// Deep nesting.
		{"create: 100,000 [ as the body", "POST", createPath, []byte(strings.Repeat("[", 100000)), 400, "-"},
		{"create: 100,000 [] as the body", "POST", createPath, []byte(deep("[", "]", 100000)), 400, "-"},
		{"create: 100,000 [ in Address", "POST", createPath, []byte(`{"Company":"x","Address":` + strings.Repeat("[", 100000) + `}`), 400, ""},
		{"create: 100,000 [] in Address", "POST", createPath, []byte(`{"Company":"x","Address":` + deep("[", "]", 100000) + `}`), 400, ""},
		{"create: 100,000 {\"a\": in Address", "POST", createPath, []byte(`{"Company":"x","Address":` + strings.Repeat(`{"a":`, 100000) + `}`), 400, ""},
		{"create: 100,000 [ in an unknown property", "POST", createPath, []byte(`{"Company":"x","Bogus":` + deep("[", "]", 100000) + `}`), 400, ""},
		{"create: 100,000 [ in Types", "POST", createPath, []byte(`{"Company":"x","Types":` + deep("[", "]", 100000) + `}`), 400, ""},
		{"create: 1,000-deep Address is stored", "POST", createPath, []byte(`{"Company":"x","Address":{"a":` + deep("[", "]", 1000) + `}}`), 201, ""},
		// Encoding: invalid UTF-8 in strings is read as U+FFFD (as
		// encoding/json and Json.NET do), outside strings it is a syntax error.
		{"create: invalid UTF-8 in a value", "POST", createPath, []byte("{\"Company\":\"\xff\xfe\xc3\"}"), 201, ""},
		{"create: invalid UTF-8 in a key", "POST", createPath, []byte("{\"\xffCompany\":1,\"Company\":\"x\"}"), 201, ""},
		{"create: invalid UTF-8 outside strings", "POST", createPath, []byte("\xff{\"Company\":\"x\"}"), 400, "-"},
		{"create: UTF-16 BOM", "POST", createPath, []byte("\xfe\xff\x00{"), 400, "-"},
		{"create: escaped NUL in a value", "POST", createPath, []byte(`{"Company":"a\u0000b"}`), 201, ""},
		{"create: lone surrogate escape", "POST", createPath, []byte(`{"Company":"\ud800"}`), 201, ""},
		{"create: raw NUL in a value", "POST", createPath, []byte("{\"Company\":\"a\x00b\"}"), 400, "-"},
		{"create: NUL before the body", "POST", createPath, []byte("\x00{\"Company\":\"x\"}"), 400, "-"},
		{"create: NUL after the body", "POST", createPath, []byte("{\"Company\":\"x\"}\x00"), 400, "-"},
		// Unknown and odd properties.
		{"create: unknown properties", "POST", createPath, []byte(`{"Company":"x","Bogus":[1,{"a":null}],"StatusId":"nope","_links":5,"_embedded":{}}`), 201, ""},
		{"create: empty key", "POST", createPath, []byte(`{"":1,"Company":"x"}`), 201, ""},
		{"create: 10,000 unknown keys", "POST", createPath, func() []byte {
			var b bytes.Buffer
			b.WriteString(`{"Company":"x"`)
			for i := range 10000 {
				fmt.Fprintf(&b, `,"k%d":%d`, i, i)
			}
			return append(b.Bytes(), '}')
		}(), 201, ""},
		{"create: huge number", "POST", createPath, []byte(`{"Company":"x","Bogus":1` + strings.Repeat("0", 100000) + `}`), 201, ""},
		{"create: 50,000 Types", "POST", createPath, []byte(`{"Company":"x","Types":[` + strings.TrimSuffix(strings.Repeat(`{"Type":"Team"},`, 50000), ",") + `]}`), 201, ""},
		// Update: the path and the body.
		{"update: id not a GUID", "PUT", "/api/v2/resource/not-a-guid", []byte(putBody(id)), 400, ""},
		{"update: NUL id", "PUT", "/api/v2/resource/%00", []byte(putBody(id)), 400, ""},
		{"update: NUL in a GUID", "PUT", "/api/v2/resource/" + id[:8] + "%00" + id[9:], []byte(putBody(id)), 400, ""},
		{"update: 10 KiB id", "PUT", "/api/v2/resource/" + strings.Repeat("a", 10<<10), []byte(putBody(id)), 400, ""},
		{"update: braced GUID of another", "PUT", "/api/v2/resource/{00000000-0000-4000-8000-000000000000}", []byte(putBody("00000000-0000-4000-8000-000000000000")), 404, "-"},
		{"update: unknown GUID", "PUT", "/api/v2/resource/00000000-0000-4000-8000-000000000000", []byte(putBody("00000000-0000-4000-8000-000000000000")), 404, "-"},
		{"update: null body", "PUT", put, []byte("null"), 400, "-"},
		{"update: string body", "PUT", put, []byte(`"x"`), 400, "-"},
		{"update: array body", "PUT", put, []byte(`[` + putBody(id) + `]`), 400, "-"},
		{"update: number body", "PUT", put, []byte(`1`), 400, "-"},
		{"update: empty body", "PUT", put, nil, 400, "-"},
		{"update: empty object", "PUT", put, []byte(`{}`), 400, "Types"},
		{"update: 100,000 [ as the body", "PUT", put, []byte(strings.Repeat("[", 100000)), 400, "-"},
		{"update: 100,000 [ in Position", "PUT", put, []byte(`{"Position":` + deep("[", "]", 100000) + `}`), 400, ""},
		{"update: raw NUL in a value", "PUT", put, bytes.Replace([]byte(putBody(id)), []byte("Ada"), []byte("A\x00a"), 1), 400, "-"},
		{"update: escaped NUL in a value", "PUT", put, []byte(putBody(id, "Position", rawJSON(`"a\u0000b"`))), 200, ""},
		{"update: invalid UTF-8 in a value", "PUT", put, []byte(putBody(id, "Position", rawJSON("\"\xff\""))), 200, ""},
		{"update: unknown properties", "PUT", put, []byte(putBody(id, "Bogus", rawJSON(`{"x":[1]}`), "StatusId", rawJSON(`"x"`))), 200, ""},
		{"update: Id of another", "PUT", put, []byte(putBody("00000000-0000-4000-8000-000000000000")), 400, "Id"},
		// Paths.
		{"NUL in the path", "GET", "/api/v2/resource%00", nil, 404, "-"},
		{"NUL path", "GET", "/%00", nil, 404, "-"},
		{"encoded slash", "PUT", "/api/v2/resource/a%2Fb", []byte(putBody(id)), 400, ""},
		{"10 KiB unknown path", "GET", "/" + strings.Repeat("x", 10<<10), nil, 404, "-"},
		{"wrong method", "DELETE", createPath, nil, 405, "-"},
		{"wrong method with a body", "PATCH", put, []byte(`{}`), 405, "-"},
		// Page parameters.
		{"page 0", "GET", "/api/v2/resource?requestParams.page=0", nil, 400, paramPage},
		{"page -1", "GET", "/api/v2/resource?requestParams.page=-1", nil, 400, paramPage},
		{"page 1.5", "GET", "/api/v2/resource?requestParams.page=1.5", nil, 400, paramPage},
		{"page empty", "GET", "/api/v2/resource?requestParams.page=", nil, 400, paramPage},
		{"page without =", "GET", "/api/v2/resource?requestParams.page", nil, 400, paramPage},
		{"page abc", "GET", "/api/v2/resource?requestParams.page=abc", nil, 400, paramPage},
		{"page 1e3", "GET", "/api/v2/resource?requestParams.page=1e3", nil, 400, paramPage},
		{"page 0x10", "GET", "/api/v2/resource?requestParams.page=0x10", nil, 400, paramPage},
		{"page 1_0", "GET", "/api/v2/resource?requestParams.page=1_0", nil, 400, paramPage},
		{"page NUL", "GET", "/api/v2/resource?requestParams.page=%00", nil, 400, paramPage},
		{"page 2 NUL", "GET", "/api/v2/resource?requestParams.page=2%00", nil, 400, paramPage},
		{"page overflow", "GET", "/api/v2/resource?requestParams.page=99999999999999999999", nil, 400, paramPage},
		{"page -overflow", "GET", "/api/v2/resource?requestParams.page=-99999999999999999999", nil, 400, paramPage},
		{"page ' 2 '", "GET", "/api/v2/resource?requestParams.page=%202%20", nil, 400, paramPage},
		{"page +2", "GET", "/api/v2/resource?requestParams.page=%2B2", nil, 400, paramPage},
		{"pageSize ' 44'", "GET", "/api/v2/resource?requestParams.pageSize=%2044", nil, 400, paramPageSize},
		{"page past the end", "GET", "/api/v2/resource?requestParams.page=1000000", nil, 200, ""},
		{"page MaxInt64", "GET", "/api/v2/resource?requestParams.page=9223372036854775807&requestParams.pageSize=500", nil, 200, ""},
		{"page MaxInt64 with a filter and sorts", "GET", "/api/v2/resource?requestParams.page=9223372036854775807&requestParams.pageSize=7&requestParams.sorts=Surname-desc&requestParams.filters=" + url.QueryEscape("Company~eq~'C'"), nil, 200, ""},
		{"page MaxInt64 with a scan filter", "GET", "/api/v2/resource?requestParams.page=9223372036854775807&requestParams.pageSize=7&requestParams.filters=" + url.QueryEscape("Company~contains~'c'"), nil, 200, ""},
		{"pageSize 0", "GET", "/api/v2/resource?requestParams.pageSize=0", nil, 400, paramPageSize},
		{"pageSize -1", "GET", "/api/v2/resource?requestParams.pageSize=-1", nil, 400, paramPageSize},
		{"pageSize 1.5", "GET", "/api/v2/resource?requestParams.pageSize=1.5", nil, 400, paramPageSize},
		{"pageSize empty", "GET", "/api/v2/resource?requestParams.pageSize=", nil, 400, paramPageSize},
		{"pageSize overflow", "GET", "/api/v2/resource?requestParams.pageSize=99999999999999999999", nil, 400, paramPageSize},
		{"pageSize 501 is clamped", "GET", "/api/v2/resource?requestParams.pageSize=501", nil, 200, ""},
		{"pageSize MaxInt64 is clamped", "GET", "/api/v2/resource?requestParams.pageSize=9223372036854775807&requestParams.page=2", nil, 200, ""},
		{"page and pageSize both bad", "GET", "/api/v2/resource?requestParams.page=x&requestParams.pageSize=y", nil, 400, paramPageSize},
		{"names in another case", "GET", "/api/v2/resource?REQUESTPARAMS.PAGE=0", nil, 400, paramPage},
		// The query string itself.
		{"invalid percent-encoding in a value", "GET", "/api/v2/resource?requestParams.filters=%zz", nil, 400, ""},
		{"truncated percent-encoding", "GET", "/api/v2/resource?requestParams.page=1%", nil, 400, ""},
		{"invalid percent-encoding in a name", "GET", "/api/v2/resource?%zz=1", nil, 400, ""},
		{"invalid percent-encoding in an ignored parameter", "GET", "/api/v2/resource?x=%g0", nil, 400, ""},
		{"unknown parameters are ignored", "GET", "/api/v2/resource?foo=bar&requestParams.other=1&&=&x", nil, 200, ""},
		{"10,000 ignored parameters", "GET", "/api/v2/resource?" + strings.Repeat("a=b&", 10000), nil, 200, ""},
		// Filters.
		{"10,000-deep parentheses", "GET", filter(strings.Repeat("(", 10000) + "Id~isnull" + strings.Repeat(")", 10000)), nil, 400, paramFilters},
		{"10,000 unclosed parentheses", "GET", filter(strings.Repeat("(", 10000)), nil, 400, paramFilters},
		{"40-deep parentheses (under 4 KiB)", "GET", filter(strings.Repeat("(", 40) + "Id~isnull" + strings.Repeat(")", 40)), nil, 400, paramFilters},
		{"10,000 conditions", "GET", filter(conds(10000)), nil, 400, paramFilters},
		{"200 conditions (under 4 KiB)", "GET", filter(conds(200)), nil, 400, paramFilters},
		{"5 KiB filter", "GET", filter("DisplayName~eq~'" + strings.Repeat("a", 5<<10) + "'"), nil, 400, paramFilters},
		{"5 KiB of spaces", "GET", filter(strings.Repeat(" ", 5<<10)), nil, 400, paramFilters},
		{"NUL as the filter", "GET", filter("\x00"), nil, 400, paramFilters},
		{"NUL in a field name", "GET", filter("Display\x00Name~eq~'x'"), nil, 400, paramFilters},
		{"NUL in a value", "GET", filter("DisplayName~eq~'\x00'"), nil, 200, ""},
		{"invalid UTF-8 in a value", "GET", filter("DisplayName~eq~'\xff\xfe'"), nil, 200, ""},
		{"invalid UTF-8 as a field", "GET", filter("\xff~eq~'x'"), nil, 400, paramFilters},
		{"unterminated value", "GET", filter("DisplayName~eq~'x"), nil, 400, paramFilters},
		{"unknown field", "GET", filter("Bogus~eq~'x'"), nil, 400, paramFilters},
		{"unknown operator", "GET", filter("DisplayName~xor~'x'"), nil, 400, paramFilters},
		{"only tildes", "GET", filter(strings.Repeat("~", 3000)), nil, 400, paramFilters},
		{"only quotes", "GET", filter(strings.Repeat("'", 3001)), nil, 400, paramFilters},
		{"StatusId overflow", "GET", filter("StatusId~eq~99999999999999999999999"), nil, 400, paramFilters},
		{"filter and sorts both bad", "GET", filter("x") + "&requestParams.sorts=y", nil, 400, paramSorts},
		// Sorts.
		{"unknown sort field", "GET", "/api/v2/resource?requestParams.sorts=Bogus-asc", nil, 400, paramSorts},
		{"bad sort direction", "GET", "/api/v2/resource?requestParams.sorts=Surname-sideways", nil, 400, paramSorts},
		{"NUL sort", "GET", "/api/v2/resource?requestParams.sorts=%00", nil, 400, paramSorts},
		{"10,000 empty sort entries", "GET", "/api/v2/resource?requestParams.sorts=" + strings.Repeat("~", 10000), nil, 400, paramSorts},
		{"10,000 repeated sort keys", "GET", "/api/v2/resource?requestParams.sorts=" + strings.TrimSuffix(strings.Repeat("Surname-desc~", 10000), "~"), nil, 200, ""},
	}

	// Wrong JSON types in every property of a create and an update.
	wrongString := []string{`123`, `-1.5`, `true`, `false`, `{}`, `[]`, `["x"]`, `{"x":"y"}`}
	for p := range numProps {
		name := p.String()
		var wrong []string
		switch p {
		case propTypes:
			wrong = []string{`"Employee"`, `5`, `true`, `{}`, `{"Type":"Team"}`}
		case propAddress:
			wrong = []string{`"1 Main St"`, `5`, `true`, `[]`, `[{"Street":"x"}]`}
		default:
			wrong = wrongString
		}
		for _, v := range wrong {
			cases = append(cases, hostileCase{
				name: fmt.Sprintf("create: %s is %s", name, v), method: "POST", target: createPath,
				body: rawObject(map[string]string{"FirstName": `"Ada"`, "Company": `"x"`, name: v}), want: 400, ms: name,
			})
			if p == propAddress {
				continue // ignored on update
			}
			cases = append(cases, hostileCase{
				name: fmt.Sprintf("update: %s is %s", name, v), method: "PUT", target: put,
				body: []byte(putBody(id, name, rawJSON(v))), want: 400, ms: name,
			})
		}
	}
	for _, tc := range []struct{ types, key string }{
		{`[5]`, "Types[0].Type"},
		{`[null]`, "Types[0].Type"},
		{`["Team"]`, "Types[0].Type"},
		{`[[]]`, "Types[0].Type"},
		{`[{"Type":"Team"},{"Type":5}]`, "Types[1].Type"},
		{`[{"Type":true}]`, "Types[0].Type"},
		{`[{"Type":{"Name":"Team"}}]`, "Types[0].Type"},
		{`[{"Type":null}]`, "Types[0].Type"},
		{`[{"Id":2}]`, "Types[0].Type"},
		{`[{"Type":"Team\u0000"}]`, "Types[0].Type"},
	} {
		cases = append(cases,
			hostileCase{name: "create: Types " + tc.types, method: "POST", target: createPath,
				body: rawObject(map[string]string{"Company": `"x"`, "Types": tc.types}), want: 400, ms: tc.key},
			hostileCase{name: "update: Types " + tc.types, method: "PUT", target: put,
				body: []byte(putBody(id, "Types", rawJSON(tc.types))), want: 400, ms: tc.key})
	}

	// Seeds go through a different decoder.
	for _, tc := range []struct {
		name, body string
		want       int
		ms         string
	}{
		{"object", `{"Company":"x"}`, 400, "-"},
		{"string", `"x"`, 400, "-"},
		{"number", `5`, 400, "-"},
		{"empty", ``, 400, "-"},
		{"truncated", `[{"Company":"x"}`, 400, "-"},
		{"100,000 [", strings.Repeat("[", 100000), 400, "-"},
		{"100,000 []", deep("[", "]", 100000), 400, "-"},
		{"100,000 [ in an item", `[{"Company":"x","Address":` + deep("[", "]", 100000) + `}]`, 400, ""},
		{"a number item", `[5]`, 400, "[0]"},
		{"a null item", `[{"Company":"x"},null]`, 400, "[1]"},
		{"a wrongly typed property", `[{"Company":5}]`, 400, "[0].Company"},
		{"a bad Id", `[{"Company":"x","Id":"nope"}]`, 400, "[0].Id"},
		{"a NUL Id", `[{"Company":"x","Id":"\u0000"}]`, 400, "[0].Id"},
		{"a duplicate Id", `[{"Company":"x","Id":"00000000-0000-4000-8000-000000000001"},{"Company":"y","Id":"00000000-0000-4000-8000-000000000001"}]`, 400, "[1].Id"},
		{"an Id already in use", `[{"Company":"x","Id":"` + id + `"}]`, 400, "[0].Id"},
		{"raw NUL", "[{\"Company\":\"\x00\"}]", 400, "-"},
		{"trailing garbage", `[] x`, 400, "-"},
	} {
		cases = append(cases, hostileCase{name: "seed: " + tc.name, method: "POST", target: "/__admin/resources",
			body: []byte(tc.body), want: tc.want, ms: tc.ms})
	}

	for _, c := range cases {
		r := api.do(c.method, c.target, string(c.body))
		status, h, body := r.Status, r.Header, r.Body
		what := c.name
		if status >= 500 {
			t.Errorf("%s: %d %.300s", what, status, body)
		} else if status != c.want {
			t.Errorf("%s: status %d, want %d: %.300s", what, status, c.want, body)
		}
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Errorf("%s: the response is not valid UTF-8 JSON: %.300q", what, body)
		}
		if ct := h.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", what, ct)
		}
		if h.Get("X-Request-Id") == "" {
			t.Errorf("%s: no X-Request-Id", what)
		}
		if status >= 400 {
			e := checkErrorShape(t, what, h, body)
			switch c.ms {
			case "":
			case "-":
				if e.ModelState != nil {
					t.Errorf("%s: ModelState %v where no property is at fault", what, e.ModelState)
				}
			default:
				if len(e.ModelState[c.ms]) == 0 {
					t.Errorf("%s: ModelState lacks %q: %.300s", what, c.ms, body)
				}
			}
			if status == 405 && h.Get("Allow") == "" {
				t.Errorf("%s: 405 without Allow", what)
			}
		}
		if status == 200 && c.method == "GET" {
			checkListPage(t, what, body, -1)
		}
		api.health()
	}
}

// TestConcurrentClients mixes creates, updates, lists and snapshots from
// many goroutines over real connections, then checks that nothing was lost:
// the total, the last value written to every resource, a list by an
// indexed field, and the snapshot. Run it with -race.
func TestConcurrentClients(t *testing.T) {
	t.Parallel()
	store := newStore(nil)
	srv := newServer(DefaultConfig(), store, nil)
	snapPath := filepath.Join(t.TempDir(), "s.gob")
	srv.snap = newSnapshotter(snapPath, storeDir{store}, discardLogger)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	tr := ts.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	api := &testClient{t: t, base: ts.URL, client: client}
	defer tr.CloseIdleConnections()

	// shared is updated by every writer at once: the last write wins, and a
	// reader must never see half of one write and half of another.
	shared, _ := api.create(`{"FirstName":"w","Surname":"w","Position":"w"}`)

	const (
		writers   = 8
		perWriter = 15
		updates   = 3
		listers   = 4
		snappers  = 2
	)
	type owned struct {
		id, first, position, status string
	}
	results := make([][]owned, writers)
	errc := make(chan error, 1000)
	fail := func(format string, args ...any) {
		select {
		case errc <- fmt.Errorf(format, args...):
		default:
		}
	}
	do := func(method, path string, body []byte) (int, []byte) {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequest(method, ts.URL+path, rd)
		if err != nil {
			fail("%s %s: %v", method, path, err)
			return 0, nil
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			fail("%s %s: %v", method, path, err)
			return 0, nil
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			fail("%s %s: %v", method, path, err)
		}
		return resp.StatusCode, b
	}

	var writersWG, readersWG sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		writersWG.Add(1)
		go func() {
			defer writersWG.Done()
			for i := range perWriter {
				status, b := do("POST", "/api/v2/resource", fmt.Appendf(nil,
					`{"FirstName":"w%d","Surname":"r%d","Company":"Concurrent","Types":[{"Type":"Team"}]}`, w, i))
				var out struct{ Data []struct{ Id string } }
				if status != 201 || json.Unmarshal(b, &out) != nil || len(out.Data) != 1 {
					fail("create w%d r%d: %d %s", w, i, status, b)
					return
				}
				o := owned{id: out.Data[0].Id}
				for u := range updates {
					o.first = fmt.Sprintf("w%d-r%d-u%d", w, i, u)
					o.position = fmt.Sprintf("pos %d/%d/%d", w, i, u)
					o.status = []string{"Active", "Inactive"}[(w+i+u)%2]
					status, b := do("PUT", "/api/v2/resource/"+o.id, []byte(putBody(o.id, "FirstName", o.first, "Position", o.position, "Status", o.status, "Company", "Concurrent")))
					if status != 200 {
						fail("update %s: %d %s", o.id, status, b)
						return
					}
					tag := strconv.Quote(fmt.Sprintf("w%d-%d-%d", w, i, u))
					status, b = do("PUT", "/api/v2/resource/"+shared, []byte(putBody(shared, "FirstName", rawJSON(tag), "Surname", rawJSON(tag), "Position", rawJSON(tag), "Company", nil)))
					if status != 200 {
						fail("update shared: %d %s", status, b)
						return
					}
				}
				results[w] = append(results[w], o)
			}
		}()
	}
	queries := []string{
		"",
		"requestParams.pageSize=500",
		"requestParams.filters=" + url.QueryEscape("Company~eq~'Concurrent'") + "&requestParams.pageSize=7&requestParams.page=2",
		"requestParams.filters=" + url.QueryEscape("FirstName~startswith~'w1'~or~Status~eq~'Inactive'") + "&requestParams.sorts=FirstName-desc",
		"requestParams.sorts=Position-asc~Surname-desc&requestParams.pageSize=50",
		"requestParams.filters=" + url.QueryEscape("Id~eq~'"+shared+"'"),
		"requestParams.filters=" + url.QueryEscape("StatusId~gt~1") + "&requestParams.page=3&requestParams.pageSize=3",
	}
	for l := range listers {
		readersWG.Add(1)
		go func() {
			defer readersWG.Done()
			lastTotal := 0
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				q := queries[(l+n)%len(queries)]
				status, b := do("GET", "/api/v2/resource?"+q, nil)
				var p listPage
				if status != 200 || json.Unmarshal(b, &p) != nil {
					fail("list %s: %d %.300s", q, status, b)
					return
				}
				if q == "" {
					// Nothing is ever deleted: the total only grows.
					if p.TotalResults < lastTotal {
						fail("the total went down from %d to %d", lastTotal, p.TotalResults)
					}
					lastTotal = p.TotalResults
				}
				for _, r := range p.ResourceList {
					if r["Id"] == shared && (r["FirstName"] != r["Surname"] || r["FirstName"] != r["Position"]) {
						fail("a torn update of the shared resource: %v", r)
					}
				}
			}
		}()
	}
	for range snappers {
		readersWG.Add(1)
		go func() {
			defer readersWG.Done()
			last := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				status, b := do("POST", "/__admin/snapshot", nil)
				var out struct{ Resources int }
				if status != 200 || json.Unmarshal(b, &out) != nil {
					fail("snapshot: %d %s", status, b)
					return
				}
				if out.Resources < last {
					fail("a snapshot of %d resources after one of %d", out.Resources, last)
				}
				last = out.Resources
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	writersWG.Wait()
	close(done)
	readersWG.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	total := 1 + writers*perWriter
	r := api.do("GET", "/__admin/health", "")
	status, _, body := r.Status, r.Header, r.Body
	var health struct{ Resources int }
	if status != 200 || json.Unmarshal(body, &health) != nil || health.Resources != total {
		t.Fatalf("health: %d %s, want %d resources", status, body, total)
	}
	r = api.do("GET", "/api/v2/resource?requestParams.pageSize=500", "")
	status, _, body = r.Status, r.Header, r.Body
	if status != 200 {
		t.Fatalf("list all: %d %s", status, body)
	}
	all := checkListPage(t, "list all", body, 500)
	if all.TotalResults != total || len(all.ResourceList) != total {
		t.Fatalf("list all: %d results, %d items; want %d", all.TotalResults, len(all.ResourceList), total)
	}
	byID := map[string]map[string]any{}
	for _, r := range all.ResourceList {
		id, _ := r["Id"].(string)
		if byID[id] != nil {
			t.Errorf("Id %s listed twice", id)
		}
		byID[id] = r
	}
	inactive := 0
	for w := range writers {
		if len(results[w]) != perWriter {
			t.Fatalf("writer %d finished %d resources, want %d", w, len(results[w]), perWriter)
		}
		for _, o := range results[w] {
			r := byID[o.id]
			if r == nil {
				t.Errorf("%s is missing from the list", o.id)
				continue
			}
			wantStatusID := 1.0
			if o.status == "Inactive" {
				wantStatusID = 2
				inactive++
			}
			if r["FirstName"] != o.first || r["Position"] != o.position || r["Status"] != o.status || r["StatusId"] != wantStatusID || r["Company"] != "Concurrent" {
				t.Errorf("%s: listed as %v, but the last write was FirstName %q Position %q Status %q", o.id, r, o.first, o.position, o.status)
			}
			// The exact-match index must agree with the rows.
			filtered := api.on(t).do("GET", "/api/v2/resource?requestParams.filters="+
				url.QueryEscape("FirstName~eq~'"+o.first+"'~and~Company~eq~'Concurrent'"), "")
			status, body := filtered.Status, filtered.Body
			p := checkListPage(t, o.first, body, 20)
			if status != 200 || p.TotalResults != 1 || p.ResourceList[0]["Id"] != o.id {
				t.Errorf("FirstName eq %q: %d %.300s, want only %s", o.first, status, body, o.id)
			}
		}
	}
	if r := byID[shared]; r == nil || r["FirstName"] != r["Surname"] || r["FirstName"] != r["Position"] {
		t.Errorf("shared resource: %v", r)
	}
	r = api.do("GET", "/api/v2/resource?requestParams.filters="+url.QueryEscape("Status~eq~'Inactive'"), "")
	status, _, body = r.Status, r.Header, r.Body
	if p := checkListPage(t, "inactive", body, 20); status != 200 || p.TotalResults != inactive {
		t.Errorf("Status eq Inactive: %d results, want %d", p.TotalResults, inactive)
	}

	// A final snapshot holds everything, and reads back to the same rows.
	r = api.do("POST", "/__admin/snapshot", "")
	status, _, body = r.Status, r.Header, r.Body
	var snap struct{ Resources int }
	if status != 200 || json.Unmarshal(body, &snap) != nil || snap.Resources != total {
		t.Fatalf("final snapshot: %d %s, want %d resources", status, body, total)
	}
	loaded, err := readSnapshotFile(snapPath)
	if err != nil {
		t.Fatalf("read the snapshot: %v", err)
	}
	if len(loaded) != total {
		t.Fatalf("the snapshot holds %d resources, want %d", len(loaded), total)
	}
	rows, _ := store.all()
	for i, r := range loaded {
		if got, want := string(appendResource(nil, r, true)), string(appendResource(nil, rows[i], true)); got != want {
			t.Errorf("snapshot row %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// listPage is a list response.
type listPage struct {
	TotalResults int
	TotalPages   int
	Page         int
	ResourceList []map[string]any
	Links        []any `json:"_links"`
}

// checkListPage checks a 200 list response's arithmetic; pageSize < 0
// means unknown, checked only against the maximum.
func checkListPage(t testing.TB, what string, body []byte, pageSize int) listPage {
	t.Helper()
	var p listPage
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("%s: list response: %v: %.300s", what, err, body)
	}
	if p.Page < 1 || p.TotalResults < 0 || p.Links == nil {
		t.Errorf("%s: odd list response %.300s", what, body)
	}
	if pageSize > 0 {
		if want := (p.TotalResults + pageSize - 1) / pageSize; p.TotalPages != want {
			t.Errorf("%s: TotalPages %d, want %d for %d results of %d", what, p.TotalPages, want, p.TotalResults, pageSize)
		}
		wantLen := 0
		if p.Page <= p.TotalPages {
			wantLen = min(pageSize, p.TotalResults-(p.Page-1)*pageSize)
		}
		if len(p.ResourceList) != wantLen {
			t.Errorf("%s: %d items on page %d, want %d", what, len(p.ResourceList), p.Page, wantLen)
		}
	}
	if len(p.ResourceList) > DefaultConfig().MaxPageSize {
		t.Errorf("%s: %d items on one page, over the maximum page size", what, len(p.ResourceList))
	}
	if (p.TotalResults == 0) != (p.TotalPages == 0) {
		t.Errorf("%s: TotalResults %d but TotalPages %d", what, p.TotalResults, p.TotalPages)
	}
	return p
}

// TestListPageEdges checks the values behind the edge cases that
// are accepted: whitespace around a page, pages past the end, clamping.
func TestListPageEdges(t *testing.T) {
	t.Parallel()
	api := startServer(t, DefaultConfig(), nil)
	for i := range 45 {
		api.create(fmt.Sprintf(`{"Company":"C%02d"}`, i))
	}
	tests := []struct {
		query            string
		page, pageSize   int
		total, totalPage int
	}{
		{"", 1, 20, 45, 3},
		{"requestParams.page=3", 3, 20, 45, 3},
		{"requestParams.page=4", 4, 20, 45, 3},
		{"requestParams.page=1000000", 1000000, 20, 45, 3},
		{"requestParams.page=9223372036854775807&requestParams.pageSize=500", 9223372036854775807, 500, 45, 1},
		{"requestParams.page=9223372036854775807&requestParams.pageSize=1", 9223372036854775807, 1, 45, 45},
		{"requestParams.pageSize=501", 1, 500, 45, 1},
		{"requestParams.pageSize=9223372036854775807&requestParams.page=2", 2, 500, 45, 1},
		{"REQUESTPARAMS.PAGESIZE=10&requestparams.page=5", 5, 10, 45, 5},
		{"requestParams.filters=" + url.QueryEscape("Company~startswith~'C1'") + "&requestParams.page=9223372036854775807", 9223372036854775807, 20, 10, 1},
		{"requestParams.filters=" + url.QueryEscape("Company~eq~'nobody'") + "&requestParams.page=2", 2, 20, 0, 0},
		{"requestParams.filters=&requestParams.sorts=&requestParams.page=3", 3, 20, 45, 3},
	}
	for _, tt := range tests {
		r := api.do(http.MethodGet, "/api/v2/resource?"+tt.query, "")
		status, _, body := r.Status, r.Header, r.Body
		if status != http.StatusOK {
			t.Errorf("%s: %d %.300s", tt.query, status, body)
			continue
		}
		p := checkListPage(t, tt.query, body, tt.pageSize)
		if p.Page != tt.page || p.TotalResults != tt.total || p.TotalPages != tt.totalPage {
			t.Errorf("%s: Page %d TotalResults %d TotalPages %d, want %d %d %d",
				tt.query, p.Page, p.TotalResults, p.TotalPages, tt.page, tt.total, tt.totalPage)
		}
	}
}

// TestListQueryDeterministic: the same query string must always
// get the same answer. Parameter names are matched case-insensitively, so
// a query can name one parameter twice in different cases; which value
// counts must not depend on Go's random map order.
func TestListQueryDeterministic(t *testing.T) {
	t.Parallel()
	srv := newServer(DefaultConfig(), newStore(nil), nil)
	for _, raw := range []string{
		"requestParams.page=1&REQUESTPARAMS.PAGE=0",
		"requestParams.pageSize=5&requestparams.pagesize=6&RequestParams.PageSize=7",
		"requestParams.filters=Bogus~eq~'x'&requestparams.filters=Company~eq~'x'",
	} {
		first, _, firstErr := srv.parseListQuery(raw)
		for range 200 {
			q, _, err := srv.parseListQuery(raw)
			if (err == nil) != (firstErr == nil) || q.Page != first.Page || q.PageSize != first.PageSize ||
				formatFilter(q.Filter) != formatFilter(first.Filter) {
				t.Fatalf("%s: answers differ from one call to the next: (%+v, %v) then (%+v, %v)", raw, first, firstErr, q, err)
			}
		}
	}
	// A repeated page is refused: which one the client meant is unknown.
	_, _, err := srv.parseListQuery("requestParams.page=3&REQUESTPARAMS.PAGE=4&requestParams.page=5")
	if err == nil || err.Error() != "requestParams.page is given 3 times; send it once." {
		t.Errorf("repeated page: %v", err)
	}
}

// TestListQuerySemicolon: a ';' is an ordinary character of a
// query string for ASP.NET (and RFC 3986); Go's url.ParseQuery rejects it
// since Go 1.17. A filter value holding an unencoded ';' must not turn the
// whole request into a 400.
func TestListQuerySemicolon(t *testing.T) {
	t.Parallel()
	api := startServer(t, DefaultConfig(), nil)
	api.create(`{"Company":"Smith; Jones"}`)
	api.create(`{"Company":"Smith"}`)
	for _, tt := range []struct {
		query string
		want  int
		total int
	}{
		{"requestParams.filters=Company~eq~'Smith;%20Jones'", 200, 1},
		{"requestParams.filters=Company~contains~';'", 200, 1},
		{"utm=a;b&requestParams.pageSize=1", 200, 2},
		{"requestParams.page=1;2", 400, 0},
	} {
		r := api.do(http.MethodGet, "/api/v2/resource?"+tt.query, "")
		status, h, body := r.Status, r.Header, r.Body
		if status != tt.want {
			t.Errorf("%s: %d %.300s, want %d", tt.query, status, body, tt.want)
			continue
		}
		if status == 200 {
			if p := checkListPage(t, tt.query, body, -1); p.TotalResults != tt.total {
				t.Errorf("%s: TotalResults %d, want %d", tt.query, p.TotalResults, tt.total)
			}
		} else {
			checkErrorShape(t, tt.query, h, body)
		}
	}
}

// fuzzListServer is a Server with a few resources for FuzzListQuery.
func fuzzListServer(t testing.TB) *Server {
	cfg := kendoConfig()
	cfg.JournalSize = journalOff
	srv := newServer(cfg, newStore(nil), nil)
	names := []string{"Ada", "Émile", "O'Brien", "zoë", "", " ", "a~b", "(x)", "'", "Ünïcødé", "null"}
	for i, n := range names {
		body := fmt.Appendf(nil, `{"FirstName":%q,"Surname":"S%d","Company":"Co %d","Email":%q,"Status":%q}`,
			n, i, i%3, n+"@example.org", []string{"Active", "Inactive"}[i%2])
		if i%4 == 0 {
			body = fmt.Appendf(nil, `{"Company":%q,"Fax":""}`, "C"+n)
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/api/v2/resource", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		srv.ServeHTTP(rec, req)
		if rec.Code != 201 {
			t.Fatalf("seed %s: %d %s", body, rec.Code, rec.Body)
		}
	}
	return srv
}

// FuzzListQuery sends arbitrary raw query strings through parseListQuery
// and the list handler: never a panic, never a 5xx; a 400 exactly when
// parseListQuery refuses; a 200 whose page arithmetic is right.
func FuzzListQuery(f *testing.F) {
	for _, s := range []string{
		"",
		"requestParams.page=2&requestParams.pageSize=3",
		"requestParams.filters=" + url.QueryEscape("FirstName~eq~'Ada'~and~Surname~eq~'S0'"),
		"requestParams.filters=" + url.QueryEscape("(Company~contains~'co'~or~Email~endswith~'.org')~and~Status~eq~'Active'"),
		"requestParams.filters=Status='Active'&requestParams.sorts=FirstName-desc~Surname",
		"requestParams.filters=" + url.QueryEscape("Surname~eq~'O''Brien'~or~Fax~isnull~undefined"),
		"requestParams.filters=" + url.QueryEscape("StatusId~gte~2~and~FirstName~isnotnullorempty"),
		"requestParams.sorts=Position-asc~Surname-desc&requestParams.pageSize=500",
		"REQUESTPARAMS.PAGE=1&requestparams.page=0",
		"requestParams.page=0",
		"requestParams.page=-1",
		"requestParams.page=1.5",
		"requestParams.page=",
		"requestParams.page=%202%20",
		"requestParams.page=99999999999999999999",
		"requestParams.page=9223372036854775807&requestParams.pageSize=1",
		"requestParams.pageSize=9223372036854775807",
		"requestParams.pageSize=501",
		"requestParams.filters=%zz",
		"%",
		"&&&==&=",
		"a;b=c",
		"requestParams.filters=" + strings.Repeat("(", 20) + "Id~isnull" + strings.Repeat(")", 20),
		"requestParams.filters=" + strings.Repeat("Id~isnull~or~", 130) + "Id~isnull",
		"requestParams.filters=DisplayName~eq~'%00'&requestParams.sorts=%00",
		"requestParams.filters=%FF~eq~'x'",
		"requestParams.filters=DisplayName~eq~'%FF%FE'",
		"requestParams.filters=Company~eq~'a+b'&requestParams.page=+1",
		"requestParams.sorts=" + strings.Repeat("~", 100),
	} {
		f.Add(s)
	}
	srv := fuzzListServer(f)
	total := srv.defaultNS().store.count()
	f.Fuzz(func(t *testing.T, raw string) {
		q, pageSize, err := srv.parseListQuery(raw)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Message == "" {
				t.Fatalf("parseListQuery(%q): %#v, want a 400", raw, err)
			}
		} else if q.Page < 1 || pageSize < 1 || pageSize > srv.cfg.MaxPageSize || pageSize != q.PageSize {
			t.Fatalf("parseListQuery(%q): page %d pageSize %d (%d)", raw, q.Page, pageSize, q.PageSize)
		}

		req := &http.Request{
			Method: http.MethodGet, URL: &url.URL{Path: "/api/v2/resource", RawQuery: raw},
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: http.NoBody, Host: "example.org", RemoteAddr: "192.0.2.1:1234",
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		if rec.Code >= 500 {
			t.Fatalf("%q: %d %s", raw, rec.Code, body)
		}
		if rec.Header().Get("Content-Type") != "application/json; charset=utf-8" || !json.Valid(body) || !utf8.Valid(body) {
			t.Fatalf("%q: %s %q", raw, rec.Header().Get("Content-Type"), body)
		}
		if (err != nil) != (rec.Code == http.StatusBadRequest) {
			t.Fatalf("%q: parseListQuery says %v, the handler %d %s", raw, err, rec.Code, body)
		}
		if err != nil {
			checkErrorShape(t, raw, rec.Header(), body)
			return
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("%q: %d %s", raw, rec.Code, body)
		}
		p := checkListPage(t, raw, body, pageSize)
		if p.Page != q.Page || p.TotalResults > total || (q.Filter == nil && p.TotalResults != total) {
			t.Fatalf("%q: Page %d TotalResults %d (of %d), query page %d", raw, p.Page, p.TotalResults, total, q.Page)
		}
	})
}

// TestInputsPageDigits: page parameters are plain digits, as the real
// service reads them (the contract).
func TestInputsPageDigits(t *testing.T) {
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	for _, q := range []string{"page=%2B3", "page=+3", "page=%202%20", "page=2%20", "page=%202", "page=0x1", "page=1e1", "page=%D9%A3", "page=-1", "pageSize=%2B5", "pageSize=%205", "pageSize=5.0"} {
		r := doStrictJSON(t, a, http.MethodGet, "/api/v2/resource?requestParams."+q, "")
		if r.Status != http.StatusBadRequest {
			t.Errorf("requestParams.%s: %d %s, want 400", q, r.Status, r.Body)
		}
	}
	for _, q := range []string{"page=3", "page=03", "pageSize=5"} {
		if r := doStrictJSON(t, a, http.MethodGet, "/api/v2/resource?requestParams."+q, ""); r.Status != http.StatusOK {
			t.Errorf("requestParams.%s: %d %s, want 200", q, r.Status, r.Body)
		}
	}
}

// rawJSON is a value putBody and rawObject write as it is.
type rawJSON string

// omitted, as a value given to putBody, removes the property.
type omitted struct{}

var omit = omitted{}

// putBody returns a full PUT body for id whose values describe the
// resource adaCreate creates; pairs of key, value replace or add
// properties (a rawJSON value is written as it is, omit removes one). Keys
// come in sorted order.
func putBody(id string, pairs ...any) string {
	m := map[string]any{
		"Id": id, "DisplayName": "Ada Lovelace", "FirstName": "Ada", "Surname": "Lovelace", "Company": "Analytical Engines",
		"Position": "Countess", "Phone": "", "Mobile": nil, "Fax": nil, "Email": "ada@example.org", "AddressComment": "London",
		"ExternalID": "X-1", "Status": "Active", "Types": []any{map[string]any{"Type": "Employee"}},
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		k := pairs[i].(string)
		if pairs[i+1] == omit {
			delete(m, k)
			continue
		}
		m[k] = pairs[i+1]
	}
	props := make(map[string]string, len(m))
	for k, v := range m {
		if raw, ok := v.(rawJSON); ok {
			props[k] = string(raw)
			continue
		}
		props[k] = encodeJSON(v)
	}
	return string(rawObject(props))
}

// encodeJSON encodes v as encoding/json does without HTML escaping.
func encodeJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// rawObject writes a JSON object of raw values, keys in sorted order.
func rawObject(props map[string]string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(props)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.WriteString(props[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// topKeys returns the property names of a JSON object, in order.
func topKeys(raw []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %.200s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return keys, nil
}

// apiPadded returns a create body of exactly n bytes.
func apiPadded(n int) string {
	const head, tail = `{"Company":"C","AddressComment":"`, `"}`
	return head + apiRep("x", n-len(head)-len(tail)) + tail
}

const apiAda = `{"DisplayName":"Ada Lovelace","FirstName":"Ada","Surname":"Lovelace","Company":"Analytical Engines",
	"Position":"Countess","Phone":"","Email":"ada@example.org","AddressComment":"London","ExternalID":"X-1",
	"Types":[{"Type":"Employee"}],"Address":{"Street":"St James's Square","No":12}}`

func apiNumbered(n int) []string {
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = fmt.Sprintf(`{"DisplayName":"R%04d","Company":"C"}`, i+1)
	}
	return bodies
}

var apiRep = strings.Repeat

// apiSeed stores resources made from create bodies straight through the
// store, for lists too long to post one by one.
func apiSeed(t testing.TB, s *store, bodies ...string) []string {
	t.Helper()
	var ids []string
	for _, body := range bodies {
		r, err := buildBody([]byte(body), modeCreate, "")
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		r, err = s.create(r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.id())
	}
	return ids
}

// apiTypeIDs is the spec's requestor type table.
var apiTypeIDs = map[string]int{"Team": 2, "Customer": 4, "Contractor": 8, "Employee": 16, "Company": 32}
