package resourcedir_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/resourcedir/resourcedir"
)

// The server as an http.Handler, under httptest: a create, then a filtered
// list. In a test, RunT does all of this in one call.
func ExampleNew() {
	srv, err := resourcedir.New(resourcedir.Config{
		Seed: `[{"FirstName": "Ada", "Surname": "Lovelace"}]`,
	})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(srv)
	defer srv.Close()
	defer ts.Close()

	resp, err := http.Post(ts.URL+"/api/v2/resource", "application/json",
		strings.NewReader(`{"FirstName": "Grace", "Surname": "Hopper", "Types": [{"Type": "employee"}]}`))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("create:", resp.Status)

	resp, err = http.Get(ts.URL + "/api/v2/resource?requestParams.filters=Surname~eq~'hopper'&requestParams.sorts=DisplayName")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println("list:", resp.Status, strings.Contains(string(body), `"TotalResults":1`), strings.Contains(string(body), `"DisplayName":"Grace Hopper"`))
	// Output:
	// create: 201 Created
	// list: 200 OK true true
}

// exampleT stands for the *testing.T that a test function gets: an
// example has none.
type exampleT struct{ cleanups []func() }

func (*exampleT) Helper()                           {}
func (*exampleT) Name() string                      { return "TestExample" }
func (*exampleT) Failed() bool                      { return false }
func (*exampleT) Logf(format string, args ...any)   {}
func (*exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (t *exampleT) Cleanup(f func())                { t.cleanups = append(t.cleanups, f) }

func (t *exampleT) end() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// A test of a client's retry: a directory of its own, a fault that fails
// the first create, and the journal of what the client sent. In a test, t
// is the test's *testing.T and the server stops when the test ends.
func ExampleRunT() {
	t := &exampleT{}
	defer t.end()

	dir := resourcedir.RunT(t, resourcedir.Config{Seed: `[{"Company": "Analytical Engines"}]`})
	dir.AddFault(resourcedir.Fault{Method: "POST", Path: "/api/v2/resource", Status: 503, Times: 1})

	// The client under test, given dir.URL, retries once on 503.
	for attempt := 1; attempt <= 2; attempt++ {
		resp, err := http.Post(dir.URL+"/api/v2/resource", "application/json", strings.NewReader(`{"FirstName": "Grace"}`))
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			break
		}
	}

	for _, r := range dir.Requests(resourcedir.RequestFilter{Method: "POST"}) {
		fmt.Println(r.Method, r.Path, r.Status, string(r.Body))
	}
	var all []struct{ DisplayName string }
	dir.Resources(&all)
	fmt.Println(len(all), "resources")
	// Output:
	// POST /api/v2/resource 503 {"FirstName":"Grace"}
	// POST /api/v2/resource 201 {"FirstName":"Grace"}
	// 2 resources
}
