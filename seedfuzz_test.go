package main

// The seed decoder under arbitrary input (behaviour.md 6 and 7): it never
// panics, seeds all items or none, lists at most maxProblems problems (the
// first ones, in the order of the body) plus a count of the rest, and every
// position it names is within the body. Every top-level name here starts
// with seedFuzz.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

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

func seedFuzzCheck(t *testing.T, body []byte, resources []*Resource, err error) {
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
	switch e := err.(type) {
	case *jsonError:
		for _, m := range seedFuzzAtByte.FindAllStringSubmatch(e.msg, -1) {
			if at, _ := strconv.Atoi(m[1]); at > len(body) {
				t.Fatalf("%q names byte %d of a %d-byte body", e.msg, at, len(body))
			}
		}
		if isArray && json.Valid(trimmed) && !strings.Contains(e.msg, "exceeded max depth") {
			t.Fatalf("a JSON syntax error (%s) for a body encoding/json reads: %.300q", e.msg, body)
		}
	case *validationError:
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
	ve, ok := err.(*validationError)
	if !ok {
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
