package resourcedir

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TB is the part of *testing.T (and *testing.B) that the test helpers use,
// so that this package does not import testing.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Failed() bool
	Name() string
}

// Directory is a handle on one directory of a resourcedir server: a test
// hands URL to the client under test as its base URL, and drives the
// test-double controls through the methods. Every control is an HTTP call
// to the directory's /__admin/ paths, so a handle works the same on a server
// in this process (RunT) and in another one (ConnectT, Attach). A control
// that fails stops the test with the server's answer.
type Directory struct {
	// URL is the directory's base URL, such as http://127.0.0.1:41234 or
	// http://127.0.0.1:41234/ns/TestCreate-5b0f2e9c41d7a3e8.
	URL string
	// Name is the namespace's name: "default" for the unprefixed paths.
	Name string

	t      TB
	root   string // the server's URL, where namespaces are made
	client *http.Client
}

// urlVar is the variable that gives the command after -- the served URL,
// and ConnectT the server to use.
const urlVar = "RESOURCEDIR_URL"

// RunT starts a resourcedir configured by cfg in this process, on a free
// loopback port, for the test t alone, and returns the handle of its
// directory. The server stops when the test ends; when the test failed, its
// journal is written to the test's log first.
func RunT(t TB, cfg Config) *Directory {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("resourcedir: %v", err)
	}
	srv.cfg.loopbackOnly = true // as the binary on a loopback address
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		t.Fatalf("resourcedir: listen: %v", err)
	}
	hs := newHTTPServer(srv, srv.log)
	hs.RegisterOnShutdown(srv.beginShutdown)
	served := make(chan struct{})
	go func() {
		defer close(served)
		hs.Serve(ln) //nolint:errcheck // ErrServerClosed once Shutdown below runs
	}()
	d := Attach(t, "http://"+ln.Addr().String())
	t.Cleanup(func() {
		if t.Failed() {
			d.logJournal()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil {
			hs.Close()
		}
		<-served
		if err := srv.Close(); err != nil {
			t.Logf("resourcedir: close: %v", err)
		}
	})
	return d
}

// ConnectT gives the test t a fresh namespace of the resourcedir at
// RESOURCEDIR_URL, as `resourcedir -- go test ./...` sets it: see
// Directory.Namespace. The variable is read while the test runs, so go
// test's cache knows a run depends on it; when it is unset the test fails,
// saying how to start a server.
func ConnectT(t TB) *Directory {
	t.Helper()
	base := os.Getenv(urlVar)
	if base == "" {
		t.Fatalf("resourcedir: %s is not set: run the tests under a server, as in resourcedir -- go test ./... (or use resourcedir.RunT for one in this process)", urlVar)
	}
	return Attach(t, base).Namespace(t)
}

// Attach returns a handle on the directory at base, a server's URL (its
// default namespace) or a namespace's base URL (.../ns/NAME), without
// creating anything. An https URL is trusted through the CA file that
// RESOURCEDIR_CA_FILE names, when set (resourcedir -tls -- go test ./...).
func Attach(t TB, base string) *Directory {
	t.Helper()
	base = strings.TrimSuffix(base, "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		t.Fatalf("resourcedir: %q is not a server's URL, such as http://127.0.0.1:8080", base)
	}
	caFile := ""
	if u.Scheme == "https" {
		caFile = os.Getenv(caFileVar)
	}
	// Above the longest wait a journal query may ask for.
	client, err := TrustingClient(caFile, maxJournalWait+30*time.Second)
	if err != nil {
		t.Fatalf("resourcedir: %s=%s: %v", caFileVar, caFile, err)
	}
	d := &Directory{URL: base, Name: defaultNamespace, t: t, root: u.Scheme + "://" + u.Host, client: client}
	if name, ok := strings.CutPrefix(u.Path, namespacePrefix); ok && name != "" {
		d.Name = name
	}
	return d
}

// Namespace creates a fresh namespace on d's server for the test t: seeded
// as the server's seed, with a journal and faults of its own, under a name
// that starts with the test's. It is deleted when the test ends, unless
// the test failed: then it is kept, and the test's log names it, links its
// console and shows its journal.
func (d *Directory) Namespace(t TB) *Directory {
	t.Helper()
	var ns struct{ Name, BaseURL string }
	body := fmt.Sprintf(`{"Prefix": %q}`, namespacePrefixOf(t.Name()))
	d.do(http.MethodPost, d.root+"/__admin/namespaces", body, http.StatusCreated, &ns)
	n := &Directory{URL: ns.BaseURL, Name: ns.Name, t: t, root: d.root, client: d.client}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("resourcedir: the failed test's namespace %s is kept: console %s/, journal %s/__admin/requests (remove it with DELETE %s/__admin/namespaces/%s)",
				n.Name, n.URL, n.URL, n.root, n.Name)
			n.logJournal()
			return
		}
		n.do(http.MethodDelete, n.root+"/__admin/namespaces/"+n.Name, "", http.StatusOK, nil)
	})
	return n
}

// namespacePrefixOf is a test's name as a namespace prefix: cut to the
// longest one, with dashes for the characters a name may not hold.
func namespacePrefixOf(testName string) string {
	p := []byte(testName[:min(len(testName), maxNamespacePrefix)])
	for i, c := range p {
		if strings.IndexByte(namespaceNameChars, c) < 0 {
			p[i] = '-'
		}
	}
	return cmp.Or(string(p), "go")
}

// logJournal writes the directory's last requests to the test's log, one
// line each, for a test that failed.
func (d *Directory) logJournal() {
	var j struct{ Requests []Request }
	if status, err := d.call(http.MethodGet, d.URL+"/__admin/requests?limit=50", "", &j); err != nil || status != http.StatusOK {
		d.t.Logf("resourcedir: the journal of %s could not be read: %d %v", d.Name, status, err)
		return
	}
	d.t.Logf("resourcedir: the last %d requests to %s:", len(j.Requests), d.Name)
	for _, r := range j.Requests {
		line := fmt.Sprintf("  #%d %s %s -> %d", r.Seq, r.Method, r.Path, r.Status)
		if r.Query != "" {
			line = fmt.Sprintf("  #%d %s %s?%s -> %d", r.Seq, r.Method, r.Path, r.Query, r.Status)
		}
		if r.Delivered != r.Status {
			line += fmt.Sprintf(" (delivered %d)", r.Delivered)
		}
		if r.Fault != nil {
			line += fmt.Sprintf(" by fault %d", *r.Fault)
		}
		d.t.Logf("%s", line)
	}
}

// Fault is a fault to inject: an answer, a delay or a broken connection in
// place of the real answer to the requests it matches. Zero fields are left
// out; ID and Fired are the server's, set in what Faults lists.
type Fault struct {
	ID      int               `json:"Id,omitempty"`
	Method  string            `json:",omitempty"` // "" or "*" matches any
	Path    string            `json:",omitempty"` // an /api/v2 path, exact or with {name} segments; "*" for every one
	Match   *FaultMatch       `json:",omitempty"` // narrows the requests it matches
	Skip    int               `json:",omitempty"` // matching requests let through before it fires
	Times   int               `json:",omitempty"` // requests it answers; 0: until cleared
	Chance  float64           `json:",omitempty"` // 0 < p ≤ 1 that a match fires; 0 means 1
	Seed    *int64            `json:",omitempty"` // of Chance's draws; nil: a random one
	Kind    string            `json:",omitempty"` // response (""), reset, empty, garbage or hang
	Status  int               `json:",omitempty"` // the answer's status, for a response
	Headers map[string]string `json:",omitempty"` // the answer's extra headers
	Body    any               `json:",omitempty"` // the answer's body: a string as its text, else JSON
	DelayMs int               `json:",omitempty"` // wait first; alone, the real answer comes late
	After   bool              `json:",omitempty"` // serve for real first, then answer with the fault
	Fired   int               `json:",omitempty"` // how often it answered
}

// FaultMatch narrows the requests a fault matches: each part given must hold.
type FaultMatch struct {
	Query   map[string]string `json:",omitempty"` // query parameters present with these values
	Headers map[string]string `json:",omitempty"` // request headers present with these values
	// Body is a string the request body must contain, or a map of JSON
	// properties it must have with these values.
	Body any `json:",omitempty"`
}

// AddFault adds f after the directory's other faults and returns its Id.
func (d *Directory) AddFault(f Fault) int {
	d.t.Helper()
	f.ID, f.Fired = 0, 0
	spec, err := json.Marshal(f)
	if err != nil {
		d.t.Fatalf("resourcedir: fault %+v: %v", f, err)
	}
	var added struct{ Faults []Fault }
	d.do(http.MethodPost, d.URL+"/__admin/faults", string(spec), http.StatusOK, &added)
	if len(added.Faults) != 1 {
		d.t.Fatalf("resourcedir: POST /__admin/faults added %d faults, want 1", len(added.Faults))
	}
	return added.Faults[0].ID
}

// Faults lists the directory's faults, in the order they are tried.
func (d *Directory) Faults() []Fault {
	d.t.Helper()
	var list struct{ Faults []Fault }
	d.do(http.MethodGet, d.URL+"/__admin/faults", "", http.StatusOK, &list)
	return list.Faults
}

// RemoveFault removes the fault with the Id that AddFault returned.
func (d *Directory) RemoveFault(id int) {
	d.t.Helper()
	d.do(http.MethodDelete, d.URL+"/__admin/faults/"+strconv.Itoa(id), "", http.StatusOK, nil)
}

// ClearFaults removes every fault.
func (d *Directory) ClearFaults() {
	d.t.Helper()
	d.do(http.MethodDelete, d.URL+"/__admin/faults", "", http.StatusOK, nil)
}

// RequestFilter selects journal entries; zero fields select everything.
type RequestFilter struct {
	Method string
	Path   string // exact, or with {name} segments: /api/v2/resource/{id}
	Status int    // what the server did
	Since  uint64 // only entries with a larger Seq
	Limit  int    // the newest this many
}

func (f RequestFilter) query() url.Values {
	q := url.Values{}
	set := func(key, value string, given bool) {
		if given {
			q.Set(key, value)
		}
	}
	set("method", f.Method, f.Method != "")
	set("path", f.Path, f.Path != "")
	set("status", strconv.Itoa(f.Status), f.Status != 0)
	set("since", strconv.FormatUint(f.Since, 10), f.Since != 0)
	set("limit", strconv.Itoa(f.Limit), f.Limit != 0)
	return q
}

// Request is one journal entry: an /api/v2 request as the client sent it,
// what the server did and what the client received.
type Request struct {
	Seq           uint64
	Time          time.Time
	RequestID     string `json:"RequestId"`
	Method        string
	Path          string
	Query         string      // the raw query string
	Params        url.Values  // the decoded query
	Headers       http.Header // credentials masked
	Body          json.RawMessage
	BodyTruncated bool
	// HeadersTruncated says Headers holds part of what was sent: a long
	// header block, or a request refused for its credentials (none kept).
	HeadersTruncated bool
	Status           int // what the server did (with an After fault, the real answer's)
	Delivered        int // what the client received; 0 for no answer
	DurationMs       float64
	Fault            *int // the Id of the fault that answered
	Response         *Response
	// ResponseTruncated says Response.Body was cut.
	ResponseTruncated bool
	// Ignored are the query parameters a list ignored, each to the closest
	// name it reads ("requestParams.filter": "requestParams.filters"): a
	// typo shows here. Nil when none.
	Ignored map[string]string
}

// Response is the answer a journal entry records.
type Response struct {
	Headers http.Header
	Body    json.RawMessage
}

// UnmarshalJSON reads Params and headers, which the journal writes as a
// value or, when repeated, a list of them.
func (r *Request) UnmarshalJSON(b []byte) error {
	type plain Request
	var raw struct {
		plain
		Params, Headers map[string]stringOrList
		Response        *struct {
			Headers map[string]stringOrList
			Body    json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*r = Request(raw.plain)
	r.Params, r.Headers = lists(raw.Params), lists(raw.Headers)
	if raw.Response != nil {
		r.Response = &Response{Headers: lists(raw.Response.Headers), Body: raw.Response.Body}
	}
	return nil
}

// lists is m with each value a list; never nil.
func lists(m map[string]stringOrList) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// stringOrList is a value the journal writes as one string or a list.
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var one string
		err := json.Unmarshal(b, &one)
		*s = stringOrList{one}
		return err
	}
	return json.Unmarshal(b, (*[]string)(s))
}

// Requests returns the journal's entries that f selects, oldest first.
func (d *Directory) Requests(f RequestFilter) []Request {
	d.t.Helper()
	var j struct{ Requests []Request }
	d.do(http.MethodGet, d.URL+"/__admin/requests?"+f.query().Encode(), "", http.StatusOK, &j)
	return j.Requests
}

// WaitRequests waits up to timeout (at most a minute) until at least n
// entries match f, and returns them; fewer by then fails the test. For a
// client that sends its requests after the call that started them returned.
func (d *Directory) WaitRequests(n int, timeout time.Duration, f RequestFilter) []Request {
	d.t.Helper()
	q := f.query()
	q.Set("count", strconv.Itoa(n))
	q.Set("wait", timeout.String())
	var j struct{ Requests []Request }
	d.do(http.MethodGet, d.URL+"/__admin/requests?"+q.Encode(), "", http.StatusOK, &j)
	if len(j.Requests) < n {
		d.t.Fatalf("resourcedir: waited %s for %d requests matching %s in %s, got %d", timeout, n, f.query().Encode(), d.Name, len(j.Requests))
	}
	return j.Requests
}

// ClearRequests empties the journal; Seq goes on from where it was.
func (d *Directory) ClearRequests() {
	d.t.Helper()
	d.do(http.MethodDelete, d.URL+"/__admin/requests", "", http.StatusOK, nil)
}

// Reset brings the directory back to its seed, with an empty journal and no
// faults.
func (d *Directory) Reset() {
	d.t.Helper()
	d.do(http.MethodPost, d.URL+"/__admin/reset", "", http.StatusOK, nil)
}

// Seed adds resources, all or none, and returns their Ids in order:
// resources is JSON text (a string, []byte, json.RawMessage) or a value encoding/json
// turns into an array of resources (the create rules apply; an Id may be
// given).
func (d *Directory) Seed(resources any) []string {
	d.t.Helper()
	text, err := asJSON(resources)
	if err != nil {
		d.t.Fatalf("resourcedir: seed: %v", err)
	}
	var seeded struct{ Ids []string }
	d.do(http.MethodPost, d.URL+"/__admin/resources", string(text), http.StatusOK, &seeded)
	return seeded.Ids
}

// PutSeed makes resources (as Seed takes them) the server's current seed
// (PUT /__admin/seed, server-wide): namespaces made or reset after it start
// from it, those that exist keep what they have until reset. It returns
// the Ids the seed's resources get, in order.
func (d *Directory) PutSeed(resources any) []string {
	d.t.Helper()
	text, err := asJSON(resources)
	if err != nil {
		d.t.Fatalf("resourcedir: put seed: %v", err)
	}
	var seeded struct{ Ids []string }
	d.do(http.MethodPut, d.root+"/__admin/seed", string(text), http.StatusOK, &seeded)
	return seeded.Ids
}

// Generate adds count generated resources, the same ones for the same seed,
// and returns their Ids.
func (d *Directory) Generate(count int, seed uint64) []string {
	d.t.Helper()
	var added struct{ Ids []string }
	d.do(http.MethodPost, d.URL+"/__admin/generate", fmt.Sprintf(`{"Count": %d, "Seed": %d}`, count, seed), http.StatusOK, &added)
	return added.Ids
}

// Resources decodes every resource of the directory, in creation order,
// into out: a pointer to a slice of the client's own resource type, or of
// map[string]any.
func (d *Directory) Resources(out any) {
	d.t.Helper()
	var all struct{ Data json.RawMessage }
	d.do(http.MethodGet, d.URL+"/__admin/resources", "", http.StatusOK, &all)
	if err := json.Unmarshal(all.Data, out); err != nil {
		d.t.Fatalf("resourcedir: GET /__admin/resources into %T: %v", out, err)
	}
}

// ClearResources removes every resource, the seed's included, until the
// next Reset.
func (d *Directory) ClearResources() {
	d.t.Helper()
	d.do(http.MethodDelete, d.URL+"/__admin/resources", "", http.StatusOK, nil)
}

// do sends a control request and fails the test unless the answer has
// status want; out, unless nil, takes the JSON answer.
func (d *Directory) do(method, target, body string, want int, out any) {
	d.t.Helper()
	status, err := d.call(method, target, body, out)
	if err != nil {
		d.t.Fatalf("resourcedir: %s %s: %v", method, target, err)
	}
	if status != want {
		d.t.Fatalf("resourcedir: %s %s: status %d, want %d", method, target, status, want)
	}
}

// call sends a control request and decodes a 2xx answer into out; another
// status comes back with the server's message as the error.
func (d *Directory) call(method, target, body string, out any) (int, error) {
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode/100 != 2 {
		var e struct{ Message string }
		if json.Unmarshal(text, &e) == nil && e.Message != "" {
			return resp.StatusCode, fmt.Errorf("%d: %s %s", resp.StatusCode, e.Message, bytes.TrimSpace(text))
		}
		return resp.StatusCode, fmt.Errorf("%d: %s", resp.StatusCode, bytes.TrimSpace(text))
	}
	if out != nil {
		if err := json.Unmarshal(text, out); err != nil {
			return resp.StatusCode, fmt.Errorf("the answer is not what was expected: %w", err)
		}
	}
	return resp.StatusCode, nil
}

// caFileVar is the variable that gives the command after -- the file of
// the certificate authority that signed the server's certificate (-tls).
const caFileVar = "RESOURCEDIR_CA_FILE"

// TrustingClient returns an HTTP client that trusts the CA in caFile (of a
// server run with -tls) besides the system's, if caFile is not "".
func TrustingClient(caFile string, timeout time.Duration) (*http.Client, error) {
	if caFile == "" {
		return &http.Client{Timeout: timeout}, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	// One transport per CA, as http.DefaultTransport for the rest: a test
	// suite's handles share its connections, not each open (and leave) its own.
	t, _ := trustingTransports.LoadOrStore(string(pem), transport)
	return &http.Client{Timeout: timeout, Transport: t.(*http.Transport)}, nil
}

// trustingTransports are TrustingClient's transports by the CA's PEM text.
var trustingTransports sync.Map
