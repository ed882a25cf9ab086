package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/resourcedir/resourcedir"
)

// impNormal is a resource as GET /__admin/resources or a seed file holds
// it, without what a seed ignores (StatusId, _links, _embedded), Types as
// Id and Type.
func impNormal(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var items []map[string]any
	if err := json.Unmarshal(b, &items); err != nil {
		t.Fatalf("not a JSON array of objects: %v: %.300s", err, b)
	}
	for _, it := range items {
		delete(it, "StatusId")
		delete(it, "_links")
		delete(it, "_embedded")
		types, _ := it["Types"].([]any)
		for i, x := range types {
			m := x.(map[string]any)
			types[i] = map[string]any{"Id": m["Id"], "Type": m["Type"]}
		}
	}
	return items
}

// impAll reads GET /__admin/resources as items.
func impAll(t *testing.T, c *testClient, hdr ...string) []map[string]any {
	t.Helper()
	var all struct{ Data json.RawMessage }
	c.expect(http.StatusOK, http.MethodGet, "/__admin/resources", "", hdr...).decode(t, &all)
	return impNormal(t, all.Data)
}

// TestImport reads 2,501 resources (five pages of 500 and one of 1) from a
// resourcedir, and checks that the seed file holds each of them exactly, in
// order, and that nothing but GETs was sent.
func TestImport(t *testing.T) {
	t.Parallel()
	src := startServer(t, resourcedir.DefaultConfig(), nil)
	src.expect(http.StatusOK, http.MethodPost, "/__admin/resources", string(genRun(t, "-n", "2501", "-rand-seed", "5")))
	src.expect(http.StatusOK, http.MethodDelete, "/__admin/requests", "")
	want := impAll(t, src)

	out, progress, err := impRun(t, nil, "-from", src.base+"/", "-rate", "0")
	if err != nil {
		t.Fatalf("import: %v; stderr %s", err, progress)
	}
	got := impNormal(t, out)
	if len(got) != len(want) {
		t.Fatalf("imported %d resources, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("resource %d:\n got %v\nwant %v", i, got[i], want[i])
		}
	}
	if !strings.HasSuffix(progress, "import: page 6 of 6, 2501 of 2501 resources\n") {
		t.Errorf("progress %q", progress)
	}

	var journal struct {
		Requests []wireEntry
	}
	src.getJSON("/__admin/requests", &journal)
	if len(journal.Requests) != 6 {
		t.Errorf("import sent %d requests, want 6 pages", len(journal.Requests))
	}
	for i, e := range journal.Requests {
		wantQuery := "requestParams.page=" + string(rune('1'+i)) + "&requestParams.pageSize=500"
		if e.Method != http.MethodGet || e.Path != "/api/v2/resource" || e.Query != wantQuery {
			t.Errorf("request %d: %s %s?%s, want GET /api/v2/resource?%s", i, e.Method, e.Path, e.Query, wantQuery)
		}
	}

	// The file seeds another server into the same directory, Ids and order
	// included.
	dst := startServer(t, resourcedir.DefaultConfig(), nil)
	dst.expect(http.StatusOK, http.MethodPost, "/__admin/resources", string(out))
	if again := impAll(t, dst); !reflect.DeepEqual(again, want) {
		t.Errorf("the imported file does not seed the same directory")
	}

	// -o writes the same, to a file only its owner reads.
	path := filepath.Join(t.TempDir(), "tenant.json")
	if _, _, err := impRun(t, nil, "-from", src.base, "-rate", "0", "-o", path); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(file, out) {
		t.Errorf("-o wrote %d bytes (%v), stdout had %d", len(file), err, len(out))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("-o file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("-o left %d files behind, want only tenant.json", len(entries))
	}
}

// TestImportScrub checks that -scrub keeps every value's shape, changes its
// text, and gives a file a server accepts.
func TestImportScrub(t *testing.T) {
	t.Parallel()
	src := startServer(t, resourcedir.DefaultConfig(), nil)
	src.expect(http.StatusOK, http.MethodPost, "/__admin/resources", string(genRun(t, "-n", "600", "-rand-seed", "6")))
	src.seed(`[{"FirstName":"Ada","Surname":"Lovelace","DisplayName":"ADA LOVELACE","Email":"ada.lovelace@example.org","Phone":"+44 (0)20 7946-0000","Company":"Analytical Engines","Address":{"Line1":"12 St. James's Square","Number":12,"Flat":null}}]`)
	want := impAll(t, src)
	out, stderr, err := impRun(t, nil, "-from", src.base, "-rate", "0", "-scrub")
	if err != nil {
		t.Fatalf("import -scrub: %v; %s", err, stderr)
	}
	got := impNormal(t, out)
	if len(got) != len(want) {
		t.Fatalf("%d resources, want %d", len(got), len(want))
	}
	changed := 0
	for i := range want {
		for key, w := range want[i] {
			g, ok := got[i][key]
			if !ok {
				t.Fatalf("resource %d lost %s", i, key)
			}
			if !slices.ContainsFunc(resourcedir.Properties(), func(p resourcedir.Property) bool { return p.Name == key && p.Personal }) {
				if !reflect.DeepEqual(g, w) {
					t.Errorf("resource %d: %s %v became %v, but it is not personal", i, key, w, g)
				}
				continue
			}
			if !reflect.DeepEqual(g, w) {
				changed++
			}
			if msg := impSameShape(w, g); msg != "" {
				t.Errorf("resource %d: %s %v became %v: %s", i, key, w, g, msg)
			}
		}
	}
	if changed < len(want) {
		t.Errorf("only %d personal values changed in %d resources", changed, len(want))
	}
	// The same word gives the same word within a run, in any property and
	// any case: Ada's DisplayName is still her names joined.
	ada := got[len(got)-1]
	if dn, joined := ada["DisplayName"].(string), strings.ToUpper(ada["FirstName"].(string)+" "+ada["Surname"].(string)); dn != joined {
		t.Errorf("scrubbed DisplayName %q, names %q", dn, joined)
	}
	if email := ada["Email"].(string); !strings.HasPrefix(email, strings.ToLower(ada["FirstName"].(string))+".") {
		t.Errorf("scrubbed Email %q does not start with the scrubbed FirstName %q", email, ada["FirstName"])
	}
	dst := startServer(t, resourcedir.DefaultConfig(), nil)
	dst.expect(http.StatusOK, http.MethodPost, "/__admin/resources", string(out))

	// A new run has a new key: the same directory scrubs differently.
	out2, _, err := impRun(t, nil, "-from", src.base, "-rate", "0", "-scrub")
	if err != nil || bytes.Equal(out, out2) {
		t.Errorf("two runs of -scrub gave the same file (%v)", err)
	}
}

// impSameShape says how g differs in shape from w ("" when it does not):
// null stays null, "" stays "", same length in characters, letters stay
// letters of the same case, digits digits, anything else as it was.
func impSameShape(w, g any) string {
	switch w := w.(type) {
	case nil:
		if g != nil {
			return "null is no longer null"
		}
	case string:
		gs, ok := g.(string)
		if !ok {
			return "not a string any more"
		}
		wr, gr := []rune(w), []rune(gs)
		if len(wr) != len(gr) {
			return "another length"
		}
		for i, r := range wr {
			switch {
			case unicode.IsDigit(r):
				if !unicode.IsDigit(gr[i]) {
					return "a digit is no longer a digit"
				}
			case unicode.IsUpper(r):
				if !unicode.IsUpper(gr[i]) {
					return "an upper-case letter is no longer one"
				}
			case unicode.IsLetter(r):
				if !unicode.IsLetter(gr[i]) || unicode.IsUpper(gr[i]) {
					return "a letter is no longer a lower-case letter"
				}
			case gr[i] != r:
				return "punctuation changed"
			}
		}
	case float64:
		if _, ok := g.(float64); !ok {
			return "a number is no longer a number"
		}
	case map[string]any:
		gm, ok := g.(map[string]any)
		if !ok || len(gm) != len(w) {
			return "another object"
		}
		for k, v := range w {
			if msg := impSameShape(v, gm[k]); msg != "" {
				return k + ": " + msg
			}
		}
	default:
		if !reflect.DeepEqual(w, g) {
			return "changed"
		}
	}
	return ""
}

// TestImportAuth reads a directory that needs credentials, given through
// the environment, and checks that the token appears nowhere.
func TestImportAuth(t *testing.T) {
	t.Parallel()
	const token = "s3cret-Token"
	cfg := resourcedir.DefaultConfig()
	cfg.Auth = "svc:" + token
	src := startServer(t, cfg, nil)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("svc:"+token))
	src.expect(http.StatusOK, http.MethodPost, "/__admin/resources", `[{"Company":"Acme"},{"FirstName":"Ada"}]`, "Authorization", basic)

	out, stderr, err := impRun(t, []string{fromAuthEnv + "=svc:" + token}, "-from", src.base, "-rate", "0")
	if err != nil {
		t.Fatalf("import: %v; %s", err, stderr)
	}
	if n := len(impNormal(t, out)); n != 2 {
		t.Errorf("imported %d, want 2", n)
	}
	for _, s := range []string{string(out), stderr} {
		if strings.Contains(s, token) {
			t.Errorf("the token was written: %s", s)
		}
	}
	// -auth wins over the environment.
	_, stderr, err = impRun(t, []string{fromAuthEnv + "=svc:" + token}, "-from", src.base, "-rate", "0", "-auth", "svc:wrong")
	if err == nil || !strings.Contains(err.Error(), "status 401 (check -auth or RESOURCEDIR_FROM_AUTH)") ||
		strings.Contains(err.Error()+stderr, token) || strings.Contains(err.Error()+stderr, "wrong") {
		t.Errorf("wrong credentials: %v; stderr %q", err, stderr)
	}
}

func TestImportUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{nil, "import: -from is required: the directory's base URL"},
		{[]string{"-from", "tenant.example.com"}, `import: -from must be the directory's base URL, such as https://tenant.example.com, not "tenant.example.com"`},
		{[]string{"-from", "ftp://tenant.example.com"}, `import: -from must be the directory's base URL, such as https://tenant.example.com, not "ftp://tenant.example.com"`},
		{[]string{"-from", "https://svc:tok@tenant.example.com"}, "import: -from must not carry credentials: give them with -auth or RESOURCEDIR_FROM_AUTH"},
		{[]string{"-from", "https://tenant.example.com?x=1"}, "import: -from must be a base URL without a query or fragment"},
		{[]string{"-from", "https://tenant.example.com", "-auth", "svc"}, "import: -auth (or RESOURCEDIR_FROM_AUTH) must be user:token"},
		{[]string{"-from", "https://tenant.example.com", "-rate", "-1"}, "import: -rate must be 0 (unpaced) or more requests per second, not -1"},
		{[]string{"-from", "https://tenant.example.com", "extra"}, `import: unexpected argument "extra"`},
	}
	for _, tt := range tests {
		out, _, err := impRun(t, nil, tt.args...)
		if err == nil || err.Error() != tt.want || len(out) != 0 {
			t.Errorf("import %q: %v; want %s", tt.args, err, tt.want)
		}
	}
}

// TestScrubText pins the shape rules on awkward text.
func TestScrubText(t *testing.T) {
	t.Parallel()
	s := newScrubber()
	for _, in := range []string{"", " ", "O'Brien", "İlkay Straße", "Zoë 𝔊öthe 🚀", "ada@example.org", "+44 (0)20 7946-0000", "東京"} {
		out := s.text(in)
		if msg := impSameShape(in, out); msg != "" {
			t.Errorf("%q became %q: %s", in, out, msg)
		}
		if utf8.RuneCountInString(out) != utf8.RuneCountInString(in) || s.text(in) != out {
			t.Errorf("%q became %q, then %q", in, out, s.text(in))
		}
	}
	if a, b := s.text("Ada"), s.text("ADA"); strings.ToUpper(a) != b {
		t.Errorf("Ada became %q and ADA %q", a, b)
	}
}

func TestFromAuthIsNoUnknownVariable(t *testing.T) {
	t.Parallel()
	if w := unknownEnvVars([]string{fromAuthEnv + "=svc:tok"}); len(w) != 0 {
		t.Errorf("the server warns about %s: %q", fromAuthEnv, w)
	}
}

// FuzzScrub: any text keeps its shape, and the same text gives the same
// result within a run.
func FuzzScrub(f *testing.F) {
	for _, s := range []string{"", "Ada Lovelace", "O'Brien", "İlkay Straße", "Zoë 𝔊öthe 🚀", "ada@example.org", "+44 (0)20 7946-0000", "東京", "ǅ", "\xff"} {
		f.Add(s)
	}
	s := newScrubber()
	f.Fuzz(func(t *testing.T, in string) {
		if !utf8.ValidString(in) {
			return // JSON strings are valid UTF-8 once decoded
		}
		out := s.text(in)
		if msg := impSameShape(in, out); msg != "" {
			t.Fatalf("%q became %q: %s", in, out, msg)
		}
		if again := s.text(in); again != out {
			t.Fatalf("%q became %q, then %q", in, out, again)
		}
	})
}

// FuzzSeedItem: any list item either becomes a seed item that is one JSON
// object, or an error; never a panic.
func FuzzSeedItem(f *testing.F) {
	for _, s := range []string{
		`{"Id":"0f8fad5b-d9cb-469f-a165-70867728950e","DisplayName":"Ada","Types":[{"Id":2,"Type":"Team","_links":[]}],"StatusId":1,"_links":[]}`,
		`{"types":null,"address":{"Line1":"1 Way","No":12.5},"email":null}`,
		`{"Types":"x"}`, `{"Address":[1,"a",null,true]}`, `{}`,
	} {
		f.Add(s, true)
	}
	s := newScrubber()
	f.Fuzz(func(t *testing.T, text string, scrub bool) {
		var item map[string]json.RawMessage
		if json.Unmarshal([]byte(text), &item) != nil {
			return
		}
		sc := s
		if !scrub {
			sc = nil
		}
		out, err := importSeedItem(item, sc)
		if err != nil {
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(out, &obj); err != nil {
			t.Fatalf("importSeedItem(%s) = %s, not a JSON object: %v", text, out, err)
		}
	})
}

// An empty tenant once read as "page 1 of 0": import says it found
// nothing and writes an empty seed file, which seeds an empty directory.
func TestImportEmptyTenant(t *testing.T) {
	t.Parallel()
	tenant := startServer(t, resourcedir.DefaultConfig(), nil)
	out, stderr, err := impRun(t, nil, "-from", tenant.base, "-rate", "0")
	if err != nil || string(out) != "[\n]\n" || stderr != "import: the directory holds no resources\n" {
		t.Errorf("import: %v, stdout %q, stderr %q", err, out, stderr)
	}
	if srv, err := resourcedir.New(resourcedir.Config{Seed: out}); err != nil {
		t.Errorf("the file does not seed an empty directory: %v", err)
	} else {
		srv.Close()
	}
}

// impRun runs `resourcedir import args...` and returns stdout and stderr.
func impRun(t *testing.T, environ []string, args ...string) ([]byte, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"import"}, args...), environ, &out, &errOut)
	return out.Bytes(), errOut.String(), err
}

// TestImportContractorOrganization: import keeps ContractorOrganization as
// the tenant wrote it, -scrub included (an organisation, not personal data).
func TestImportContractorOrganization(t *testing.T) {
	t.Parallel()
	src := startServer(t, resourcedir.DefaultConfig(), nil)
	src.seed(`[{"Id":"0b7c5e2a-4f1d-4c3b-9a8e-1d2c3b4a5f60","FirstName":"Ada","Company":"C","ContractorOrganization":"Hays & Co"},` +
		`{"Id":"0b7c5e2a-4f1d-4c3b-9a8e-1d2c3b4a5f61","Company":"D","ContractorOrganization":""},{"Id":"0b7c5e2a-4f1d-4c3b-9a8e-1d2c3b4a5f62","Company":"E"}]`)
	for _, args := range [][]string{{}, {"-scrub"}} {
		out, stderr, err := impRun(t, nil, append([]string{"-from", src.base, "-rate", "0"}, args...)...)
		if err != nil {
			t.Fatalf("import %v: %v; %s", args, err, stderr)
		}
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(out, &items); err != nil {
			t.Fatalf("import %v: %v: %s", args, err, out)
		}
		var got []string
		for _, it := range items {
			got = append(got, string(it["ContractorOrganization"]))
		}
		if want := []string{`"Hays & Co"`, `""`, `null`}; !slices.Equal(got, want) {
			t.Errorf("import %v: ContractorOrganization %v, want %v", args, got, want)
		}
	}
}
