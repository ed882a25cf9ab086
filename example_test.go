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
	// create: 200 OK
	// list: 200 OK true true
}
