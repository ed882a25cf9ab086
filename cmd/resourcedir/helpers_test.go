package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/resourcedir/resourcedir"
)

// runLog is the stdout given to run: safe for the server's goroutines, and
// it tells the test the address once run logs that it is serving.
type runLog struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	addr  string
	ready chan struct{} // closed when the "serving" line has been written
}

func newRunLog() *runLog { return &runLog{ready: make(chan struct{})} }

// runServingLine matches the "serving" line in the text and JSON formats.
var runServingLine = regexp.MustCompile(`msg"?[=:]"?serving"?[ ,]"?addr"?[=:]"?(http://[^"\s]+)`)

// runProc is one run call in a goroutine.
type runProc struct {
	t      *testing.T
	url    string
	stdout *runLog
	stderr *runLog
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// runStart calls run in a goroutine with args and the environment env, and
// waits (with a deadline) for it to log the address it serves on.
func runStart(t *testing.T, args []string, env map[string]string) *runProc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &runProc{t: t, stdout: newRunLog(), stderr: newRunLog(), cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- run(ctx, args, runEnviron(env), p.stdout, p.stderr) }()
	t.Cleanup(func() { p.stop() })
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	select {
	case <-p.stdout.ready:
		p.url = p.stdout.addr
		return p
	case err := <-p.done:
		p.once.Do(func() { p.err = err })
		t.Fatalf("run %q returned before serving: %v\nstdout:\n%s\nstderr:\n%s", args, err, p.stdout, p.stderr)
	case <-deadline.C:
		t.Fatalf("run %q did not log its address within 10s; stdout:\n%s", args, p.stdout)
	}
	return nil
}

// stop cancels run's context and returns what run returned.
func (p *runProc) stop() error {
	p.t.Helper()
	p.once.Do(func() {
		p.cancel()
		select {
		case p.err = <-p.done:
		case <-time.After(40 * time.Second):
			p.err = errors.New("run did not return within 40s of its context being cancelled")
		}
	})
	return p.err
}

// stopClean stops run and fails the test unless it returned nil.
func (p *runProc) stopClean() {
	p.t.Helper()
	if err := p.stop(); err != nil {
		p.t.Fatalf("run returned %v, want nil; stdout:\n%s", err, p.stdout)
	}
}

// runEnviron is env as os.Environ would give it.
func runEnviron(env map[string]string) []string {
	var environ []string
	for _, name := range slices.Sorted(maps.Keys(env)) {
		environ = append(environ, name+"="+env[name])
	}
	return environ
}

// runArgs puts the flags every test needs (a free port, no snapshot file
// in the working directory) before args, which may override them.
func runArgs(args ...string) []string {
	return append([]string{"-addr", "127.0.0.1:0", "-snapshot", ""}, args...)
}

// stop sends sig and waits for the exit; it returns the exit status.
func (p *binaryProc) stop(sig os.Signal) int {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill() //nolint:errcheck // it may end on its own meanwhile
		<-p.done
		p.t.Fatalf("resourcedir did not exit within 30s of %v", sig)
	}
	return p.cmd.ProcessState.ExitCode()
}

func (l *runLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.addr == "" {
		if m := runServingLine.FindSubmatch(l.buf.Bytes()); m != nil {
			l.addr = string(m[1])
			close(l.ready)
		}
	}
	return len(p), nil
}

func (l *runLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// The tests that run resourcedir as a user does, from a shell, share one
// build per test run.
var builtBin struct {
	once sync.Once
	dir  string // removed by TestMain
	path string
	err  error
}

// builtBinary returns the path of resourcedir built from this folder, built
// on the first call of the test run.
func builtBinary(t testing.TB) string {
	t.Helper()
	builtBin.once.Do(func() {
		goTool, err := exec.LookPath("go") // go test puts $GOROOT/bin first in PATH
		if err != nil {
			builtBin.err = err
			return
		}
		if builtBin.dir, builtBin.err = os.MkdirTemp("", "resourcedir-test-"); builtBin.err != nil {
			return
		}
		path := filepath.Join(builtBin.dir, "resourcedir")
		if out, err := exec.Command(goTool, "build", "-o", path, ".").CombinedOutput(); err != nil {
			builtBin.err = fmt.Errorf("go build: %w\n%s", err, out)
			return
		}
		builtBin.path = path
	})
	if builtBin.err != nil {
		t.Fatal(builtBin.err)
	}
	return builtBin.path
}

// testConfigHome is the XDG_CONFIG_HOME of every resourcedir the tests
// start (binaryEnv): -tls keeps its CA in the user's config folder, and a
// test must never touch the real user's.
var testConfigHome string

func TestMain(m *testing.M) {
	// As Main does, before anything runs: the tests and benchmarks make
	// GUIDs as the binary does.
	uuid.EnableRandPool()
	var err error
	if testConfigHome, err = os.MkdirTemp("", "resourcedir-config-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(testConfigHome)
	if builtBin.dir != "" {
		os.RemoveAll(builtBin.dir)
	}
	os.Exit(code)
}

// binaryProc is the built resourcedir running as a process.
type binaryProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:port, as the process logged it
	stdout syncBuffer
	stderr syncBuffer
	done   chan struct{}
	err    error // from Wait, once done is closed
}

// binaryServingLine is the "serving" line of the text log format.
var binaryServingLine = regexp.MustCompile(`msg=serving addr=(https?://\S+)`)

// startBinary runs bin (builtBinary's, or another commit's to compare) in
// dir with args after a port of its choosing and the text log format, and
// returns once it has logged the address it serves on. The port is the
// process's own choice, so that no other test can take it in between.
func startBinary(t testing.TB, bin, dir string, args ...string) *binaryProc {
	t.Helper()
	return startBinaryEnv(t, bin, dir, nil, args...)
}

// startBinaryEnv is startBinary with env ("NAME=value") added to the
// environment.
func startBinaryEnv(t testing.TB, bin, dir string, env []string, args ...string) *binaryProc {
	t.Helper()
	p := &binaryProc{t: t, done: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-log-format", "text"}, args...)...)
	p.cmd.Dir = dir
	// Nothing from the test's environment may change the configuration or
	// the garbage collector that a test measures.
	for _, kv := range binaryEnv() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GODEBUG=") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill() //nolint:errcheck // it may end on its own meanwhile
			<-p.done
		}
	})
	deadline := time.NewTimer(15 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if m := binaryServingLine.FindStringSubmatch(p.stdout.String()); m != nil {
			p.url = m[1]
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("resourcedir exited during boot: %v\nstderr: %s\nstdout: %s", p.err, p.stderr.String(), p.stdout.String())
		case <-deadline.C:
			t.Fatalf("resourcedir did not log its address within 15s\nstderr: %s\nstdout: %s", p.stderr.String(), p.stdout.String())
		case <-tick.C:
		}
	}
}

// binaryEnv is the environment without RESOURCEDIR_ variables, which would
// change how a resourcedir the tests start runs, and with testConfigHome as
// XDG_CONFIG_HOME, where -tls keeps the user's CA.
func binaryEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RESOURCEDIR_") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "XDG_CONFIG_HOME="+testConfigHome)
}

// waitAddrFile returns the URL that a child process started with -addr
// 127.0.0.1:0 -addr-file path writes, one line, once it accepts
// connections. The child binds the port itself: a port chosen here and
// handed over could be taken by anything else on the machine before the
// child bound it. It fails t when exited closes first (the child ended) or
// after timeout; output tells what the child said, for the message.
func waitAddrFile(t testing.TB, path string, timeout time.Duration, exited <-chan struct{}, output func() string) string {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			if !addrFileLine.Match(b) {
				t.Fatalf("%s holds %q, want one line http://127.0.0.1:PORT", path, b)
			}
			return strings.TrimSuffix(string(b), "\n")
		}
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		select {
		case <-exited:
			t.Fatalf("the process exited before writing %s; its output:\n%s", path, output())
		case <-deadline.C:
			t.Fatalf("no %s after %v; the process's output:\n%s", path, timeout, output())
		case <-tick.C:
		}
	}
}

// addrFileLine is what an -addr-file holds: the served URL, one line.
var addrFileLine = regexp.MustCompile(`^http://127\.0\.0\.1:[1-9][0-9]*\n$`)

// listAll returns every served resource, in order, as JSON.
func (p *binaryProc) listAll(t *testing.T) []json.RawMessage { return p.listIn(t, "") }

// listIn lists every resource under prefix ("" or "/ns/{name}").
func (p *binaryProc) listIn(t *testing.T, prefix string) []json.RawMessage {
	t.Helper()
	var all []json.RawMessage
	for page := 1; ; page++ {
		resp, err := http.Get(fmt.Sprintf("%s%s/api/v2/resource?requestParams.pageSize=500&requestParams.page=%d", p.url, prefix, page))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			TotalResults int
			ResourceList []json.RawMessage
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("list page %d: %d %v", page, resp.StatusCode, err)
		}
		all = append(all, body.ResourceList...)
		if len(all) >= body.TotalResults || len(body.ResourceList) == 0 {
			return all
		}
	}
}

// doJSON sends body (nil for none) as JSON with c and reads the whole
// answer, for a goroutine that may not fail the test.
func doJSON(c *http.Client, method, url string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// wireEntry is a journal entry as GET /__admin/requests shows it.
type wireEntry struct {
	Seq              uint64
	Time             time.Time
	RequestID        string `json:"RequestId"`
	Method           string
	Path             string
	Query            string
	Params           map[string]any
	Headers          map[string]any
	HeadersTruncated bool
	Body             json.RawMessage
	BodyTruncated    bool
	Status           int
	DurationMs       float64
	Fault            *int
	Delivered        int
	Response         *struct {
		Headers map[string]any
		Body    json.RawMessage
	}
	ResponseTruncated bool
}

// testClient talks to a Server over a real HTTP connection, as clients of
// the real service would. Its methods fail t on transport errors.
type testClient struct {
	t      testing.TB
	base   string
	client *http.Client
	// strict checks on every response what the API promises for all of
	// them: the JSON content type, an X-Request-Id and a JSON body in UTF-8.
	strict bool
}

// clientAt talks to a server already listening at base.
func clientAt(t testing.TB, base string) *testClient {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &testClient{t: t, base: base, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// on is c reporting to t, for subtests that share a server.
func (c *testClient) on(t testing.TB) *testClient {
	cc := *c
	cc.t = t
	return &cc
}

// checkingEvery is c with the checks of strict on every response.
func (c *testClient) checkingEvery() *testClient {
	cc := *c
	cc.strict = true
	return &cc
}

// in is c as a client handed the base URL of namespace name sees it.
func (c *testClient) in(name string) *testClient {
	cc := *c
	cc.base = c.base + "/ns/" + name
	return &cc
}

// response is an answer with its body read.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends a request with Content-Type application/json; hdr holds header
// name, value pairs. An empty body sends none.
func (c *testClient) do(method, path, body string, hdr ...string) response {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	return c.stream(method, path, rd, hdr...)
}

// stream is do with a body read from rd; a reader that hides its length
// (see chunked) is sent chunked.
func (c *testClient) stream(method, path string, rd io.Reader, hdr ...string) response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatalf("%s %.200s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %.200s: read body: %v", method, path, err)
	}
	r := response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	if c.strict {
		if ct := resp.Header.Get("Content-Type"); ct != jsonContentType {
			c.t.Errorf("%s %s: Content-Type %q, want %q", method, path, ct, jsonContentType)
		}
		if resp.Header.Get("X-Request-Id") == "" {
			c.t.Errorf("%s %s: no X-Request-Id header", method, path)
		}
		if method != http.MethodHead && (!json.Valid(b) || !utf8.Valid(b)) {
			c.t.Errorf("%s %s: the body is not JSON in UTF-8: %q", method, path, b)
		}
	}
	return r
}

// expect sends a request and fails the test unless it answers status.
func (c *testClient) expect(status int, method, path, body string, hdr ...string) response {
	c.t.Helper()
	r := c.do(method, path, body, hdr...)
	if r.Status != status {
		c.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, status, r.Body)
	}
	return r
}

// getJSON GETs path, expects 200 and decodes the body into v.
func (c *testClient) getJSON(path string, v any) {
	c.t.Helper()
	c.expect(http.StatusOK, http.MethodGet, path, "").decode(c.t, v)
}

func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// healthy checks that GET /__admin/health answers 200 "ok", and returns
// the number of resources it counts.
func (c *testClient) health() int {
	c.t.Helper()
	var h struct {
		Status    string
		Resources int
	}
	c.getJSON("/__admin/health", &h)
	if h.Status != "ok" {
		c.t.Fatalf("health Status %q, want ok", h.Status)
	}
	return h.Resources
}

func (c *testClient) journal() []wireEntry {
	c.t.Helper()
	var j struct{ Requests []wireEntry }
	c.getJSON("/__admin/requests", &j)
	if j.Requests == nil {
		c.t.Fatal("journal Requests is null, want an array")
	}
	return j.Requests
}

// seededResource is a resource as GET /__admin/resources shows it.
type seededResource struct {
	Id, DisplayName, Status string
	FirstName, Surname      *string
	Company, ExternalID     *string
	StatusId                int
	Types                   []struct {
		Id   int
		Type string
	}
	Address json.RawMessage
}

// seed posts items to /__admin/resources and returns them as stored.
func (c *testClient) seed(items string) []seededResource {
	c.t.Helper()
	var seeded struct {
		Total int
		Ids   []string
	}
	c.expect(http.StatusOK, http.MethodPost, "/__admin/resources", items).decode(c.t, &seeded)
	if seeded.Total != len(seeded.Ids) {
		c.t.Fatalf("seed Total %d, but %d Ids", seeded.Total, len(seeded.Ids))
	}
	byID := map[string]seededResource{}
	for _, r := range c.all() {
		byID[r.Id] = r
	}
	out := make([]seededResource, len(seeded.Ids))
	for i, id := range seeded.Ids {
		if out[i] = byID[id]; out[i].Id != id {
			c.t.Fatalf("seeded Id %s is not in GET /__admin/resources", id)
		}
	}
	return out
}

// all reads every resource through GET /__admin/resources.
func (c *testClient) all() []seededResource {
	c.t.Helper()
	var out struct {
		Data  []seededResource
		Total int
	}
	c.expect(http.StatusOK, http.MethodGet, "/__admin/resources", "").decode(c.t, &out)
	if out.Total != len(out.Data) {
		c.t.Fatalf("Total %d, but %d in Data", out.Total, len(out.Data))
	}
	return out.Data
}

// createPerson creates the person first Test and returns it.
func (c *testClient) createPerson(first string) seededResource {
	c.t.Helper()
	var out struct{ Data []seededResource }
	c.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", fmt.Sprintf(`{"FirstName":%q,"Surname":"Test"}`, first)).decode(c.t, &out)
	return out.Data[0]
}

var guidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// create posts body, requires a 200, and returns the new Id and the response
// with that Id replaced by "ID".
func (c *testClient) create(body string) (string, []byte) {
	c.t.Helper()
	r := c.do(http.MethodPost, "/api/v2/resource", body)
	if r.Status != http.StatusOK {
		c.t.Fatalf("create %s: status %d: %s", body, r.Status, r.Body)
	}
	var env struct {
		Data  []struct{ Id string }
		Total int
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || len(env.Data) != 1 || env.Total != 1 {
		c.t.Fatalf("create %s: %s (%v)", body, r.Body, err)
	}
	id := env.Data[0].Id
	if !guidV4.MatchString(id) {
		c.t.Errorf("generated Id %q is not a lower-case hyphenated version-4 GUID", id)
	}
	return id, bytes.Replace(r.Body, []byte(`{"Id":"`+id+`"`), []byte(`{"Id":"ID"`), 1)
}

// eventually polls cond until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("still waiting after %v for %s", timeout, what)
		case <-tick.C:
		}
	}
}

// syncBuffer is a bytes.Buffer that a logger or a child process may write
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// urlQueryEscape escapes a query value as curl --data-urlencode does.
func urlQueryEscape(s string) string {
	return strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", " ", "%20", "#", "%23", "'", "%27", "~", "%7E").Replace(s)
}

// jsonContentType is what every answer but the console's carries.
const jsonContentType = "application/json; charset=utf-8"

// startServer serves a resourcedir configured by cfg (with idSeed as its
// -id-seed) from httptest, for the tests that need one beside the program:
// the tenant that import and compare read.
func startServer(t testing.TB, cfg resourcedir.Config, idSeed *uint64) *testClient {
	t.Helper()
	cfg.IDSeed = idSeed
	srv, err := resourcedir.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return clientAt(t, ts.URL)
}

// snapshotResources counts the resources of the default namespace in the
// snapshot at path, read by a server of the library from a copy (a server
// may hold the file's lock).
func snapshotResources(t testing.TB, path string) (int, error) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	cp := filepath.Join(t.TempDir(), "copy.gob")
	if err := os.WriteFile(cp, b, 0o600); err != nil {
		return 0, err
	}
	srv, err := resourcedir.New(resourcedir.Config{Snapshot: cp})
	if err != nil {
		return 0, err
	}
	defer srv.Close()
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/__admin/health", nil))
	var health struct{ Resources int }
	if err := json.Unmarshal(rec.Body.Bytes(), &health); err != nil {
		return 0, fmt.Errorf("health: %w: %s", err, rec.Body)
	}
	return health.Resources, nil
}

// writeSnapshot writes a snapshot of n generated resources to path, as a
// server of the library does at Close.
func writeSnapshot(t testing.TB, path string, n int) {
	t.Helper()
	var seed bytes.Buffer
	if err := resourcedir.GenerateSeed(&seed, n, 1); err != nil {
		t.Fatal(err)
	}
	srv, err := resourcedir.New(resourcedir.Config{Snapshot: path})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/__admin/resources", &seed)
	req.Header.Set("Content-Type", "application/json")
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("seed: %d %s", rec.Code, rec.Body)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}
