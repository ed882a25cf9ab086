package main

// Inputs as the real service reads them (behaviour.md 11): a UTF-8 byte
// order mark before a body, lone UTF-16 surrogate escapes (read as U+FFFD
// everywhere, Address included, so that every answer is JSON a strict
// reader accepts), and page parameters of plain digits. Every top-level
// name here starts with inp.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

const inpBOM = "\xEF\xBB\xBF"

// inpStrictJSON reports why b is not JSON a strict reader accepts (RFC
// 8259 with I-JSON's rule that strings hold Unicode scalar values: valid
// UTF-8, no lone surrogate escapes); "" when it is.
func inpStrictJSON(b []byte) string {
	if !utf8.Valid(b) {
		return "not UTF-8"
	}
	if !json.Valid(b) {
		return "not JSON"
	}
	high := false // the last thing read was a high surrogate escape
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			if high {
				return fmt.Sprintf("a lone high surrogate before byte %d", i)
			}
			continue
		}
		if b[i+1] != 'u' {
			if high {
				return fmt.Sprintf("a lone high surrogate before byte %d", i)
			}
			i++
			continue
		}
		var r rune
		fmt.Sscanf(string(b[i+2:i+6]), "%04x", &r)
		switch {
		case r >= 0xD800 && r < 0xDC00:
			if high {
				return fmt.Sprintf("a lone high surrogate before byte %d", i)
			}
			high = true
		case r >= 0xDC00 && r < 0xE000:
			if !high {
				return fmt.Sprintf("a lone low surrogate at byte %d", i)
			}
			high = false
		default:
			if high {
				return fmt.Sprintf("a lone high surrogate before byte %d", i)
			}
		}
		i += 5
	}
	if high {
		return "a lone high surrogate at the end"
	}
	return ""
}

func TestInputsStrictJSONChecker(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"a":"\ud800\udc00"}`: true,
		`{"a":"\\ud800"}`:      true,
		`{"a":"\ufffd\u00e9"}`: true,
		`{"a":"\ud800"}`:       false,
		`{"a":"\udc00\ud800"}`: false,
		`{"a":"\ud800x"}`:      false,
		`{"a":"\ud800\u0041"}`: false,
		`{"\udfff":1}`:         false,
		"{\"a\":\"\xff\"}":     false,
		`{"a":"\ud800\\"}`:     false,
	} {
		if got := inpStrictJSON([]byte(doc)) == ""; got != want {
			t.Errorf("inpStrictJSON(%s) accepts: %v, want %v", doc, got, want)
		}
	}
}

// inpDo is apiServer.do that also requires strict JSON.
func inpDo(t *testing.T, a *testClient, method, path, body string) response {
	t.Helper()
	resp := a.on(t).do(method, path, body)
	if why := inpStrictJSON(resp.Body); why != "" {
		t.Errorf("%s %s: the answer is not strict JSON (%s): %s", method, path, why, resp.Body)
	}
	return resp
}

func TestInputsByteOrderMark(t *testing.T) {
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	created := inpDo(t, a, http.MethodPost, "/api/v2/resource", inpBOM+`{"Company":"Acme"}`)
	if created.Status != http.StatusOK {
		t.Fatalf("create after a BOM: %d %s", created.Status, created.Body)
	}
	var out struct {
		Data []struct{ Id, Company string }
	}
	if err := json.Unmarshal(created.Body, &out); err != nil || len(out.Data) != 1 || out.Data[0].Company != "Acme" {
		t.Fatalf("create after a BOM: %v %s", err, created.Body)
	}
	id := out.Data[0].Id
	if r := inpDo(t, a, http.MethodPut, "/api/v2/resource/"+id, inpBOM+putBody(id)); r.Status != http.StatusOK {
		t.Errorf("update after a BOM: %d %s", r.Status, r.Body)
	}
	seeded := inpDo(t, a, http.MethodPost, "/__admin/resources", inpBOM+`[{"Company":"Seeded"}]`)
	if seeded.Status != http.StatusOK || !strings.Contains(string(seeded.Body), `"Total":1`) {
		t.Errorf("seed after a BOM: %d %s", seeded.Status, seeded.Body)
	}
	// A position in a message is one in the body as sent, the mark included.
	for path, body := range map[string]string{"/api/v2/resource": inpBOM + `{"Company":}`, "/__admin/resources": inpBOM + `[{"Company":}]`} {
		r := inpDo(t, a, http.MethodPost, path, body)
		at := fmt.Sprintf("(at byte %d)", strings.Index(body, "}"))
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), at) {
			t.Errorf("POST %s of %q: %d %s, want a 400 %s", path, body, r.Status, r.Body, at)
		}
	}
	// One mark is skipped, as ASP.NET skips it; anything else before the
	// JSON is still not JSON.
	for _, body := range []string{inpBOM + inpBOM + `{"Company":"Acme"}`, "\xEF\xBB" + `{"Company":"Acme"}`, " " + inpBOM + `{"Company":"Acme"}`} {
		if r := inpDo(t, a, http.MethodPost, "/api/v2/resource", body); r.Status != http.StatusBadRequest {
			t.Errorf("create of %q: %d %s, want 400", body, r.Status, r.Body)
		}
	}
}

func TestInputsLoneSurrogates(t *testing.T) {
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	body := `{"FirstName":"a\ud800b","Surname":"\udc00","Company":"pair \ud83d\ude00 kept","Position":"\ud800\ud800",` +
		`"Address":{"Street":"c\ud800d","k\udfff":["\ud800\udc00","\ud800\u0041"],"Escaped":"\\ud800"}}`
	want := map[string]string{"FirstName": "a\uFFFDb", "Surname": "\uFFFD", "Company": "pair 😀 kept", "Position": "\uFFFD\uFFFD"}
	wantAddress := map[string]any{"Street": "c\uFFFDd", "k\uFFFD": []any{"\U00010000", "\uFFFDA"}, "Escaped": `\ud800`}
	check := func(what string, raw []byte) {
		t.Helper()
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", what, k, got[k], v)
			}
		}
		if fmt.Sprint(got["Address"]) != fmt.Sprint(wantAddress) {
			t.Errorf("%s: Address = %v, want %v", what, got["Address"], wantAddress)
		}
	}

	created := inpDo(t, a, http.MethodPost, "/api/v2/resource", body)
	var out struct{ Data []json.RawMessage }
	if err := json.Unmarshal(created.Body, &out); created.Status != http.StatusOK || err != nil || len(out.Data) != 1 {
		t.Fatalf("create: %d %v %s", created.Status, err, created.Body)
	}
	check("create's answer", out.Data[0])
	seeded := inpDo(t, a, http.MethodPost, "/__admin/resources", "["+body+"]")
	if seeded.Status != http.StatusOK {
		t.Fatalf("seed: %d %s", seeded.Status, seeded.Body)
	}
	list := inpDo(t, a, http.MethodGet, "/api/v2/resource", "")
	var page struct{ ResourceList []json.RawMessage }
	if err := json.Unmarshal(list.Body, &page); err != nil || len(page.ResourceList) != 2 {
		t.Fatalf("list: %v %s", err, list.Body)
	}
	check("the created resource listed", page.ResourceList[0])
	check("the seeded resource listed", page.ResourceList[1])
	all := inpDo(t, a, http.MethodGet, "/__admin/resources", "")
	if all.Status != http.StatusOK {
		t.Errorf("GET /__admin/resources: %d", all.Status)
	}
	journal := inpDo(t, a, http.MethodGet, "/__admin/requests", "")
	if journal.Status != http.StatusOK {
		t.Errorf("GET /__admin/requests: %d", journal.Status)
	}
	// A filter on the repaired value finds it.
	found := inpDo(t, a, http.MethodGet, "/api/v2/resource?requestParams.filters="+url.QueryEscape("FirstName~eq~'a\uFFFDb'"), "")
	if !strings.Contains(string(found.Body), `"TotalResults":2`) {
		t.Errorf("filter on FirstName~eq~ 'a\\uFFFDb': %s", found.Body)
	}
}

func TestInputsPageDigits(t *testing.T) {
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	for _, q := range []string{"page=%2B3", "page=+3", "page=%202%20", "page=2%20", "page=%202", "page=0x1", "page=1e1", "page=%D9%A3", "page=-1", "pageSize=%2B5", "pageSize=%205", "pageSize=5.0"} {
		r := inpDo(t, a, http.MethodGet, "/api/v2/resource?requestParams."+q, "")
		if r.Status != http.StatusBadRequest {
			t.Errorf("requestParams.%s: %d %s, want 400", q, r.Status, r.Body)
		}
	}
	for _, q := range []string{"page=3", "page=03", "pageSize=5"} {
		if r := inpDo(t, a, http.MethodGet, "/api/v2/resource?requestParams."+q, ""); r.Status != http.StatusOK {
			t.Errorf("requestParams.%s: %d %s, want 200", q, r.Status, r.Body)
		}
	}
}
