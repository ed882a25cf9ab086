package resourcedir

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A fault's Match narrows it to requests with given query parameters,
// headers or body; Skip lets the first matching ones through; Path "*"
// matches every API path.
func TestFaultMatch(t *testing.T) {
	t.Parallel()
	const id = "0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c"
	type req struct {
		method, path, body string
		hdr                []string
		fires              bool
	}
	tests := []struct {
		name  string
		fault string
		reqs  []req
	}{
		{"page 2 only", `{"Method": "GET", "Path": "/api/v2/resource", "Match": {"Query": {"requestParams.page": "2"}}, "Status": 503}`, []req{
			{method: "GET", path: "/api/v2/resource?requestParams.page=1"},
			{method: "GET", path: "/api/v2/resource"},
			{method: "GET", path: "/api/v2/resource?requestParams.page=2", fires: true},
			{method: "GET", path: "/api/v2/resource?RequestParams.Page=2&requestParams.pageSize=5", fires: true},
			{method: "GET", path: "/api/v2/resource?requestParams.page=22"},
		}},
		{"a header", `{"Path": "*", "Match": {"Headers": {"x-tenant": "blue"}}, "Status": 503}`, []req{
			{method: "GET", path: "/api/v2/resource"},
			{method: "GET", path: "/api/v2/resource", hdr: []string{"X-Tenant", "green"}},
			{method: "GET", path: "/api/v2/resource", hdr: []string{"X-Tenant", "blue"}, fires: true},
		}},
		{"the create whose ExternalID is X-1", `{"Method": "POST", "Path": "/api/v2/resource", "Match": {"Body": {"externalid": "X-1"}}, "Status": 503}`, []req{
			{method: "POST", path: "/api/v2/resource", body: `{"Company": "A", "ExternalID": "X-2"}`},
			{method: "POST", path: "/api/v2/resource", body: `{"Company": "A"}`},
			{method: "POST", path: "/api/v2/resource", body: `{"Company": "A", "ExternalID": "X-1"}`, fires: true},
			{method: "POST", path: "/api/v2/resource", body: "\ufeff" + `{"Company": "B", "EXTERNALID": "X-1"}`, fires: true},
			{method: "POST", path: "/api/v2/resource", body: `not json X-1`},
		}},
		{"a body that contains", `{"Path": "*", "Match": {"Body": "Hopper"}, "Status": 503}`, []req{
			{method: "POST", path: "/api/v2/resource", body: `{"Surname": "Lovelace"}`},
			{method: "POST", path: "/api/v2/resource", body: `{"Surname": "Hopper"}`, fires: true},
		}},
		{"the third succeeds after two", `{"Method": "POST", "Path": "/api/v2/resource", "Skip": 2, "Times": 1, "Status": 503}`, []req{
			{method: "POST", path: "/api/v2/resource", body: `{"Company": "1"}`},
			{method: "GET", path: "/api/v2/resource"},
			{method: "POST", path: "/api/v2/resource", body: `{"Company": "2"}`},
			{method: "POST", path: "/api/v2/resource", body: `{"Company": "3"}`, fires: true},
			{method: "POST", path: "/api/v2/resource", body: `{"Company": "4"}`},
		}},
		{"every API path", `{"Path": "*", "Status": 503}`, []req{
			{method: "GET", path: "/api/v2/resource", fires: true},
			{method: "PUT", path: "/api/v2/resource/" + id, body: `{}`, fires: true},
			{method: "GET", path: "/API/V2/Resource/", fires: true},
			{method: "GET", path: "/__admin/health"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := startServer(t, DefaultConfig(), nil)
			fid := e.addFault(tt.fault)[0].ID
			for i, q := range tt.reqs {
				r := e.do(q.method, q.path, q.body, q.hdr...)
				if fired := r.Status == 503; fired != q.fires {
					t.Errorf("request %d, %s %s %s: status %d, want fired %v", i, q.method, q.path, q.body, r.Status, q.fires)
				}
			}
			// The journal names the fault of each request it touched.
			for i, en := range e.journal() {
				if touched := en.Fault != nil && *en.Fault == fid; touched != tt.reqs[i].fires {
					t.Errorf("journal entry %d names fault %v, want touched %v", i, en.Fault, tt.reqs[i].fires)
				}
			}
		})
	}
}

// The listing shows a fault's Match and Skip as they were given.
func TestFaultMatchListed(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	e.addFault(`{"Path": "/api/v2/resource", "Match": {"Query": {"requestParams.page": "2"}, "Body": {"ExternalID": "X-1"}}, "Skip": 1, "Status": 503}`)
	r := e.expect(http.StatusOK, http.MethodGet, "/__admin/faults", "")
	if want := `"Match":{"Query":{"requestParams.page":"2"},"Body":{"ExternalID":"X-1"}},"Skip":1,`; !strings.Contains(string(r.Body), want) {
		t.Errorf("listing %s lacks %s", r.Body, want)
	}
}

// A fault matched on its body, through a raw TCP client: the matching
// request's connection is reset, the other is answered.
func TestFaultMatchBodyOverTCP(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	e.addFault(`{"Method": "POST", "Path": "/api/v2/resource", "Match": {"Body": {"ExternalID": "X-9"}}, "Kind": "reset"}`)
	got, err := rawConnExchange(t, e.base, rawPost("/api/v2/resource", `{"Company": "Reset", "ExternalID": "X-9"}`))
	if !errors.Is(err, syscall.ECONNRESET) || len(got) != 0 {
		t.Errorf("the matching create: %q then %v, want nothing then ECONNRESET", got, err)
	}
	got, _ = rawConnExchange(t, e.base, rawPost("/api/v2/resource", `{"Company": "Kept", "ExternalID": "X-8"}`))
	if !strings.HasPrefix(string(got), "HTTP/1.1 201 Created\r\n") {
		t.Errorf("the other create: %q", got)
	}
	if n := e.health(); n != 1 {
		t.Errorf("%d resources, want the one that was not reset", n)
	}
}

// Match, Skip and a missing Path are refused with a 400 that names the
// property and shows the forms.
func TestFaultMatchInvalid(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	many := make([]string, 33)
	for i := range many {
		many[i] = fmt.Sprintf(`"p%d": "v"`, i)
	}
	tests := []struct{ fault, prop, msg string }{
		{`{"Method": "GET", "Kind": "hang"}`, "Path", `Path is required: an /api/v2 route (/api/v2/resource, or /api/v2/resource/{id}, where an {name} segment matches any id), or \"*\" for every /api/v2 path.`},
		{`{"Path": "/api/v2/*", "Status": 503}`, "Path", `or \"*\" for every /api/v2 path.`},
		{`{"Path": "*", "Status": 503, "Skip": -1}`, "Skip", "Skip must be from 0 to 1073741824"},
		{`{"Path": "*", "Status": 503, "Match": []}`, "Match", "Match is an object such as"},
		{`{"Path": "*", "Status": 503, "Match": {"Qeury": {"a": "b"}}}`, "Match.Qeury", `Unknown property \"Qeury\"; did you mean Query? Match has Query, Headers, Body.`},
		{`{"Path": "*", "Status": 503, "Match": {"Query": {` + strings.Join(many, ",") + `}}}`, "Match.Query", "Match.Query names 1 to 32 of a query parameter."},
		{`{"Path": "*", "Status": 503, "Match": {"Query": {"a": 1}}}`, "Match.Query", "Match.Query is an object of names to string values."},
		{`{"Path": "*", "Status": 503, "Match": {"Headers": {"bad name": "x"}}}`, "Match.Headers", `\"bad name\" is not a header name.`},
		{`{"Path": "*", "Status": 503, "Match": {"Body": 42}}`, "Match.Body", "Body is a string the request body must contain"},
		{`{"Path": "*", "Status": 503, "Match": {"Body": "` + strings.Repeat("x", 5000) + `"}}`, "Match.Body", "Body may be at most 4096 bytes of JSON."},
	}
	for _, tt := range tests {
		r := e.expect(http.StatusBadRequest, http.MethodPost, "/__admin/faults", tt.fault)
		if want := `"` + tt.prop + `":["`; !strings.Contains(string(r.Body), want) || !strings.Contains(string(r.Body), tt.msg) {
			t.Errorf("%.80s: %s, want %s and %q", tt.fault, r.Body, want, tt.msg)
		}
	}
}

// A fault that matches on the body reads only the bodies of its own method
// and path, and never one over the limit: such a body is the handler's 413,
// at once for a client that waits for 100 Continue (it got 100 Continue and
// had its 5 MB read and thrown away).
func TestFaultMatchBodyLeavesOtherBodies(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.MaxBody = 1000
	e := startServer(t, cfg, nil)
	e.addFault(`{"Method": "PUT", "Path": "/api/v2/resource/{id}", "Match": {"Body": "X-1"}, "Status": 503}`)
	e.addFault(`{"Method": "POST", "Path": "/api/v2/resource", "Match": {"Body": "X-1"}, "Status": 503}`)
	// Headers alone, as a client that waits for 100 Continue sends them:
	// the first line back is the 413, not 100 Continue.
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(e.base, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second)) //nolint:errcheck // a test's bound
	fmt.Fprintf(conn, "POST /api/v2/resource HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\nExpect: 100-continue\r\n\r\n")
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || line != "HTTP/1.1 413 Request Entity Too Large\r\n" {
		t.Errorf("a 5 MB body declared: first line %q (%v), want the 413", line, err)
	}
	for _, tt := range []struct {
		body   string
		status int
	}{
		{`{"Company": "X-1"}`, http.StatusServiceUnavailable},
		{`{"Company": "Kept"}`, http.StatusCreated},
	} {
		if status := postExpectingContinue(t, e, tt.body); status != tt.status {
			t.Errorf("%.40s: status %d, want %d", tt.body, status, tt.status)
		}
	}
}
