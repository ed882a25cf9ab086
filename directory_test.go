package resourcedir_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resourcedir/resourcedir"
)

// The handle as a Go test uses it: from another package, through the
// exported API alone.

var people = resourcedir.Config{Seed: []map[string]any{
	{"Id": "6f9619ff-8b86-4011-b42d-00c04fc964ff", "FirstName": "Ada", "Surname": "Lovelace", "Email": "ada@example.com"},
	{"Company": "Analytical Engines", "Types": []map[string]string{{"Type": "Company"}}},
}}

// send is the client under test: one request, its status and body.
func send(t *testing.T, method, target, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestRunTControls(t *testing.T) {
	t.Parallel()
	dir := resourcedir.RunT(t, people)
	if dir.Name != "default" || !strings.HasPrefix(dir.URL, "http://127.0.0.1:") {
		t.Fatalf("RunT gave %q at %q", dir.Name, dir.URL)
	}
	filter := url.QueryEscape("Email~eq~'ada@example.com'")
	if status, body := send(t, "GET", dir.URL+"/api/v2/resource?requestParams.filters="+filter, ""); status != 200 ||
		!strings.Contains(body, `"TotalResults":1`) || !strings.Contains(body, `"Id":"6f9619ff-8b86-4011-b42d-00c04fc964ff"`) {
		t.Fatalf("the seeded person: %d %s", status, body)
	}

	id := dir.AddFault(resourcedir.Fault{Method: "POST", Path: "/api/v2/resource", Status: 503, Headers: map[string]string{"Retry-After": "2"}, Times: 1})
	if status, body := send(t, "POST", dir.URL+"/api/v2/resource", `{"FirstName": "Grace", "Surname": "Hopper"}`); status != 503 ||
		body != `{"Message":"Injected fault 1: POST /api/v2/resource answers 503 (see /__admin/faults)."}` {
		t.Errorf("the fault's answer: %d %s", status, body)
	}
	if status, _ := send(t, "POST", dir.URL+"/api/v2/resource", `{"FirstName": "Grace", "Surname": "Hopper"}`); status != 201 {
		t.Errorf("the retry: %d", status)
	}
	faults := dir.Faults()
	if len(faults) != 1 || faults[0].ID != id || faults[0].Fired != 1 || faults[0].Status != 503 {
		t.Errorf("Faults() = %+v, want fault %d fired once", faults, id)
	}

	got := dir.Requests(resourcedir.RequestFilter{Method: "POST"})
	if len(got) != 2 || got[0].Status != 503 || got[0].Fault == nil || *got[0].Fault != id ||
		got[1].Status != 201 || got[1].Delivered != 201 || got[1].Fault != nil ||
		string(got[1].Body) != `{"FirstName":"Grace","Surname":"Hopper"}` ||
		got[0].Headers.Get("Content-Type") != "application/json" ||
		got[0].Response == nil || got[0].Response.Headers.Get("Retry-After") != "2" {
		t.Errorf("Requests(POST) = %+v", got)
	}
	if got := dir.Requests(resourcedir.RequestFilter{Method: "GET"}); len(got) != 1 ||
		got[0].Params.Get("requestParams.filters") != "Email~eq~'ada@example.com'" {
		t.Errorf("Requests(GET) = %+v", got)
	}
	if got := dir.WaitRequests(3, time.Second, resourcedir.RequestFilter{}); len(got) != 3 {
		t.Errorf("WaitRequests(3) gave %d", len(got))
	}

	ids := dir.Seed([]map[string]any{{"Company": "Babbage & Co"}, {"FirstName": "Charles"}})
	more := dir.Generate(3, 7)
	var all []struct{ Id, DisplayName string }
	dir.Resources(&all)
	if len(ids) != 2 || len(more) != 3 || len(all) != 8 || all[3].Id != ids[0] || all[3].DisplayName != "Babbage & Co" || all[7].Id != more[2] {
		t.Errorf("after Seed and Generate: %v %v %+v", ids, more, all)
	}

	// Only the create of one ExternalID fails, after one such went through.
	only := dir.AddFault(resourcedir.Fault{Method: "POST", Path: "*", Status: 409, Skip: 1, Times: 1,
		Match: &resourcedir.FaultMatch{Body: map[string]string{"ExternalID": "X-1"}, Headers: map[string]string{"X-Tenant": "blue"}}})
	for i, want := range []int{201, 201, 409, 201} {
		body := `{"Company": "C", "ExternalID": "X-1"}`
		if i == 1 {
			body = `{"Company": "C", "ExternalID": "X-2"}`
		}
		req, _ := http.NewRequest("POST", dir.URL+"/api/v2/resource", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Tenant", "blue")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("create %d: %d, want %d", i, resp.StatusCode, want)
		}
	}
	if f := dir.Faults()[1]; f.ID != only || f.Skip != 1 || f.Fired != 1 || f.Match == nil || f.Match.Headers["X-Tenant"] != "blue" {
		t.Errorf("the matched fault as listed: %+v", f)
	}
	dir.RemoveFault(id)
	dir.AddFault(resourcedir.Fault{Path: "/api/v2/resource", Kind: "reset"})
	dir.ClearFaults()
	dir.ClearRequests()
	dir.ClearResources()
	dir.Resources(&all)
	if len(all) != 0 || len(dir.Faults()) != 0 || len(dir.Requests(resourcedir.RequestFilter{})) != 0 {
		t.Errorf("after the clears: %d resources, %d faults", len(all), len(dir.Faults()))
	}
	dir.Reset()
	dir.Resources(&all)
	if len(all) != 2 {
		t.Errorf("after Reset: %d resources, want the seed's 2", len(all))
	}
}

// fakeT stands for a *testing.T whose failures are recorded, not
// reported: it runs a test body in a goroutine of its own, as testing does,
// so that Fatalf can end it.
type fakeT struct {
	name     string
	mu       sync.Mutex
	failed   bool
	logs     []string
	cleanups []func()
}

func (f *fakeT) Helper()      {}
func (f *fakeT) Name() string { return f.name }
func (f *fakeT) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}
func (f *fakeT) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}
func (f *fakeT) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.Logf(format, args...)
	f.mu.Lock()
	f.failed = true
	f.mu.Unlock()
	runtime.Goexit()
}
func (f *fakeT) fail() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = true
}

// run runs body as a test, then its cleanups, last first; it returns the
// log.
func (f *fakeT) run(body func(*fakeT)) string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(f)
	}()
	<-done
	for _, fn := range slices.Backward(f.cleanups) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			fn()
		}()
		<-done
	}
	return strings.Join(f.logs, "\n")
}

// namespaces lists the server's namespaces by name.
func namespaces(t *testing.T, server string) []string {
	t.Helper()
	var list struct{ Namespaces []struct{ Name string } }
	status, body := send(t, "GET", server+"/__admin/namespaces", "")
	if status != 200 {
		t.Fatalf("GET /__admin/namespaces: %d %s", status, body)
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range list.Namespaces {
		names = append(names, ns.Name)
	}
	return names
}

func TestNamespaceKeptWhenTheTestFailed(t *testing.T) {
	t.Parallel()
	server := resourcedir.RunT(t, people)
	tests := []struct {
		name    string
		fail    bool
		kept    bool
		logHas  []string
		logLack string
	}{
		{name: "TestPasses", logLack: "resourcedir"},
		{name: "TestFails/case #1", fail: true, kept: true, logHas: []string{
			"the failed test's namespace TestFails-case--1-", "console " + server.URL + "/ns/TestFails-case--1-",
			"the last 1 requests to TestFails-case--1-", "#1 POST /api/v2/resource -> 503 by fault 1",
		}},
	}
	for _, tt := range tests {
		ft := &fakeT{name: tt.name}
		var ns *resourcedir.Directory
		log := ft.run(func(ft *fakeT) {
			ns = server.Namespace(ft)
			ns.AddFault(resourcedir.Fault{Method: "POST", Path: "/api/v2/resource", Status: 503})
			send(t, "POST", ns.URL+"/api/v2/resource", `{"Company": "X"}`)
			if tt.fail {
				ft.fail()
			}
		})
		if want := server.URL + "/ns/" + ns.Name; ns.URL != want || !strings.HasPrefix(ns.Name, strings.NewReplacer("/", "-", " ", "-", "#", "-").Replace(tt.name)+"-") {
			t.Errorf("%s: namespace %q at %q", tt.name, ns.Name, ns.URL)
		}
		if kept := slices.Contains(namespaces(t, server.URL), ns.Name); kept != tt.kept {
			t.Errorf("%s: namespace kept %v, want %v", tt.name, kept, tt.kept)
		}
		for _, want := range tt.logHas {
			if !strings.Contains(log, want) {
				t.Errorf("%s: the log lacks %q:\n%s", tt.name, want, log)
			}
		}
		if tt.logLack != "" && strings.Contains(log, tt.logLack) {
			t.Errorf("%s: the log of a passing test holds %q:\n%s", tt.name, tt.logLack, log)
		}
	}
}

func TestConnectT(t *testing.T) {
	server := resourcedir.RunT(t, people)
	t.Run("unset", func(t *testing.T) {
		t.Setenv("RESOURCEDIR_URL", "")
		ft := &fakeT{name: "TestX"}
		log := ft.run(func(ft *fakeT) {
			resourcedir.ConnectT(ft)
			t.Error("ConnectT returned with RESOURCEDIR_URL unset")
		})
		if !ft.failed || !strings.Contains(log, "RESOURCEDIR_URL is not set") || !strings.Contains(log, "resourcedir -- go test ./...") {
			t.Errorf("failed %v, log %q", ft.failed, log)
		}
	})
	t.Run("set", func(t *testing.T) {
		t.Setenv("RESOURCEDIR_URL", server.URL)
		dir := resourcedir.ConnectT(t)
		if !strings.HasPrefix(dir.Name, "TestConnectT-set-") || dir.URL != server.URL+"/ns/"+dir.Name {
			t.Errorf("ConnectT gave %q at %q", dir.Name, dir.URL)
		}
		var all []map[string]any
		dir.Resources(&all)
		if len(all) != 2 {
			t.Errorf("a fresh namespace holds %d resources, want the seed's 2", len(all))
		}
	})
	if names := namespaces(t, server.URL); !slices.Equal(names, []string{"default"}) {
		t.Errorf("namespaces after the tests: %v, want default alone", names)
	}
}

func TestControlFailureStopsTheTest(t *testing.T) {
	t.Parallel()
	dir := resourcedir.RunT(t, resourcedir.Config{})
	tests := []struct {
		name string
		call func(*resourcedir.Directory)
		want string
	}{
		{"a fault without a Path", func(d *resourcedir.Directory) { d.AddFault(resourcedir.Fault{Status: 503}) },
			"POST " + dir.URL + "/__admin/faults: 400: "},
		{"an unknown fault", func(d *resourcedir.Directory) { d.RemoveFault(42) },
			"DELETE " + dir.URL + "/__admin/faults/42: 404: No fault has the id 42."},
		{"a bad seed", func(d *resourcedir.Directory) { d.Seed(`not json`) }, "/__admin/resources: 400: "},
	}
	for _, tt := range tests {
		ft := &fakeT{name: "T"}
		log := ft.run(func(ft *fakeT) { tt.call(resourcedir.Attach(ft, dir.URL)) })
		if !ft.failed || !strings.Contains(log, "resourcedir: ") || !strings.Contains(log, tt.want) {
			t.Errorf("%s: failed %v, log %q, want %q", tt.name, ft.failed, log, tt.want)
		}
	}
}

func TestAttachRefusesWhatIsNotAURL(t *testing.T) {
	for _, bad := range []string{"", "127.0.0.1:8080", "ftp://x", "http://"} {
		ft := &fakeT{name: "T"}
		log := ft.run(func(ft *fakeT) { resourcedir.Attach(ft, bad) })
		if !ft.failed || !strings.Contains(log, "is not a server's URL") {
			t.Errorf("Attach(%q): failed %v, log %q", bad, ft.failed, log)
		}
	}
}

func TestRunTBadConfig(t *testing.T) {
	ft := &fakeT{name: "T"}
	log := ft.run(func(ft *fakeT) { resourcedir.RunT(ft, resourcedir.Config{SeedFile: "testdata/none.json"}) })
	if !ft.failed || !strings.Contains(log, "resourcedir: seed testdata/none.json: open testdata/none.json: no such file or directory") {
		t.Errorf("failed %v, log %q", ft.failed, log)
	}
}

// iterT is a TB for one iteration of a benchmark: its cleanups run when
// the iteration ends, not when the benchmark does.
type iterT struct {
	*testing.B
	cleanups []func()
}

func (i *iterT) Cleanup(f func()) { i.cleanups = append(i.cleanups, f) }

func (i *iterT) end() {
	for _, f := range slices.Backward(i.cleanups) {
		f()
	}
	i.cleanups = i.cleanups[:0]
}

// seedFile writes n generated resources as a seed file.
func seedFile(b *testing.B, n int) string {
	b.Helper()
	gen := resourcedir.RunT(b, resourcedir.Config{Generate: n, RandSeed: 1})
	var all []map[string]any
	gen.Resources(&all)
	text, err := json.Marshal(all)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "seed.json")
	if err := os.WriteFile(path, text, 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkRunT is a test's start: an in-process server seeded from a
// 1,000-resource file, up and answering, then stopped.
func BenchmarkRunT(b *testing.B) {
	cfg := resourcedir.Config{SeedFile: seedFile(b, 1000)}
	it := &iterT{B: b}
	for b.Loop() {
		dir := resourcedir.RunT(it, cfg)
		resp, err := http.Get(dir.URL + "/__admin/health")
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("health: %d", resp.StatusCode)
		}
		it.end()
	}
}

// BenchmarkNamespace is a test's fresh namespace on a shared server with a
// 1,000-resource seed: created through the handle, and deleted.
func BenchmarkNamespace(b *testing.B) {
	server := resourcedir.RunT(b, resourcedir.Config{SeedFile: seedFile(b, 1000)})
	it := &iterT{B: b}
	for b.Loop() {
		server.Namespace(it)
		it.end()
	}
}

// Servers of one process share a decoded seed by its content: a seed file
// that changed between two tests is read anew, and an unchanged one gives
// the same Ids (which the file does not give) in every server.
func TestRunTSeedByContent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "seed.json")
	write := func(text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := func(dir *resourcedir.Directory) (ids, names []string) {
		var all []struct{ Id, DisplayName string }
		dir.Resources(&all)
		for _, r := range all {
			ids, names = append(ids, r.Id), append(names, r.DisplayName)
		}
		return ids, names
	}
	write(`[{"Company": "First"}]`)
	ids1, names1 := names(resourcedir.RunT(t, resourcedir.Config{SeedFile: path}))
	ids2, names2 := names(resourcedir.RunT(t, resourcedir.Config{SeedFile: path}))
	write(`[{"Company": "Second"}, {"Company": "Third"}]`)
	_, names3 := names(resourcedir.RunT(t, resourcedir.Config{SeedFile: path}))
	if !slices.Equal(names1, []string{"First"}) || !slices.Equal(ids1, ids2) || !slices.Equal(names2, names1) ||
		!slices.Equal(names3, []string{"Second", "Third"}) {
		t.Errorf("first %v %v, again %v %v, after the change %v", ids1, names1, ids2, names2, names3)
	}
}

// Config.Filters is read as -filters reads it, in any case: "Kendo" served
// the assetic rules and a console page of 500.
func TestRunTFiltersInAnyCase(t *testing.T) {
	t.Parallel()
	dir := resourcedir.RunT(t, resourcedir.Config{Filters: "Kendo"})
	if status, body := send(t, "GET", dir.URL+"/", ""); status != 200 {
		t.Errorf("the console: %d %.200s", status, body)
	}
	if status, body := send(t, "GET", dir.URL+"/api/v2/resource?requestParams.filters="+url.QueryEscape("Fax~isnull"), ""); status != 200 {
		t.Errorf("a filter only kendo takes: %d %s", status, body)
	}
}

// TestDirectoryPutSeed: PutSeed is server-wide, whichever namespace's
// handle calls it; namespaces made after it start from it.
func TestDirectoryPutSeed(t *testing.T) {
	t.Parallel()
	dir := resourcedir.RunT(t, resourcedir.Config{})
	before := dir.Namespace(t)
	ids := before.PutSeed(`[{"Company": "Put One"}, {"Id": "00000000-0000-4000-8000-000000000001", "Company": "Put Two"}]`)
	if len(ids) != 2 || ids[1] != "00000000-0000-4000-8000-000000000001" {
		t.Fatalf("PutSeed: %v", ids)
	}
	var all []struct{ Id, Company string }
	dir.Namespace(t).Resources(&all)
	if len(all) != 2 || all[0].Id != ids[0] || all[1].Company != "Put Two" {
		t.Errorf("a namespace made after PutSeed: %+v", all)
	}
	before.Resources(&all)
	if len(all) != 0 {
		t.Errorf("a namespace made before PutSeed holds %d, want none until reset", len(all))
	}
	before.Reset()
	before.Resources(&all)
	if len(all) != 2 {
		t.Errorf("after its reset: %d, want the seed's 2", len(all))
	}
}
