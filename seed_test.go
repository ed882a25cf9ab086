package resourcedir

// Tests of seed.go: POST /__admin/resources and its per-item errors, and
// the seed decoder under arbitrary input.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestSeedThenFilterBySeededID(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	const given = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
	want := strings.ToLower(given)
	data := e.seed(`[
		{"Id": "` + given + `", "FirstName": "Ada", "Surname": "Lovelace", "Status": "inactive",
		 "Types": [{"Type": "employee"}, {"Type": "Team"}], "ExternalID": "EXT-1", "Address": {"City": "London"}},
		{"Company": "Analytical Engines", "StatusId": 7, "Id": null},
		{"FirstName": "Grace"}
	]`)
	if len(data) != 3 {
		t.Fatalf("seed returned %d resources, want 3", len(data))
	}
	if data[0].Id != want {
		t.Errorf("seeded Id %q, want %q (canonical lower case)", data[0].Id, want)
	}
	if data[0].DisplayName != "Ada Lovelace" || data[0].Status != "Inactive" || data[0].StatusId != 2 {
		t.Errorf("create rules not applied to the seed: %+v", data[0])
	}
	if len(data[0].Types) != 2 || data[0].Types[0].Id != 16 || data[0].Types[0].Type != "Employee" || data[0].Types[1].Id != 2 {
		t.Errorf("Types %+v", data[0].Types)
	}
	if string(data[0].Address) != `{"City":"London"}` {
		t.Errorf("Address %s", data[0].Address)
	}
	for _, r := range data[1:] {
		if !guidV4.MatchString(r.Id) {
			t.Errorf("generated Id %q is not a lower-case v4 GUID", r.Id)
		}
	}
	if data[1].StatusId != 1 || data[1].DisplayName != "Analytical Engines" {
		t.Errorf("second item %+v", data[1])
	}

	for _, filter := range []string{want, given} {
		var list struct {
			TotalResults int
			ResourceList []seededResource
		}
		e.getJSON("/api/v2/resource?requestParams.filters="+urlQueryEscape("Id~eq~'"+filter+"'"), &list)
		if list.TotalResults != 1 || len(list.ResourceList) != 1 || list.ResourceList[0].Id != want {
			t.Errorf("filter by seeded Id %s: %+v", filter, list)
		}
	}

	all := e.all()
	if len(all) != 3 || all[0].Id != want || all[1].Id != data[1].Id || all[2].Id != data[2].Id {
		t.Errorf("GET /__admin/resources is not every resource in creation order: %+v", all)
	}
	r := e.expect(http.StatusOK, http.MethodGet, "/__admin/resources", "")
	if bytes.Contains(r.Body, []byte("_links")) {
		t.Errorf("admin resources carry _links: %s", r.Body)
	}

	// A created resource comes after the seeded ones.
	created := e.createPerson("Alan")
	all = e.all()
	if len(all) != 4 || all[3].Id != created.Id {
		t.Errorf("created resource not last: %+v", all)
	}
}

func TestSeedDuplicateIDWithinArray(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	const id = "0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c"
	r := e.expect(http.StatusBadRequest, http.MethodPost, "/__admin/resources", `[
		{"Id": "`+id+`", "Company": "A"},
		{"Company": "B"},
		{"Id": "`+strings.ToUpper(id)+`", "Company": "C"}
	]`)
	ae := r.wantError(t, 0, "", anyModelState)
	msgs := ae.ModelState["[2].Id"]
	if len(msgs) != 1 || !strings.Contains(msgs[0], id) || !strings.Contains(msgs[0], "item 0") {
		t.Errorf("ModelState %v, want [2].Id naming %s and item 0", ae.ModelState, id)
	}
	if !strings.Contains(ae.Message, "nothing was seeded") {
		t.Errorf("Message %q should say nothing was seeded", ae.Message)
	}
	if n := e.health(); n != 0 {
		t.Errorf("%d resources after a refused seed, want 0", n)
	}
}

func TestSeedDuplicateIDAgainstExisting(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	const id = "0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c"
	e.seed(`[{"Id": "` + id + `", "Company": "A"}]`)
	r := e.expect(http.StatusBadRequest, http.MethodPost, "/__admin/resources", `[
		{"Company": "B"},
		{"Id": "`+strings.ToUpper(id)+`", "Company": "C"},
		{"Company": "D"}
	]`)
	ae := r.wantError(t, 0, "", anyModelState)
	msgs := ae.ModelState["[1].Id"]
	if len(msgs) != 1 || !strings.Contains(msgs[0], id) || !strings.Contains(msgs[0], "nothing was seeded") {
		t.Errorf("ModelState %v, want [1].Id naming %s", ae.ModelState, id)
	}
	if n := e.health(); n != 1 {
		t.Errorf("%d resources after a refused seed, want the 1 already there", n)
	}
	// A generated Id can never collide with a given one either.
	e.createPerson("After")
	if n := e.health(); n != 2 {
		t.Errorf("%d resources, want 2", n)
	}
}

func TestSeedPerItemErrorsNameIndexAndField(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	e.seed(`[{"Company": "Existing"}]`)
	long := strings.Repeat("x", 51)
	r := e.expect(http.StatusBadRequest, http.MethodPost, "/__admin/resources", `[
		{"FirstName": "Ok"},
		{"FirstName": "`+long+`", "Company": "Acme"},
		{"FirstName": "Bob", "Status": "Retired", "Types": [{"Type": "Alien"}]},
		"not an object",
		{"Id": "not-a-guid", "Company": "Acme"},
		{"Surname": 42},
		{}
	]`)
	ae := r.wantError(t, 0, "", anyModelState)
	for _, key := range []string{"[1].FirstName", "[2].Status", "[2].Types[0].Type", "[3]", "[4].Id", "[5].Surname", "[6].Company"} {
		if len(ae.ModelState[key]) == 0 {
			t.Errorf("ModelState lacks %s: %v", key, ae.ModelState)
		}
	}
	for key := range ae.ModelState {
		if strings.HasPrefix(key, "[0]") {
			t.Errorf("valid item 0 reported: %s %v", key, ae.ModelState[key])
		}
	}
	if !strings.Contains(strings.Join(ae.ModelState["[1].FirstName"], " "), "51") {
		t.Errorf("[1].FirstName message should give the length: %v", ae.ModelState["[1].FirstName"])
	}
	if n := e.health(); n != 1 {
		t.Errorf("%d resources after a refused seed, want 1", n)
	}
}

func TestSeedBodyNotAnArray(t *testing.T) {
	t.Parallel()
	e := startServer(t, Config{MaxPageSize: 500, MaxBody: 1 << 20, MaxSeedBody: 100, JournalSize: 10}, nil)
	for _, body := range []string{`{"Company": "A"}`, `null`, `"x"`, `[{"Company": "A"}`, `[{"Company": "A"}] x`, ``} {
		r := e.do(http.MethodPost, "/__admin/resources", body)
		if r.Status != http.StatusBadRequest {
			t.Errorf("seed body %q: status %d, want 400; %s", body, r.Status, r.Body)
			continue
		}
		r.wantError(t, 0, "", anyModelState)
	}
	// An empty array is a valid, empty seed.
	if got := e.seed(`[]`); len(got) != 0 {
		t.Errorf("empty seed returned %v", got)
	}
	big := `[` + strings.Repeat(`{"Company":"A"},`, 20) + `{"Company":"A"}]`
	e.expect(http.StatusRequestEntityTooLarge, http.MethodPost, "/__admin/resources", big).wantError(t, 0, "", anyModelState)
	if n := e.health(); n != 0 {
		t.Errorf("%d resources, want 0", n)
	}
}

// TestSeedLargeKeepsOrder: a large seed, read item by item, comes back
// whole and in order, as GET /__admin/resources lists it.
func TestSeedLargeKeepsOrder(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	var items []string
	for i := range 1500 {
		items = append(items, fmt.Sprintf(`{"Company": "Co %d", "ExternalID": "X-%d"}`, i, i))
	}
	seeded := e.seed("[" + strings.Join(items, ",") + "]")
	listed := e.all()
	if len(seeded) != 1500 || len(listed) != 1500 {
		t.Fatalf("seeded %d, listed %d, want 1500", len(seeded), len(listed))
	}
	for i := range seeded {
		if want := fmt.Sprintf("X-%d", i); seeded[i].ExternalID == nil || *seeded[i].ExternalID != want || seeded[i].Id != listed[i].Id {
			t.Fatalf("item %d: seeded %+v, listed %+v", i, seeded[i], listed[i])
		}
	}
}

// TestSeedFileStrict: the -seed file is read as POST /__admin/resources
// reads a seed, an unknown property included.
func TestSeedFileStrict(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(path, []byte(`[{"Company":"A"},{"Company":"B","Frstname":"Ada"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(Config{SeedFile: path})
	want := "seed " + path + ": The seed is invalid; nothing was seeded; item [1].Frstname: Frstname is not a resource property; did you mean FirstName?"
	if err == nil || err.Error() != want {
		t.Errorf("New: %v\nwant %s", err, want)
	}
}

// TestSeedNotJSON: a seed that is not a JSON array says what and where,
// positions counted in the body as sent, as encoding/json reads it whole.
func TestSeedNotJSON(t *testing.T) {
	t.Parallel()
	nested := func(n int) string {
		return `[{"Company":"x"},{"Company":"x","Address":{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}]`
	}
	tests := []struct{ name, body, msg string }{
		{"empty", " \n", "The seed is empty; expected a JSON array of resources."},
		{"an object", `{"Company":"A"}`, "The seed must be a JSON array of resources, not an object."},
		{"not JSON before it is not an array", `{"Company":}`, "The seed is not valid JSON: invalid character '}' looking for beginning of value (at byte 11)."},
		{"a bad value in the second item", `[{"Company":"x"}, {"Company":x}]`, "The seed is not valid JSON: invalid character 'x' looking for beginning of value (at byte 29)."},
		{"a trailing comma", `[{"Company":"x"},]`, "The seed is not valid JSON: invalid character ']' looking for beginning of value (at byte 17)."},
		{"no comma", `[{"Company":"x"} {"Company":"y"}]`, "The seed is not valid JSON: invalid character '{' after array element (at byte 17)."},
		{"a brace for a bracket", `[{"Company":"x"}}`, "The seed is not valid JSON: invalid character '}' after array element (at byte 16)."},
		{"ends after an item", `[{"Company":"x"}`, "The seed is not valid JSON: it ends early, at byte 16."},
		{"ends after a comma", `[{"Company":"x"},`, "The seed is not valid JSON: it ends early, at byte 17."},
		{"ends in an item", "\xEF\xBB\xBF" + `[{"Company":"x"},{"Comp`, "The seed is not valid JSON: it ends early, at byte 26."},
		{"a position past a byte-order mark", "\xEF\xBB\xBF" + `[{"Company":}]`, "The seed is not valid JSON: invalid character '}' looking for beginning of value (at byte 15)."},
		{"data after the array", `[{"Company":"x"}] x`, "The seed has data after the JSON array, at byte 18."},
		// Alone the second item nests 10,000 deep, as deep as encoding/json
		// reads; in the seed's array it is one deeper.
		{"nested too deep in the array", nested(9998), "The seed is not valid JSON: invalid character '[' exceeded max depth (at byte 10044)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := decodeSeed([]byte(tt.body))
			if je, ok := err.(*apiError); !ok || je.Message != tt.msg || !je.ModelState.empty() || rs != nil {
				t.Errorf("decodeSeed: %d resources, error %v\nwant %s", len(rs), err, tt.msg)
			}
		})
	}
	if rs, err := decodeSeed([]byte(nested(9997))); err != nil || len(rs) != 2 {
		t.Errorf("a seed nested 10,000 deep: %d resources, error %v", len(rs), err)
	}
}

// The seed decoder under arbitrary input (the contract): it never
// panics, seeds all items or none, lists at most maxProblems problems (the
// first ones, in the order of the body) plus a count of the rest, and every
// position it names is within the body.

var seedFuzzAtByte = regexp.MustCompile(`at byte (\d+)`)

// seedFuzzItem is item i of a generated seed; every seventh is invalid
// (no name at all), every thirteenth has a bad Status too.
func seedFuzzItem(i int) string {
	switch {
	case i%13 == 0:
		return `{"Status":"Gone","Types":[{"Type":"Employee"}]}`
	case i%7 == 0:
		return `{"Position":"nobody","Address":{"n":` + strconv.Itoa(i) + `}}`
	}
	return fmt.Sprintf(`{"Company":"Company %d","Types":[{"Type":"Team"}],"Address":{"Street":"%d Main St"}}`, i, i)
}

func seedFuzzArray(n int, item func(int) string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = item(i)
	}
	return "[" + strings.Join(items, ",") + "]"
}

func FuzzDecodeSeed(f *testing.F) {
	for _, seed := range []string{
		`[]`, ` [ ] `, ``, `{}`, `[{}]`, `[{},{}]`, `[1]`, `[{"Company":"x"}]`, `[{"Company":"x"},]`, `[{"Company":"x"}`,
		`[{"Company":"x"}] x`, `[{"Company":"x"}]]`, "\xEF\xBB\xBF[{\"Company\":\"x\"}]", "\xEF\xBB\xBF[{\"Company\":}]",
		`[{"Id":"00000000-0000-4000-8000-000000000001","Company":"a"},{"Id":"00000000-0000-4000-8000-000000000001","Company":"b"}]`,
		`[{"Id":"nope","Company":"x"}]`, `[{"Company":"\ud800","Address":{"\udc00":"\ud800"}}]`,
		`[{"Types":[0,{},{"Type":"Nope"},{"Type":null}]}]`, `[{"Company":"x","Status":7}]`, `[[[[[[[]]]]]]]`,
		`[{"Company":"x"}, "a", null, true, 1.5e3]`, `[{"Company":"x","Address":"street"}]`,
		`[{"Company":"x","Frstname":1,"_LINKS":[],"statusid":"?","Types":[{"Tpye":"Team","id":{}},{"Type":"Team","_embedded":[]}]}]`,
		`[{"Company":"x","\u005flinks":1,"Comp\u0061ny":"y","\ud800":2,"":3}]`,
		seedFuzzArray(300, func(int) string { return `{}` }),
		seedFuzzArray(600, seedFuzzItem),
		seedFuzzArray(600, seedFuzzItem)[:9000],
		"[" + strings.Repeat(`{"Company":"x"},`, 1500) + `{"Company":"x"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		resources, err := decodeSeed(body)
		seedFuzzCheck(t, body, resources, err)
	})
}

func seedFuzzCheck(t *testing.T, body []byte, resources []*resource, err error) {
	t.Helper()
	trimmed := bytes.TrimPrefix(body, utf8BOM)
	var items []json.RawMessage
	isArray := json.Unmarshal(trimmed, &items) == nil && bytes.HasPrefix(bytes.TrimLeft(trimmed, " \t\r\n"), []byte("["))
	if err == nil {
		if !isArray || len(resources) != len(items) {
			t.Fatalf("seeded %d resources from a body encoding/json reads as %d items (array %v): %.300q", len(resources), len(items), isArray, body)
		}
		for i, r := range resources {
			if r == nil {
				t.Fatalf("resource %d is nil", i)
			}
		}
		return
	}
	if resources != nil {
		t.Fatalf("an error (%v) with %d resources: all or nothing", err, len(resources))
	}
	e, _ := err.(*apiError)
	switch {
	case e != nil && e.Status == http.StatusBadRequest && e.ModelState.empty():
		for _, m := range seedFuzzAtByte.FindAllStringSubmatch(e.Message, -1) {
			if at, _ := strconv.Atoi(m[1]); at > len(body) {
				t.Fatalf("%q names byte %d of a %d-byte body", e.Message, at, len(body))
			}
		}
		if isArray && json.Valid(trimmed) && !strings.Contains(e.Message, "exceeded max depth") {
			t.Fatalf("a JSON syntax error (%s) for a body encoding/json reads: %.300q", e.Message, body)
		}
	case e != nil && e.Status == http.StatusBadRequest:
		if !isArray {
			t.Fatalf("a validation error (%s) for a body encoding/json does not read as an array: %.300q", e.Message, body)
		}
		listed, keys := 0, 0
		for key, msgs := range e.ModelState.props {
			keys++
			listed += len(msgs)
			index, _, ok := strings.Cut(strings.TrimPrefix(key, "["), "]")
			n, err := strconv.Atoi(index)
			if !strings.HasPrefix(key, "[") || !ok || err != nil || n < 0 || n >= len(items) {
				t.Fatalf("ModelState key %q does not name one of the %d items", key, len(items))
			}
		}
		if listed > maxProblems || listed == 0 {
			t.Fatalf("%d problems listed, want 1 to %d", listed, maxProblems)
		}
		if listed < maxProblems && e.ModelState.problems != listed {
			t.Fatalf("%d problems listed of %d, though fewer than %d", listed, e.ModelState.problems, maxProblems)
		}
		var wire map[string][]string
		b, _ := json.Marshal(e.ModelState)
		if json.Unmarshal(b, &wire) != nil || len(wire) != keys+boolInt(e.ModelState.problems > listed) {
			t.Fatalf("ModelState answers %s", b)
		}
	default:
		t.Fatalf("an error of type %T: %v", err, err)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSeedProblemsFirstInBodyOrder: the problems kept are the first ones
// in the body, items in order and each item's own in its order.
func TestSeedProblemsFirstInBodyOrder(t *testing.T) {
	bad := `{"Position":"no name"}`
	good := `{"Company":"name!"}`
	// Items 950 to 1100 are bad: the first 100 problems are those of
	// items 950 to 1049.
	body := seedFuzzArray(1920, func(i int) string {
		if i >= 950 && i <= 1100 {
			return bad
		}
		return good
	})
	_, err := decodeSeed([]byte(body))
	var keys []string
	for i := 950; i < 1050; i++ {
		keys = append(keys, fmt.Sprintf("[%d].Company", i))
	}
	seedFuzzWantKept(t, "items 950 to 1100 bad", err, keys, 151)

	// One item: its first 99 Types problems after item 0's one.
	types := strings.TrimSuffix(strings.Repeat("0,", 150), ",")
	_, err = decodeSeed([]byte(`[{}, {"Company":"x","Types":[` + types + `]}]`))
	keys = []string{"[0].Company"}
	for i := range 99 {
		keys = append(keys, fmt.Sprintf("[1].Types[%d].Type", i))
	}
	seedFuzzWantKept(t, "150 bad Types after one bad item", err, keys, 151)
}

func seedFuzzWantKept(t *testing.T, what string, err error, keys []string, problems int) {
	t.Helper()
	ve, ok := err.(*apiError)
	if !ok || ve.ModelState.empty() {
		t.Fatalf("%s: %v, want a validation error", what, err)
	}
	var missing []string
	for _, k := range keys {
		if !ve.ModelState.has(k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 || ve.ModelState.kept() != len(keys) || ve.ModelState.problems != problems {
		t.Errorf("%s: %d kept of %d problems, missing %q; want the %d first of %d", what, ve.ModelState.kept(), ve.ModelState.problems, missing, len(keys), problems)
	}
}
