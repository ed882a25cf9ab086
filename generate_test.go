package resourcedir

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// genDecode reads a seed file as items, null kept apart from "".
func genDecode(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var items []map[string]any
	if err := json.Unmarshal(b, &items); err != nil {
		t.Fatalf("the seed file is not a JSON array of objects: %v", err)
	}
	return items
}

func TestGenerateDeterministic(t *testing.T) {
	t.Parallel()
	a, b := genSeed(t, 300, 1), genSeed(t, 300, 1)
	if !bytes.Equal(a, b) {
		t.Errorf("the default seed is not 1, or the same seed gives different output")
	}
	if c := genSeed(t, 300, 2); bytes.Equal(a, c) {
		t.Errorf("seeds 1 and 2 give the same output")
	}
	// A longer run extends a shorter one: the items do not depend on -n.
	long := genDecode(t, genSeed(t, 400, 1))
	short := genDecode(t, a)
	if len(short) != 300 || len(long) != 400 {
		t.Fatalf("got %d and %d items, want 300 and 400", len(short), len(long))
	}
	for i := range short {
		x, _ := json.Marshal(short[i])
		y, _ := json.Marshal(long[i])
		if !bytes.Equal(x, y) {
			t.Fatalf("item %d differs between -n 300 and -n 400:\n%s\n%s", i, x, y)
		}
	}
	for _, item := range short {
		if _, ok := item["Id"]; ok {
			t.Fatalf("a generated item carries an Id: %v", item)
		}
	}
}

// TestGenerateSeedsAServer posts `generate -n 2000` as a seed: every item
// passes the create rules.
func TestGenerateSeedsAServer(t *testing.T) {
	t.Parallel()
	c := startServer(t, DefaultConfig(), nil)
	r := c.expect(http.StatusOK, http.MethodPost, "/__admin/resources", string(genSeed(t, 2000, 9)))
	var seeded struct {
		Total int
		Ids   []string
	}
	r.decode(t, &seeded)
	if seeded.Total != 2000 || len(seeded.Ids) != 2000 {
		t.Errorf("seeded %d (%d Ids), want 2000", seeded.Total, len(seeded.Ids))
	}
	all := c.all()
	active := 0
	for _, res := range all {
		if res.Status == statusActive {
			active++
		}
	}
	// Plausible proportions: about 85% Active.
	if active < 1600 || active > 1800 {
		t.Errorf("%d of 2000 Active, want about 85%%", active)
	}
}

// TestGenerateEdgeCases checks that 500 items hold every case that breaks
// clients.
func TestGenerateEdgeCases(t *testing.T) {
	t.Parallel()
	items := genDecode(t, genSeed(t, 500, 4))
	str := func(item map[string]any, key string) (string, bool) {
		s, ok := item[key].(string)
		return s, ok
	}
	found := map[string]bool{}
	displayNames := map[string]int{}
	for _, item := range items {
		texts := ""
		nulls, empties := 0, 0
		for key, v := range item {
			switch v := v.(type) {
			case nil:
				nulls++
			case string:
				if v == "" {
					empties++
				}
				texts += v + "\n"
			}
			if key == "Address" && v != nil {
				found["an Address"] = true
			}
		}
		if nulls > 0 && empties > 0 {
			found["null next to \"\""] = true
		}
		first, _ := str(item, "FirstName")
		surname, _ := str(item, "Surname")
		company, hasCompany := str(item, "Company")
		display, hasDisplay := str(item, "DisplayName")
		if n := utf8.RuneCountInString(first); n == maxLength(fieldFirstName) {
			found["FirstName of 50 characters"] = true
		} else if n > maxLength(fieldFirstName) {
			t.Errorf("FirstName %q is %d characters", first, n)
		}
		if n := utf8.RuneCountInString(surname); n > maxLength(fieldSurname) {
			t.Errorf("Surname %q is %d characters", surname, n)
		}
		if n := utf8.RuneCountInString(display); n == maxLength(fieldDisplayName) {
			found["DisplayName of 100 characters"] = true
		} else if n > maxLength(fieldDisplayName) {
			t.Errorf("DisplayName %q is %d characters", display, n)
		}
		if n := utf8.RuneCountInString(company); n == maxLength(fieldCompany) {
			found["Company of 100 characters"] = true
		} else if n > maxLength(fieldCompany) {
			t.Errorf("Company %q is %d characters", company, n)
		}
		if item["FirstName"] == nil && item["Surname"] == nil && hasCompany && company != "" {
			found["a company without people"] = true
		}
		if hasDisplay {
			displayNames[strings.ToLower(display)]++
		}
		if strings.Contains(texts, "O'Brien") {
			found["O'Brien"] = true
		}
		for _, s := range []string{"é", "ß", "İ", "Ø"} {
			if strings.Contains(texts, s) {
				found[s] = true
			}
		}
		for _, r := range texts {
			if r > 0xFFFF {
				found["non-BMP text"] = true
			}
		}
		if item["Status"] == statusInactive {
			found["Inactive"] = true
		}
		if types, _ := item["Types"].([]any); len(types) == 0 {
			found["no Types"] = true
		}
	}
	for _, n := range displayNames {
		if n > 1 {
			found["duplicate DisplayNames"] = true
		}
	}
	for _, want := range []string{
		"FirstName of 50 characters", "DisplayName of 100 characters", "Company of 100 characters", "O'Brien",
		"é", "ß", "İ", "Ø", "non-BMP text", "null next to \"\"", "duplicate DisplayNames", "a company without people",
		"Inactive", "no Types", "an Address",
	} {
		if !found[want] {
			t.Errorf("500 generated items hold no %s", want)
		}
	}
}

func TestAdminGenerate(t *testing.T) {
	t.Parallel()
	c := startServer(t, DefaultConfig(), nil)
	r := c.expect(http.StatusOK, http.MethodPost, "/__admin/generate", `{"Count": 25, "seed": 7}`)
	var added struct {
		Total int
		Ids   []string
	}
	r.decode(t, &added)
	if added.Total != 25 || len(added.Ids) != 25 {
		t.Fatalf("generate answered %s", r.Body)
	}
	// The same resources as the command writes for the same seed, in order.
	want := genDecode(t, genSeed(t, 25, 7))
	all := c.all()
	if len(all) != 25 {
		t.Fatalf("%d resources after generate, want 25", len(all))
	}
	for i, res := range all {
		if res.Id != added.Ids[i] {
			t.Errorf("resource %d is %s, generate answered %s", i, res.Id, added.Ids[i])
		}
		if wantName, _ := want[i]["DisplayName"].(string); wantName != "" && res.DisplayName != wantName {
			t.Errorf("resource %d is %q, want %q", i, res.DisplayName, wantName)
		}
	}
	// Without a Seed the seed is 1: the command's default. A byte-order
	// mark before the body is skipped, as for every body (it was a 400).
	c2 := startServer(t, DefaultConfig(), nil)
	c2.expect(http.StatusOK, http.MethodPost, "/__admin/generate", "\ufeff"+`{"Count": 5}`)
	first := genDecode(t, genSeed(t, 5, 1))
	for i, res := range c2.all() {
		if name, _ := first[i]["DisplayName"].(string); name != "" && res.DisplayName != name {
			t.Errorf("default seed: resource %d is %q, want %q", i, res.DisplayName, name)
		}
	}

	refusals := []struct{ body, want string }{
		{`{"Count": 2, "Seeed": 1}`, `{"Message":"The generate request is invalid; nothing was added.","ModelState":{"Seeed":["Unknown property \"Seeed\"; did you mean Seed? A generate request has Count, Seed."]}}`},
		{`{"Count": 0}`, `{"Message":"The generate request is invalid; nothing was added.","ModelState":{"Count":["Count must be an integer from 1 to 100000, not 0."]}}`},
		{`{"Count": 100001}`, `{"Message":"The generate request is invalid; nothing was added.","ModelState":{"Count":["Count must be an integer from 1 to 100000, not 100001."]}}`},
		{`{"Count": "3"}`, `{"Message":"The generate request is invalid; nothing was added.","ModelState":{"Count":["Count must be an integer from 1 to 100000, not \"3\"."]}}`},
		{`{"Count": 1.5}`, `{"Message":"The generate request is invalid; nothing was added.","ModelState":{"Count":["Count must be an integer from 1 to 100000, not 1.5."]}}`},
		{`{"Count": 2, "Seed": -1}`, `{"Message":"The generate request is invalid; nothing was added.","ModelState":{"Seed":["Seed must be an integer from 0 to 18446744073709551615, not -1."]}}`},
		{`{"Seed": 1}`, `{"Message":"The generate request is invalid; nothing was added.","ModelState":{"Count":["Count is required: how many resources to add, from 1 to 100000."]}}`},
		{`[1]`, `{"Message":"The body must be a JSON object such as {\"Count\": 100, \"Seed\": 1}."}`},
		{`null`, `{"Message":"The body must be a JSON object such as {\"Count\": 100, \"Seed\": 1}."}`},
	}
	for _, tt := range refusals {
		r := c2.do(http.MethodPost, "/__admin/generate", tt.body)
		if r.Status != http.StatusBadRequest || string(r.Body) != tt.want {
			t.Errorf("generate %s: %d %s\nwant 400 %s", tt.body, r.Status, r.Body, tt.want)
		}
	}
	if n := len(c2.all()); n != 5 {
		t.Errorf("%d resources after refused generates, want 5", n)
	}
	r = c2.do(http.MethodPost, "/__admin/generate?x=1", `{"Count": 1}`)
	wantBody := `{"Message":"The query string is invalid.","ModelState":{"x":["Unknown parameter \"x\"; POST /__admin/generate takes none."]}}`
	if r.Status != http.StatusBadRequest || string(r.Body) != wantBody {
		t.Errorf("generate with a query parameter: %d %s\nwant 400 %s", r.Status, r.Body, wantBody)
	}
}

// TestGenerateItemsMatchSeedFormat checks that every item holds only
// resource properties, each a string or null where the API has strings.
func TestGenerateItemsMatchSeedFormat(t *testing.T) {
	t.Parallel()
	props := map[string]bool{"Types": true, "Address": true, "Status": true}
	for f := field(0); f < numStringFields; f++ {
		props[fieldNames[f]] = true
	}
	for i, item := range genDecode(t, genSeed(t, 200, 11)) {
		for key := range item {
			if !props[key] || key == "Id" {
				t.Errorf("item %d has %q, which is not a property a seed item may carry", i, key)
			}
		}
	}
}

// FuzzParseGenerate: any body is either a count and seed in range or a
// 400 that names what is wrong, never a panic.
func FuzzParseGenerate(f *testing.F) {
	for _, s := range []string{
		`{"Count": 3}`, `{"count": 100000, "SEED": 18446744073709551615}`, `{"Count": 0}`, `{"Count": 1e3}`,
		`{"Count": 2, "Count": 3}`, `{"Seed": null}`, `{}`, `[]`, `null`, ``, `{"Count": 1, "x": {"y": [1]}}`, "{\"Count\": 1\x00}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		count, _, err := parseGenerate(body)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
				t.Fatalf("parseGenerate(%q): %#v, want a 400", body, err)
			}
			return
		}
		if count < 1 || count > maxGenerateCount {
			t.Fatalf("parseGenerate(%q) = %d", body, count)
		}
	})
}

// genSeed returns what resourcedir generate -n n -rand-seed seed writes.
func genSeed(t testing.TB, n int, seed uint64) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := GenerateSeed(&out, n, seed); err != nil {
		t.Fatalf("generate %d: %v", n, err)
	}
	return out.Bytes()
}
