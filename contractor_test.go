package resourcedir

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ContractorOrganization (behaviour.md 1): a nullable string, optional
// everywhere, stored as sent, filterable and sortable under -filters kendo
// only.

// wantExact fails unless r is exactly status and body.
func wantExact(t *testing.T, r response, status int, body string) {
	t.Helper()
	if r.Status != status || string(r.Body) != body {
		t.Errorf("%d %s\nwant %d %s", r.Status, r.Body, status, body)
	}
}

func TestContractorOrganizationWrites(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	_, created := a.on(t).create(`{"Company":"C","ContractorOrganization":"Hays"}`)
	w := wantResource{DisplayName: "C", Company: "C", ContractorOrganization: "Hays", Types: []string{}}
	if want := w.created(); string(created) != want {
		t.Errorf("created %s\nwant %s", created, want)
	}

	// A PUT without it is not a partial update: it sets it to null.
	ada, _ := a.on(t).create(`{"DisplayName":"Ada Lovelace","FirstName":"Ada","Surname":"Lovelace","Company":"Analytical Engines",
		"Position":"Countess","Phone":"","Email":"ada@example.org","AddressComment":"London","ExternalID":"X-1",
		"Types":[{"Type":"Employee"}],"Address":{"Street":"St James's Square","No":12},"ContractorOrganization":"Hays"}`)
	adaWant := apiAdaWant(ada)
	adaWant.ContractorOrganization = "Hays"
	list := func(id string) string {
		r := a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.filters="+url.QueryEscape("Id~eq~'"+id+"'"), "")
		return string(r.Body)
	}
	if got, want := list(ada), `{"TotalResults":1,"TotalPages":1,"Page":1,"ResourceList":[`+adaWant.wire(true)+`],"_links":[],"_embedded":null}`; got != want {
		t.Errorf("stored %s\nwant %s", got, want)
	}
	adaWant.ContractorOrganization = "Randstad & Co"
	wantExact(t, a.on(t).do(http.MethodPut, "/api/v2/resource/"+ada, putBody(ada, "contractorORGANIZATION", "Randstad & Co")), 200, adaWant.wire(true))
	adaWant.ContractorOrganization = nil
	wantExact(t, a.on(t).do(http.MethodPut, "/api/v2/resource/"+ada, putBody(ada)), 200, adaWant.wire(true))
	if got, want := list(ada), `{"TotalResults":1,"TotalPages":1,"Page":1,"ResourceList":[`+adaWant.wire(true)+`],"_links":[],"_embedded":null}`; got != want {
		t.Errorf("after a PUT without it %s\nwant %s", got, want)
	}
	wantExact(t, a.on(t).do(http.MethodPut, "/api/v2/resource/"+ada, putBody(ada, "ContractorOrganization", 5)), 400,
		`{"Message":"The request is invalid.","ModelState":{"ContractorOrganization":["ContractorOrganization must be a string or null."]}}`)

	// A seed takes it, and GET /__admin/resources gives it back.
	const seedID = "0b7c5e2a-4f1d-4c3b-9a8e-1d2c3b4a5f60"
	wantExact(t, a.on(t).do(http.MethodPost, "/__admin/resources", `[{"Id":"`+seedID+`","Company":"S","ContractorOrganization":""}]`), 200,
		`{"Total":1,"Ids":["`+seedID+`"]}`)
	seeded := wantResource{ID: seedID, DisplayName: "S", Company: "S", ContractorOrganization: "", Types: []string{}}
	if got, want := list(seedID), `{"TotalResults":1,"TotalPages":1,"Page":1,"ResourceList":[`+seeded.wire(true)+`],"_links":[],"_embedded":null}`; got != want {
		t.Errorf("seeded %s\nwant %s", got, want)
	}
}

func TestContractorOrganizationFiltersByDialect(t *testing.T) {
	t.Parallel()
	for _, kendo := range []bool{false, true} {
		cfg := DefaultConfig()
		if kendo {
			cfg = kendoConfig()
		}
		a := startServer(t, cfg, nil).checkingEvery()
		idB, _ := a.on(t).create(`{"Company":"B","ContractorOrganization":"Hays"}`)
		idA, _ := a.on(t).create(`{"Company":"A","ContractorOrganization":"adecco"}`)
		a.on(t).create(`{"Company":"N"}`)
		filter := "/api/v2/resource?requestParams.filters=" + url.QueryEscape("ContractorOrganization~contains~'A'")
		sort := "/api/v2/resource?requestParams.sorts=contractororganization-desc"
		if !kendo {
			msg := "filter: at character 1: the field ContractorOrganization is not documented by the real service; -filters kendo accepts it"
			wantExact(t, a.on(t).do(http.MethodGet, filter, ""), 400,
				`{"Message":"`+msg+`","ModelState":{"requestParams.filters":["`+msg+`"]}}`)
			msg = "sorts: the field ContractorOrganization is not documented by the real service; -filters kendo sorts by it"
			wantExact(t, a.on(t).do(http.MethodGet, sort, ""), 400,
				`{"Message":"`+msg+`","ModelState":{"requestParams.sorts":["`+msg+`"]}}`)
			r := a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.filters="+url.QueryEscape("Nope~eq~'x'"), "")
			if r.Status != 400 || strings.Contains(string(r.Body), "ContractorOrganization") {
				t.Errorf("assetic lists ContractorOrganization among its fields: %d %s", r.Status, r.Body)
			}
			continue
		}
		l := a.on(t).list(strings.TrimPrefix(filter, "/api/v2/resource?"))
		if got := l.ids(); fmt.Sprint(got) != fmt.Sprint([]string{idB, idA}) {
			t.Errorf("kendo filter: %v, want %v", got, []string{idB, idA})
		}
		l = a.on(t).list(strings.TrimPrefix(sort, "/api/v2/resource?"))
		if got := l.ids(); len(got) != 3 || got[0] != idB || got[1] != idA {
			t.Errorf("kendo sort desc: %v, want %s, %s, then null", got, idB, idA)
		}
	}
}

// Repeated list parameters (behaviour.md 4): the vendor's client sends a
// list of filters or sorts as repeated parameters.
func TestListRepeatedParameters(t *testing.T) {
	t.Parallel()
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	apiSeed(t, a.store, `{"DisplayName":"Ada","Company":"A","Status":"Active"}`, `{"DisplayName":"Bob","Company":"A","Status":"Inactive"}`,
		`{"DisplayName":"Cid","Company":"B","Status":"Active"}`, `{"DisplayName":"Dee","Company":"A","Status":"Active"}`)
	names := func(query string) string {
		t.Helper()
		return fmt.Sprint(a.on(t).list(query).names())
	}
	q := url.QueryEscape
	for _, tt := range []struct{ query, want string }{
		// Each parsed on its own, joined with ~and~: the ~or~ of the first
		// stays inside it, which assetic would refuse in one filter.
		{"requestParams.filters=" + q("DisplayName~eq~'Ada'~or~DisplayName~eq~'Cid'") + "&requestParams.filters=" + q("Company~eq~'a'"), "[Ada]"},
		{"requestParams.filters=" + q("Company~eq~'A'") + "&REQUESTPARAMS.FILTERS=" + q("Status~eq~'Active'") + "&requestParams.filters=", "[Ada Dee]"},
		{"requestParams.filters=&requestParams.filters=%20", "[Ada Bob Cid Dee]"},
		// Sorts apply in the order sent.
		{"requestParams.sorts=Company-desc&requestParams.sorts=&requestParams.sorts=DisplayName-desc", "[Cid Dee Bob Ada]"},
		{"requestParams.sorts=Status&requestparams.sorts=Company-desc", "[Cid Ada Dee Bob]"},
	} {
		if got := names(tt.query); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.query, got, tt.want)
		}
	}

	// An error names the value by its position as sent, empty ones counted.
	msg := `requestParams.filters[2]: filter: at character 9: the operator isnull is not documented by the real service; -filters kendo accepts it`
	wantExact(t, a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.filters="+q("Company~eq~'A'")+
		"&requestParams.filters=&requestParams.filters="+q("Company~isnull~"), ""), 400,
		`{"Message":"`+msg+`","ModelState":{"requestParams.filters[2]":["`+msg+`"]}}`)
	wantExact(t, a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.filters="+q("Nope~eq~'x'")+"&requestParams.filters="+q("Company~eq~'A"), ""), 400,
		`{"Message":"The request is invalid.","ModelState":{"requestParams.filters[0]":["requestParams.filters[0]: filter: at character 1: unknown field \"Nope\"; the fields are Id, DisplayName, FirstName, Surname, Company, Position, Status, ExternalID, Phone, Mobile, Fax, Email, AddressComment, StatusId"],`+
			`"requestParams.filters[1]":["requestParams.filters[1]: filter: at character 14: expected ' to close the value that starts at character 12"]}}`)
	// A single value keeps the messages of section 5.
	msg = `filter: at character 9: the operator isnull is not documented by the real service; -filters kendo accepts it`
	wantExact(t, a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.filters="+q("Company~isnull~"), ""), 400,
		`{"Message":"`+msg+`","ModelState":{"requestParams.filters":["`+msg+`"]}}`)

	// The limits hold for the joined whole.
	cond := "Company~eq~'A'"
	half := strings.TrimSuffix(strings.Repeat(cond+"~and~", 64), "~and~")
	msg = "requestParams.filters[2]: filter: at character 1: more than the limit of 128 conditions"
	wantExact(t, a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.filters="+q(half)+"&requestParams.filters="+q(half)+"&requestParams.filters="+q(cond), ""), 400,
		`{"Message":"`+msg+`","ModelState":{"requestParams.filters[2]":["`+msg+`"]}}`)
	if got := names("requestParams.filters=" + q(half) + "&requestParams.filters=" + q(half)); got != "[Ada Bob Dee]" {
		t.Errorf("128 conditions in two values: %s", got)
	}
	long := "DisplayName~eq~'" + strings.Repeat("x", 2100) + "'"
	msg = "the filters joined with ~and~ are 4239 bytes long, over the limit of 4096 bytes"
	wantExact(t, a.on(t).do(http.MethodGet, "/api/v2/resource?requestParams.filters="+q(long)+"&requestParams.filters="+q(long), ""), 400,
		`{"Message":"`+msg+`","ModelState":{"requestParams.filters":["`+msg+`"]}}`)

	// A repeated page or page size is a 400 naming it.
	for _, name := range []string{"requestParams.page", "requestParams.pageSize"} {
		msg := name + " is given 2 times; send it once."
		wantExact(t, a.on(t).do(http.MethodGet, "/api/v2/resource?"+name+"=1&"+strings.ToUpper(name)+"=1", ""), 400,
			`{"Message":"`+msg+`","ModelState":{"`+name+`":["`+msg+`"]}}`)
	}
}

// TestJournalIgnored: a list's entry names the query parameters the list
// ignored, each with the closest one it reads, raw on the wire and in the
// Go handle; other entries, and a list that ignored nothing, have none.
func TestJournalIgnored(t *testing.T) {
	t.Parallel()
	d := RunT(t, DefaultConfig())
	get := func(path string) {
		t.Helper()
		resp, err := http.Get(d.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get("/api/v2/resource?requestParams.filter=" + url.QueryEscape("Company~eq~'A'") + "&REQUESTPARAMS.PAGE=1&requestParams.pagesize=2&Sorts=x&=y")
	get("/api/v2/resource?requestparams.sorts=Company&tag=a&tag=b")
	get("/api/v2/resource?requestParams.pageSize=2")
	get("/api/v2/resource/00000000-0000-4000-8000-000000000001?requestParams.filter=x")
	r, err := http.Get(d.URL + "/__admin/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var wire struct{ Requests []map[string]json.RawMessage }
	if err := json.NewDecoder(r.Body).Decode(&wire); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"Sorts":"requestParams.sorts","requestParams.filter":"requestParams.filters"}`, `{"tag":"requestParams.page"}`, ``, ``}
	for i, en := range wire.Requests {
		if got := string(en["Ignored"]); got != want[i] {
			t.Errorf("entry %d: Ignored %s, want %s", i, got, want[i])
		}
	}
	reqs := d.Requests(RequestFilter{})
	if len(reqs) != 4 || fmt.Sprint(reqs[0].Ignored) != "map[Sorts:requestParams.sorts requestParams.filter:requestParams.filters]" || reqs[2].Ignored != nil {
		t.Errorf("the handle reads %d entries, Ignored %v", len(reqs), reqs)
	}
}

// TestSnapshotBeforeContractorOrganization: a snapshot written before the
// property existed (format 4, without it among its Fields) loads it as
// null; one written now keeps it.
func TestSnapshotBeforeContractorOrganization(t *testing.T) {
	rs := snapRealistic(3)
	rs[0].set(fieldContractorOrganization, "Hays", true)
	rs[1].set(fieldContractorOrganization, "", true)
	var older snapshotRecords
	fields := slices.DeleteFunc(slices.Clone(fieldNames[:numStringFields]), func(n string) bool { return n == "ContractorOrganization" })
	for _, r := range rs {
		rec := recordOf(r, 0)
		rec.Values = slices.Delete(slices.Clone(rec.Values), int(fieldContractorOrganization), int(fieldContractorOrganization)+1)
		rec.Nulls = slices.DeleteFunc(slices.Clone(rec.Nulls), func(i uint8) bool { return i == uint8(fieldContractorOrganization) })
		for i, n := range rec.Nulls {
			if n > uint8(fieldContractorOrganization) {
				rec.Nulls[i] = n - 1
			}
		}
		older.Records = append(older.Records, rec)
	}
	data := snapFrame(4, snapGob(t, snapshotHeader{Fields: fields, Namespaces: []snapshotNamespace{{Name: "default", Own: 3}}}, &older))
	path := filepath.Join(t.TempDir(), "older.gob")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readSnapshotFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		want := *r
		want.set(fieldContractorOrganization, "", false)
		if w, g := snapWire(&want), snapWire(got[i]); g != w || !strings.Contains(g, `"ContractorOrganization":null`) {
			t.Errorf("resource %d:\n got %s\nwant %s", i, g, w)
		}
	}

	var current snapshotRecords
	for _, r := range rs {
		current.Records = append(current.Records, recordOf(r, 0))
	}
	data = snapFrame(4, snapGob(t, snapshotHeader{Fields: fieldNames[:numStringFields], Namespaces: []snapshotNamespace{{Name: "default", Own: 3}}}, &current))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err = readSnapshotFile(path); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`"ContractorOrganization":"Hays"`, `"ContractorOrganization":""`} {
		if g := snapWire(got[i]); !strings.Contains(g, want) {
			t.Errorf("resource %d: %s lacks %s", i, g, want)
		}
	}
}
