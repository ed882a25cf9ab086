package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/resourcedir/resourcedir"
)

// cmpRun runs `resourcedir compare args...`.
func cmpRun(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"compare"}, args...), nil, &out, &errOut)
	return out.String(), errOut.String(), err
}

// cmpJSON runs compare with -report json and decodes the report.
func cmpJSON(t *testing.T, args ...string) (cmpReport, error) {
	t.Helper()
	out, stderr, err := cmpRun(t, append(args, "-report", "json", "-rate", "0")...)
	var rep cmpReport
	if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil {
		t.Fatalf("the report is not JSON: %v: %s; stderr %s; err %v", jerr, out, stderr, err)
	}
	return rep, err
}

func cmpDiffering(rep cmpReport) []string {
	var out []string
	for _, r := range rep.Rules {
		if r.Differ > 0 {
			out = append(out, r.Rule)
		}
	}
	return out
}

// cmpTenant is a resourcedir holding 150 generated resources, standing in
// for a tenant.
func cmpTenant(t *testing.T, cfg resourcedir.Config) *testClient {
	t.Helper()
	idSeed := uint64(8) // the same Ids at every run, so the same queries
	c := startServer(t, cfg, &idSeed)
	c.expect(http.StatusOK, http.MethodPost, "/__admin/resources", string(genRun(t, "-n", "150", "-rand-seed", "8")))
	return c
}

func TestCompareSameData(t *testing.T) {
	t.Parallel()
	tenant := cmpTenant(t, resourcedir.DefaultConfig())
	rep, err := cmpJSON(t, "-from", tenant.base)
	if err != nil {
		t.Fatalf("compare: %v; differing: %v", err, cmpDiffering(rep))
	}
	if rep.Differs || rep.Resources != 150 || rep.Queries != 300 || rep.From != tenant.base || rep.Against != "resourcedir in this process" {
		t.Errorf("report %+v", rep)
	}
	rules := map[string]int{}
	for _, r := range rep.Rules {
		rules[r.Rule] = r.Queries
	}
	for _, r := range cmpRules {
		if rules[r.name] == 0 {
			t.Errorf("rule %q was not checked", r.name)
		}
	}
	for _, op := range []string{"eq", "neq", "lt", "lte", "gt", "gte", "startswith", "endswith", "contains", "doesnotcontain", "notsubstringof"} {
		if rules["operator "+op+" is accepted"] == 0 {
			t.Errorf("operator %s was not sent", op)
		}
	}
	// A default resourcedir refuses every probe: assetic fits it.
	if rep.Filters != "assetic" || len(rep.Probes) != 5 || slices.ContainsFunc(rep.Probes, func(p cmpProbe) bool { return p.Accepted }) {
		t.Errorf("probes %+v, Filters %q", rep.Probes, rep.Filters)
	}
	// Nothing but GETs of the list and the version reached the tenant.
	var journal struct{ Requests []wireEntry }
	tenant.getJSON("/__admin/requests", &journal)
	for _, e := range journal.Requests {
		if e.Method != http.MethodGet || (e.Path != "/api/v2/resource" && e.Path != "/api/v2/version") {
			t.Errorf("compare sent %s %s to the tenant", e.Method, e.Path)
		}
	}

	// The text report says the same, and the same seed gives the same one.
	text, _, err := cmpRun(t, "-from", tenant.base, "-rate", "0", "-queries", "60")
	if err != nil || !strings.Contains(text, " rules agree, 0 differ.") || !strings.Contains(text, "-filters assetic (the default) fits it.") {
		t.Errorf("text report (%v):\n%s", err, text)
	}
	again, _, _ := cmpRun(t, "-from", tenant.base, "-rate", "0", "-queries", "60")
	if again != text {
		t.Errorf("the same seed gave another report")
	}
}

// TestCompareKendoTenant: a tenant that takes the whole grammar is told
// to use -filters kendo, and is a difference (exit 1) for a resourcedir
// run with assetic, as it once passed with exit 0.
func TestCompareKendoTenant(t *testing.T) {
	t.Parallel()
	tenant := cmpTenant(t, resourcedir.Config{Filters: "kendo"})
	rep, err := cmpJSON(t, "-from", tenant.base, "-queries", "40")
	want := "compare: the tenant's filter dialect is kendo, not the -filters assetic you run resourcedir with (see the report)"
	if exitCode(err) != 1 || err.Error() != want {
		t.Errorf("compare: %v (exit %d), want exit 1 and %s", err, exitCode(err), want)
	}
	if rep.Filters != "kendo" || slices.ContainsFunc(rep.Probes, func(p cmpProbe) bool { return !p.Accepted || !p.SameAnswer }) {
		t.Errorf("probes %+v, Filters %q", rep.Probes, rep.Filters)
	}
	for _, spelling := range []string{"kendo", "Kendo"} { // as -filters takes it, in any case
		if _, err := cmpJSON(t, "-from", tenant.base, "-queries", "40", "-filters", spelling); err != nil {
			t.Errorf("compare -filters %s: %v", spelling, err)
		}
	}
	if _, _, err := cmpRun(t, "-from", tenant.base, "-filters", "sql"); exitCode(err) != 2 || !strings.Contains(err.Error(), "compare: -filters: ") {
		t.Errorf("compare -filters sql: %v", err)
	}
}

// TestCompareWithB compares two running servers holding the same
// directory.
func TestCompareWithB(t *testing.T) {
	t.Parallel()
	tenant := cmpTenant(t, resourcedir.DefaultConfig())
	file, stderr, err := impRun(t, nil, "-from", tenant.base, "-rate", "0")
	if err != nil {
		t.Fatalf("import: %v; %s", err, stderr)
	}
	b := startServer(t, resourcedir.DefaultConfig(), nil)
	b.expect(http.StatusOK, http.MethodPost, "/__admin/resources", string(file))
	rep, err := cmpJSON(t, "-from", tenant.base, "-b", b.base, "-queries", "100")
	if err != nil || rep.Against != b.base {
		t.Errorf("compare -b: %v; against %q; differing %v", err, rep.Against, cmpDiffering(rep))
	}
	// A -b that runs with -auth is reached with -b-auth; without it,
	// every query is refused and nothing agrees.
	cfg := resourcedir.DefaultConfig()
	cfg.Auth = "ci:tok"
	locked := startServer(t, cfg, nil)
	locked.expect(http.StatusOK, http.MethodPost, "/__admin/resources", string(file), "Authorization", "Basic Y2k6dG9r") // ci:tok
	if rep, err := cmpJSON(t, "-from", tenant.base, "-b", locked.base, "-b-auth", "ci:tok", "-queries", "100"); err != nil {
		t.Errorf("compare -b -b-auth: %v; differing %v", err, cmpDiffering(rep))
	}
	if _, err := cmpJSON(t, "-from", tenant.base, "-b", locked.base, "-queries", "20"); exitCode(err) == 0 {
		t.Errorf("compare -b without -b-auth against an -auth server: %v, want a failure", err)
	}
	// Another directory differs, and compare says so.
	other := startServer(t, resourcedir.DefaultConfig(), nil)
	other.expect(http.StatusOK, http.MethodPost, "/__admin/resources", string(genRun(t, "-n", "150", "-rand-seed", "8")))
	_, err = cmpJSON(t, "-from", tenant.base, "-b", other.base, "-queries", "50")
	if exitCode(err) != 1 {
		t.Errorf("compare against other Ids: %v (exit %d), want exit 1", err, exitCode(err))
	}
}

// cmpAlteration changes one rule of a resourcedir's list answers.
type cmpAlteration struct {
	caseSensitiveEq bool
	nullLastAsc     bool
	floorPages      bool
	refuseOp        string
}

// cmpEqFilter and cmpAscSort read one condition with eq and one ascending
// sort, as compare writes them.
var (
	cmpEqFilter = regexp.MustCompile(`^(\w+)~eq~'((?:[^']|'')*)'$`)
	cmpAscSort  = regexp.MustCompile(`^(\w+)-asc$`)
)

// alteredTenant serves a resourcedir holding 150 resources whose list
// answers break one rule: it asks the real handler for every match (one
// page of 500), changes them, and pages them itself.
func alteredTenant(t *testing.T, alt cmpAlteration) string {
	t.Helper()
	idSeed := uint64(8) // the same Ids at every run, so the same queries
	inner, err := resourcedir.New(resourcedir.Config{IDSeed: &idSeed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inner.Close() })
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/__admin/resources", bytes.NewReader(genRun(t, "-n", "150", "-rand-seed", "8")))
	req.Header.Set("Content-Type", "application/json")
	inner.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("seed: %d %s", rec.Code, rec.Body)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/api/v2/resource" {
			inner.ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		filter := q.Get("requestParams.filters")
		if alt.refuseOp != "" && strings.Contains(strings.ToLower(filter), "~"+alt.refuseOp+"~") {
			w.Header().Set("Content-Type", jsonContentType)
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"Message":"The operator is not supported."}`))
			return
		}
		page, size := 1, 20 // the default pageSize
		for name, dst := range map[string]*int{"requestParams.page": &page, "requestParams.pageSize": &size} {
			if v, ok := q[name]; ok {
				n, err := strconv.Atoi(v[0])
				if err != nil || n < 1 || n > 1000000 {
					inner.ServeHTTP(w, r) // the real refusal
					return
				}
				*dst = n
			}
		}
		size = min(size, 500)
		all := url.Values{}
		for k, v := range q {
			all[k] = v
		}
		all.Set("requestParams.page", "1")
		all.Set("requestParams.pageSize", "500")
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v2/resource?"+all.Encode(), nil))
		if rec.Code != http.StatusOK {
			inner.ServeHTTP(w, r)
			return
		}
		var ans struct{ ResourceList []map[string]any }
		if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
			t.Errorf("inner answer: %v", err)
		}
		items := ans.ResourceList
		// The queries compare sends are canonical: Field~eq~'value', Field-asc.
		if m := cmpEqFilter.FindStringSubmatch(filter); m != nil && alt.caseSensitiveEq {
			value := strings.ReplaceAll(m[2], "''", "'")
			items = slices.DeleteFunc(items, func(it map[string]any) bool { return it[m[1]] != value })
		}
		if m := cmpAscSort.FindStringSubmatch(q.Get("requestParams.sorts")); m != nil && alt.nullLastAsc {
			f := m[1]
			slices.SortStableFunc(items, func(a, b map[string]any) int {
				an, bn := a[f] == nil, b[f] == nil
				switch {
				case an && !bn:
					return 1
				case !an && bn:
					return -1
				}
				return 0
			})
		}
		total := len(items)
		pages := (total + size - 1) / size
		if alt.floorPages {
			pages = total / size
		}
		lo := min((page-1)*size, total)
		hi := min(lo+size, total)
		w.Header().Set("Content-Type", jsonContentType)
		json.NewEncoder(w).Encode(map[string]any{
			"TotalResults": total, "TotalPages": pages, "Page": page,
			"ResourceList": items[lo:hi], "_links": []any{}, "_embedded": nil,
		})
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestCompareNamesTheRule breaks one rule at a time in the tenant and
// checks that compare names that rule alone and exits 1.
func TestCompareNamesTheRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		alt  cmpAlteration
		rule string
	}{
		{"nothing changed", cmpAlteration{}, ""},
		{"case-sensitive eq", cmpAlteration{caseSensitiveEq: true}, "eq is case-insensitive"},
		{"null sorted last ascending", cmpAlteration{nullLastAsc: true}, "sort puts null first ascending"},
		{"TotalPages rounded down", cmpAlteration{floorPages: true}, ruleTotalPages},
		{"endswith refused", cmpAlteration{refuseOp: "endswith"}, "operator endswith is accepted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep, err := cmpJSON(t, "-from", alteredTenant(t, tt.alt))
			got := cmpDiffering(rep)
			if tt.rule == "" {
				if err != nil || len(got) != 0 {
					t.Fatalf("an unaltered tenant: %v; differing %v", err, got)
				}
				return
			}
			if exitCode(err) != 1 || !slices.Equal(got, []string{tt.rule}) {
				t.Fatalf("compare: %v (exit %d); differing %q, want only %q", err, exitCode(err), got, tt.rule)
			}
			for _, r := range rep.Rules {
				if r.Rule == tt.rule && (len(r.Examples) == 0 || r.Examples[0].Query == "") {
					t.Errorf("rule %q has no example: %+v", r.Rule, r)
				}
			}
		})
	}
	// The text report names the rule and shows both answers.
	text, _, err := cmpRun(t, "-from", alteredTenant(t, cmpAlteration{refuseOp: "endswith"}), "-rate", "0", "-queries", "60")
	if exitCode(err) != 1 || !strings.Contains(text, "DIFFERS  operator endswith is accepted (") ||
		!strings.Contains(text, "      tenant:      400 The operator is not supported.\n      resourcedir: 200 TotalResults ") {
		t.Errorf("text report (%v):\n%s", err, text)
	}
}

func TestCompareUsage(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	tests := []struct {
		args []string
		want string
	}{
		{nil, "compare: -from is required: the directory's base URL"},
		{[]string{"-from", "https://t.example.com", "-queries", "0"}, "compare: -queries must be at least 1, not 0"},
		{[]string{"-from", "https://t.example.com", "-report", "xml"}, `compare: -report must be text or json, not "xml"`},
		{[]string{"-from", "https://t.example.com", "x"}, `compare: unexpected argument "x"`},
		{[]string{"-from", "https://t.example.com", "-b", "nowhere"}, ""},
		{[]string{"-from", "https://t.example.com", "-b-auth", "ci:tok"}, "compare: -b-auth is for the server -b names; give -b too"},
		{[]string{"-from", "https://t.example.com", "-b", "http://127.0.0.1:1", "-b-auth", "citok"}, "compare: -b-auth must be user:token"},
		{[]string{"-queries-n", "3"}, "compare: unknown flag -queries-n; did you mean -queries? (resourcedir compare -help lists every flag)"},
		{[]string{"-from", "https://t.example.com", "-seed", "7"}, "compare: -seed is the server's seed file; this subcommand's integer seed is -rand-seed"},
		{[]string{"-from", closed.URL, "-rate", "0"}, ""},
	}
	for _, tt := range tests {
		out, _, err := cmpRun(t, tt.args...)
		if exitCode(err) != 2 || tt.want != "" && err.Error() != tt.want || out != "" {
			t.Errorf("compare %q: %v (exit %d), stdout %q; want exit 2 and %q", tt.args, err, exitCode(err), out, tt.want)
		}
	}
	if _, _, err := cmpRun(t, "-h"); !errors.Is(err, flag.ErrHelp) || exitCode(err) != 0 {
		t.Errorf("compare -h: %v", err)
	}
}

// FuzzReadAnswer: any answer is read without a panic, and a 200 that is
// not a list answer says so.
func FuzzReadAnswer(f *testing.F) {
	for _, s := range []string{
		`{"TotalResults":1,"TotalPages":1,"Page":1,"ResourceList":[{"Id":"ABC"}]}`, `{"Message":"no"}`, `[]`, `null`, ``, `{"ResourceList":[null,1]}`,
	} {
		f.Add(200, []byte(s))
		f.Add(400, []byte(s))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		a := readAnswer(status, body)
		if a.Status != status || status != http.StatusOK && a.Message == "" {
			t.Fatalf("readAnswer(%d, %q) = %+v", status, body, a)
		}
		for _, id := range a.Ids {
			if id != strings.ToLower(id) {
				t.Fatalf("Id %q is not lower case", id)
			}
		}
	})
}

// TestCompareAuth compares a tenant that needs credentials, given through
// the environment: the token appears in neither report.
func TestCompareAuth(t *testing.T) {
	t.Parallel()
	const token = "s3cret-Token"
	cfg := resourcedir.DefaultConfig()
	cfg.Auth = "svc:" + token
	tenant := startServer(t, cfg, nil)
	tenant.expect(http.StatusOK, http.MethodPost, "/__admin/resources", string(genRun(t, "-n", "60", "-rand-seed", "3")),
		"Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("svc:"+token)))
	for _, format := range []string{"text", "json"} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{"compare", "-from", tenant.base, "-rate", "0", "-queries", "40", "-report", format},
			[]string{fromAuthEnv + "=svc:" + token}, &out, &errOut)
		if err != nil {
			t.Fatalf("compare -report %s: %v; %s", format, err, errOut.String())
		}
		if strings.Contains(out.String()+errOut.String(), token) {
			t.Errorf("compare -report %s wrote the token", format)
		}
	}
}

// cmpFront serves the tenant at base through a proxy: version answers
// GET /api/v2/version when not "" (else a 404), and firstOnly drops every
// requestParams.filters after the first, as a tenant that binds one value.
func cmpFront(t *testing.T, base, version string, firstOnly bool) string {
	t.Helper()
	target, _ := url.Parse(base)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v2/version" {
			if version == "" {
				http.Error(w, `{"Message":"No route."}`, http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, version) //nolint:errcheck // the test reads what arrived
			return
		}
		if firstOnly {
			q := r.URL.Query()
			if f := q["requestParams.filters"]; len(f) > 1 {
				q["requestParams.filters"] = f[:1]
				r.URL.RawQuery = q.Encode()
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCompareTenantSection: the report gives the tenant's version (or the
// status when it fails), whether its resources carry
// ContractorOrganization, how it reads repeated filters, and how to check
// the create status by hand, in JSON and in text.
func TestCompareTenantSection(t *testing.T) {
	t.Parallel()
	tenant := cmpTenant(t, resourcedir.DefaultConfig())
	const version = `{"Major":2026,"Minor":4,"Build":1,"Revision":1,"MajorRevision":0,"MinorRevision":1}`
	front := cmpFront(t, tenant.base, version, false)
	rep, err := cmpJSON(t, "-from", front, "-queries", "20")
	if err != nil {
		t.Fatalf("compare: %v; differing: %v", err, cmpDiffering(rep))
	}
	got := rep.Tenant
	r := got.RepeatedFilters
	wantQuery := "requestParams.filters=Status~eq~%27Active%27&requestParams.filters=DisplayName~neq~%27"
	var compact bytes.Buffer            // the JSON report indents it
	json.Compact(&compact, got.Version) //nolint:errcheck // compared below
	if got.VersionStatus != 200 || compact.String() != version || got.ContractorOrganization != "carried" ||
		r.Verdict != repeatedJoins || !strings.HasPrefix(r.Query, wantQuery) || r.Tenant.Status != 200 ||
		r.Tenant.TotalResults == 0 || !slices.Equal(r.Tenant.Ids, r.AsJoined.Ids) {
		t.Errorf("tenant section %+v", got)
	}
	wantCurl := `curl -sS -o /dev/null -w '%{http_code}\n' -u "$USER:$TOKEN" -H 'Content-Type: application/json' -d '{"Company":"resourcedir create-status check"}' ` + front + "/api/v2/resource"
	if got.CreateStatus != createAdvice || got.CreateCheck != wantCurl {
		t.Errorf("create status %q\n%q", got.CreateStatus, got.CreateCheck)
	}

	// No version route, a tenant that reads the first filter only, and no
	// ContractorOrganization in its answers.
	bare := cmpTenant(t, resourcedir.DefaultConfig())
	bare.expect(http.StatusOK, http.MethodDelete, "/__admin/resources", "")
	bare.expect(http.StatusOK, http.MethodPost, "/__admin/resources", `[{"Company":"A"},{"Company":"B","Status":"Inactive"},{"DisplayName":"C","Company":"C"}]`)
	front = cmpFront(t, bare.base, "", true)
	text, _, _ := cmpRun(t, "-from", front, "-rate", "0", "-queries", "20")
	want := "\nThe tenant:\n  GET /api/v2/version: 404\n  ContractorOrganization: carried\n"
	if !strings.Contains(text, want) {
		t.Errorf("text report lacks %q:\n%s", want, text)
	}
	want = "  repeated requestParams.filters: the tenant " + repeatedFirst + "\n" +
		"    GET /api/v2/resource?requestParams.filters=Status~eq~%27Active%27&requestParams.filters=DisplayName~neq~%27A%27\n" +
		"      tenant:        200 TotalResults 2 TotalPages 1 Ids ["
	if !strings.Contains(text, want) {
		t.Errorf("text report lacks %q:\n%s", want, text)
	}
	want = "  create status: " + createAdvice + "\n    curl -sS "
	if !strings.Contains(text, want) {
		t.Errorf("text report lacks %q:\n%s", want, text)
	}
}
