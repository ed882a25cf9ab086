package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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
	getenv := func(name string) string { return env[name] }
	go func() { p.done <- run(ctx, args, getenv, p.stdout, p.stderr) }()
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

// runArgs puts the flags every test needs (a free port, no snapshot file
// in the working directory) before args, which may override them.
func runArgs(args ...string) []string {
	return append([]string{"-addr", "127.0.0.1:0", "-snapshot", ""}, args...)
}

func runWriteFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runIDs seeds two resources without an Id and creates one, and returns
// the three Ids.
func runIDs(e *admEnv) []string {
	var ids []string
	for _, r := range e.seed(`[{"Company": "A"}, {"Company": "B"}]`) {
		ids = append(ids, r.Id)
	}
	return append(ids, e.create("C").Id)
}

func TestRunServesAndStops(t *testing.T) {
	p := runStart(t, runArgs(), nil)
	if !strings.HasPrefix(p.url, "http://127.0.0.1:") || strings.HasSuffix(p.url, ":0") {
		t.Errorf("serving address %q", p.url)
	}
	e := admAt(t, p.url)
	if n := e.health(); n != 0 {
		t.Errorf("%d resources at start", n)
	}
	e.create("Ada")
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	p.stopClean()
	out := p.stdout.String()
	for _, want := range []string{"snapshots off", "msg=request", "shutting down"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if _, err := http.Get(p.url + "/__admin/health"); err == nil {
		t.Error("still answering after run returned")
	}
}

func TestRunFlagsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "flags.gob")
	p := runStart(t, []string{
		"-addr", "127.0.0.1:0", "-snapshot", snap, "-snapshot-interval", "20ms",
		"-journal-size", "2", "-auth", "ci:s3cret", "-cors", "http://app.test",
		"-max-page-size", "3", "-max-body", "300", "-max-seed-body", "2000",
		"-id-seed", "7", "-log-format", "json",
	}, nil)
	e := admAt(t, p.url)
	auth := []string{"Authorization", "Basic Y2k6czNjcmV0"} // ci:s3cret

	// -auth
	r := e.expect(http.StatusUnauthorized, http.MethodGet, "/__admin/health", "")
	if r.Header.Get("WWW-Authenticate") != `Basic realm="resourcedir"` {
		t.Errorf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
	}
	e.expect(http.StatusOK, http.MethodGet, "/__admin/health", "", auth...)
	// -cors, and its preflight without credentials
	r = e.expect(http.StatusNoContent, http.MethodOptions, "/api/v2/resource", "", "Origin", "http://app.test", "Access-Control-Request-Method", "POST")
	if r.Header.Get("Access-Control-Allow-Origin") != "http://app.test" {
		t.Errorf("preflight headers %v", r.Header)
	}
	// -max-seed-body
	big := `[` + strings.Repeat(`{"Company": "A"},`, 200) + `{"Company": "A"}]`
	e.expect(http.StatusRequestEntityTooLarge, http.MethodPost, "/__admin/resources", big, auth...)
	var seeded struct{ Data []admResource }
	e.expect(http.StatusOK, http.MethodPost, "/__admin/resources", `[{"Company":"A"},{"Company":"B"},{"Company":"C"},{"Company":"D"},{"Company":"E"}]`, auth...).decode(t, &seeded)
	// -id-seed: the same ids as a Store with that seed.
	seed := uint64(7)
	ref := admStart(t, DefaultConfig(), &seed)
	for i, r := range ref.seed(`[{"Company":"A"},{"Company":"B"},{"Company":"C"},{"Company":"D"},{"Company":"E"}]`) {
		if seeded.Data[i].Id != r.Id {
			t.Errorf("resource %d: Id %s with -id-seed 7, %s from NewStore(7)", i, seeded.Data[i].Id, r.Id)
		}
	}
	// -max-page-size
	var list struct {
		TotalResults, TotalPages int
		ResourceList             []admResource
	}
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource?requestParams.pageSize=100", "", auth...).decode(t, &list)
	if list.TotalResults != 5 || list.TotalPages != 2 || len(list.ResourceList) != 3 {
		t.Errorf("-max-page-size 3: %d results, %d pages, %d on the page", list.TotalResults, list.TotalPages, len(list.ResourceList))
	}
	// -max-body
	e.expect(http.StatusRequestEntityTooLarge, http.MethodPost, "/api/v2/resource", `{"Company": "`+strings.Repeat("x", 300)+`"}`, auth...)
	e.expect(http.StatusOK, http.MethodPost, "/api/v2/resource", `{"Company": "small"}`, auth...)
	// -journal-size
	var j struct{ Requests []journalEntry }
	e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "", auth...).decode(t, &j)
	if len(j.Requests) != 2 || j.Requests[0].Status != 413 || j.Requests[1].Status != 200 {
		t.Errorf("-journal-size 2: %+v", j.Requests)
	}
	// -snapshot and -snapshot-interval: written in the background.
	admEventually(t, 10*time.Second, "the snapshot written by its interval", func() bool {
		res, err := readSnapshotFile(snap)
		return err == nil && len(res) == 6
	})
	var sn struct {
		Path      string
		Resources int
	}
	e.expect(http.StatusOK, http.MethodPost, "/__admin/snapshot", "", auth...).decode(t, &sn)
	if sn.Path != snap || sn.Resources != 6 {
		t.Errorf("POST /__admin/snapshot: %+v", sn)
	}
	p.stopClean()
	// -log-format json: every line is a JSON object.
	lines := strings.Split(strings.TrimSpace(p.stdout.String()), "\n")
	for _, line := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("-log-format json wrote %q: %v", line, err)
		}
	}
	if len(lines) < 10 {
		t.Errorf("only %d log lines", len(lines))
	}
}

func TestRunSnapshotWrittenAtShutdownAndLoaded(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "dir.gob")
	p := runStart(t, []string{"-addr", "127.0.0.1:0", "-snapshot", snap, "-snapshot-interval", "1h"}, nil)
	e := admAt(t, p.url)
	id := e.create("Kept").Id
	p.stopClean()
	p = runStart(t, []string{"-addr", "127.0.0.1:0", "-snapshot", snap}, nil)
	e = admAt(t, p.url)
	var all []admResource
	e.getJSON("/__admin/resources", &all)
	if len(all) != 1 || all[0].Id != id {
		t.Errorf("after a restart: %+v, want the resource %s", all, id)
	}
	p.stopClean()
}

func TestRunEnvironment(t *testing.T) {
	dir := t.TempDir()
	seedFile := runWriteFile(t, "people.json", `[{"FirstName": "Ada", "Surname": "Lovelace"}, {"Company": "Acme"}]`)
	env := map[string]string{
		"RESOURCEDIR_ADDR":              "127.0.0.1:0",
		"RESOURCEDIR_SNAPSHOT":          filepath.Join(dir, "env.gob"),
		"RESOURCEDIR_SNAPSHOT_INTERVAL": "1h",
		"RESOURCEDIR_SEED":              seedFile,
		"RESOURCEDIR_ID_SEED":           "5",
		"RESOURCEDIR_LOG_FORMAT":        "json",
		"RESOURCEDIR_MAX_PAGE_SIZE":     "1",
		"RESOURCEDIR_MAX_BODY":          "200",
		"RESOURCEDIR_MAX_SEED_BODY":     "1000",
		"RESOURCEDIR_JOURNAL_SIZE":      "1",
		"RESOURCEDIR_AUTH":              "env:tok",
		"RESOURCEDIR_CORS":              "*",
	}
	p := runStart(t, nil, env)
	e := admAt(t, p.url)
	auth := []string{"Authorization", "Basic ZW52OnRvaw=="} // env:tok
	e.expect(http.StatusUnauthorized, http.MethodGet, "/__admin/health", "")
	var h struct{ Resources int }
	e.expect(http.StatusOK, http.MethodGet, "/__admin/health", "", auth...).decode(t, &h)
	if h.Resources != 2 {
		t.Errorf("RESOURCEDIR_SEED: %d resources, want 2", h.Resources)
	}
	r := e.expect(http.StatusNoContent, http.MethodOptions, "/api/v2/resource", "", "Origin", "http://x.test", "Access-Control-Request-Method", "GET")
	if r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("RESOURCEDIR_CORS: %v", r.Header)
	}
	var list struct{ ResourceList []admResource }
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource?requestParams.pageSize=10", "", auth...).decode(t, &list)
	if len(list.ResourceList) != 1 {
		t.Errorf("RESOURCEDIR_MAX_PAGE_SIZE 1: %d on a page", len(list.ResourceList))
	}
	e.expect(http.StatusRequestEntityTooLarge, http.MethodPost, "/api/v2/resource", `{"Company": "`+strings.Repeat("x", 200)+`"}`, auth...)
	e.expect(http.StatusRequestEntityTooLarge, http.MethodPost, "/__admin/resources", `[`+strings.Repeat(`{"Company": "A"},`, 60)+`{}]`, auth...)
	var j struct{ Requests []journalEntry }
	e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "", auth...).decode(t, &j)
	if len(j.Requests) != 1 || j.Requests[0].Status != 413 {
		t.Errorf("RESOURCEDIR_JOURNAL_SIZE 1: %+v", j.Requests)
	}
	var sn struct{ Path string }
	e.expect(http.StatusOK, http.MethodPost, "/__admin/snapshot", "", auth...).decode(t, &sn)
	if sn.Path != env["RESOURCEDIR_SNAPSHOT"] {
		t.Errorf("RESOURCEDIR_SNAPSHOT: snapshot written to %q", sn.Path)
	}
	var all []admResource
	e.expect(http.StatusOK, http.MethodGet, "/__admin/resources", "", auth...).decode(t, &all)
	seed := uint64(5)
	ref := admStart(t, DefaultConfig(), &seed)
	for i, r := range ref.seed(`[{"FirstName": "Ada", "Surname": "Lovelace"}, {"Company": "Acme"}]`) {
		if all[i].Id != r.Id {
			t.Errorf("RESOURCEDIR_ID_SEED 5: Id %s, want %s", all[i].Id, r.Id)
		}
	}
	p.stopClean()
	if !strings.HasPrefix(p.stdout.String(), "{") {
		t.Errorf("RESOURCEDIR_LOG_FORMAT json: %.200s", p.stdout)
	}
}

func TestRunFlagWinsOverEnvironment(t *testing.T) {
	envSnap := filepath.Join(t.TempDir(), "env.gob")
	env := map[string]string{
		"RESOURCEDIR_ADDR":         "203.0.113.1:1", // not ours: listening there would fail
		"RESOURCEDIR_SNAPSHOT":     envSnap,
		"RESOURCEDIR_JOURNAL_SIZE": "1",
		"RESOURCEDIR_AUTH":         "env:tok",
	}
	p := runStart(t, runArgs("-journal-size", "3", "-auth", "flag:tok"), env)
	e := admAt(t, p.url)
	auth := []string{"Authorization", "Basic ZmxhZzp0b2s="} // flag:tok
	e.expect(http.StatusUnauthorized, http.MethodGet, "/__admin/health", "", "Authorization", "Basic ZW52OnRvaw==")
	for range 5 {
		e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", auth...)
	}
	var j struct{ Requests []journalEntry }
	e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "", auth...).decode(t, &j)
	if len(j.Requests) != 3 {
		t.Errorf("-journal-size 3 over RESOURCEDIR_JOURNAL_SIZE 1: %d entries", len(j.Requests))
	}
	e.expect(http.StatusConflict, http.MethodPost, "/__admin/snapshot", "", auth...) // -snapshot "" won
	p.stopClean()
	if _, err := os.Stat(envSnap); err == nil {
		t.Error("the snapshot named by the environment was written despite -snapshot \"\"")
	}
}

// runFlagCase is one flag: a value, how to read it back from the options,
// and a second value to show that the command line wins.
type runFlagCase struct {
	name         string
	value, other string
	get          func(*options) any
	want, wantOt any
}

var runFlagCases = []runFlagCase{
	{"addr", "127.0.0.1:9", "0.0.0.0:10", func(o *options) any { return o.addr }, "127.0.0.1:9", "0.0.0.0:10"},
	{"snapshot", "a.gob", "b.gob", func(o *options) any { return o.snapshotPath }, "a.gob", "b.gob"},
	{"snapshot-interval", "3s", "1m", func(o *options) any { return o.snapshotInterval }, 3 * time.Second, time.Minute},
	{"seed", "a.json", "b.json", func(o *options) any { return o.seedFile }, "a.json", "b.json"},
	{"id-seed", "42", "-3", func(o *options) any { return o.idSeed }, "42", "-3"},
	{"log-format", "json", "text", func(o *options) any { return o.logFormat }, "json", "text"},
	{"log-level", "warn", "debug", func(o *options) any { return o.logLevel }, slog.LevelWarn, slog.LevelDebug},
	{"max-page-size", "7", "8", func(o *options) any { return o.cfg.MaxPageSize }, 7, 8},
	{"max-body", "100", "200", func(o *options) any { return o.cfg.MaxBody }, int64(100), int64(200)},
	{"max-seed-body", "300", "400", func(o *options) any { return o.cfg.MaxSeedBody }, int64(300), int64(400)},
	{"journal-size", "0", "5", func(o *options) any { return o.cfg.JournalSize }, 0, 5},
	{"auth", "u:t", "v:w:x", func(o *options) any { return o.cfg.Auth }, "u:t", "v:w:x"},
	{"cors", "*", "http://app.test", func(o *options) any { return o.cfg.CORSOrigin }, "*", "http://app.test"},
}

func runEnvName(flagName string) string {
	return "RESOURCEDIR_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func TestMainEveryFlagAndItsEnvironmentVariable(t *testing.T) {
	noEnv := func(string) string { return "" }
	// Every flag that parseOptions defines has a case above.
	var usage bytes.Buffer
	if _, err := parseOptions([]string{"-h"}, noEnv, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v, want flag.ErrHelp", err)
	}
	defined := regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(usage.String(), -1)
	if len(defined) == 0 {
		t.Fatalf("no flags in the usage:\n%s", usage.String())
	}
	for _, m := range defined {
		if !slices.ContainsFunc(runFlagCases, func(c runFlagCase) bool { return c.name == m[1] }) {
			t.Errorf("flag -%s has no test case", m[1])
		}
	}

	for _, c := range runFlagCases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseOptions([]string{"-" + c.name, c.value}, noEnv, io.Discard)
			if err != nil {
				t.Fatalf("-%s %s: %v", c.name, c.value, err)
			}
			if got := c.get(o); got != c.want {
				t.Errorf("-%s %s: got %v, want %v", c.name, c.value, got, c.want)
			}
			env := map[string]string{runEnvName(c.name): c.value}
			o, err = parseOptions(nil, func(k string) string { return env[k] }, io.Discard)
			if err != nil {
				t.Fatalf("%s=%s: %v", runEnvName(c.name), c.value, err)
			}
			if got := c.get(o); got != c.want {
				t.Errorf("%s=%s: got %v, want %v", runEnvName(c.name), c.value, got, c.want)
			}
			o, err = parseOptions([]string{"-" + c.name + "=" + c.other}, func(k string) string { return env[k] }, io.Discard)
			if err != nil {
				t.Fatalf("-%s=%s with %s=%s: %v", c.name, c.other, runEnvName(c.name), c.value, err)
			}
			if got := c.get(o); got != c.wantOt {
				t.Errorf("-%s=%s with %s=%s: got %v; the command line must win", c.name, c.other, runEnvName(c.name), c.value, got)
			}
		})
	}
}

func TestMainDefaults(t *testing.T) {
	o, err := parseOptions(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := options{
		addr: "127.0.0.1:8080", snapshotPath: "resourcedir.gob", snapshotInterval: 10 * time.Second, logFormat: "text",
		cfg: Config{MaxPageSize: 500, MaxBody: 1 << 20, MaxSeedBody: 64 << 20, JournalSize: 1000},
	}
	if *o != want {
		t.Errorf("defaults %+v, want %+v", *o, want)
	}
	if DefaultConfig() != want.cfg {
		t.Errorf("DefaultConfig %+v", DefaultConfig())
	}
}

func TestMainBadFlagValues(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.json")
	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-journal-size", "-1"}, nil, "-journal-size must be 0 or more"},
		{[]string{"-journal-size", "many"}, nil, `invalid value "many" for flag -journal-size`},
		{[]string{"-max-page-size", "0"}, nil, "-max-page-size must be at least 1"},
		{[]string{"-max-body", "0"}, nil, "-max-body must be at least 1"},
		{[]string{"-max-body", "1MiB"}, nil, "-max-body"},
		{[]string{"-max-seed-body", "-5"}, nil, "-max-seed-body must be at least 1"},
		{[]string{"-auth", "nocolon"}, nil, "-auth must be user:token"},
		{[]string{"-snapshot-interval", "0s"}, nil, "-snapshot-interval must be positive"},
		{[]string{"-snapshot-interval", "soon"}, nil, `invalid value "soon" for flag -snapshot-interval`},
		{[]string{"-log-format", "xml"}, nil, "-log-format must be text or json"},
		{[]string{"-log-level", "INFO+2"}, nil, `invalid value "INFO+2" for flag -log-level: want debug, info, warn or error`},
		{nil, map[string]string{"RESOURCEDIR_LOG_LEVEL": "verbose"}, `environment RESOURCEDIR_LOG_LEVEL="verbose"`},
		{[]string{"-id-seed", "abc"}, nil, "-id-seed must be an integer"},
		{[]string{"-id-seed", "1.5"}, nil, "-id-seed must be an integer"},
		{[]string{"-no-such-flag"}, nil, "flag provided but not defined: -no-such-flag"},
		{[]string{"stray"}, nil, `unexpected argument "stray"`},
		{[]string{"-addr", "127.0.0.1:notaport"}, nil, "listen on 127.0.0.1:notaport"},
		{[]string{"-seed", missing}, nil, missing},
		{nil, map[string]string{"RESOURCEDIR_JOURNAL_SIZE": "abc"}, `environment RESOURCEDIR_JOURNAL_SIZE="abc"`},
		{nil, map[string]string{"RESOURCEDIR_MAX_BODY": "0"}, "-max-body must be at least 1"},
		{nil, map[string]string{"RESOURCEDIR_LOG_FORMAT": "yaml"}, "-log-format must be text or json"},
		{nil, map[string]string{"RESOURCEDIR_SNAPSHOT_INTERVAL": "-1s"}, "-snapshot-interval must be positive"},
		{nil, map[string]string{"RESOURCEDIR_ID_SEED": "x"}, "-id-seed must be an integer"},
	}
	for _, tt := range tests {
		// A cancelled context: should a bad value be accepted, run returns
		// at once instead of serving.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var stdout, stderr bytes.Buffer
		err := run(ctx, runArgs(tt.args...), func(k string) string { return tt.env[k] }, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q %v: error %v, want one containing %q", tt.args, tt.env, err, tt.want)
			continue
		}
		if exitCode(err) != 1 {
			t.Errorf("%q: exit code %d, want 1", tt.args, exitCode(err))
		}
		if strings.Contains(stdout.String(), "serving") {
			t.Errorf("%q: served despite the error", tt.args)
		}
	}
}

func TestMainHelp(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"-h"}, func(string) string { return "" }, io.Discard, &stderr)
	if !errors.Is(err, flag.ErrHelp) || exitCode(err) != 0 {
		t.Errorf("-h: %v (exit %d), want flag.ErrHelp and exit 0", err, exitCode(err))
	}
	for _, want := range []string{"-addr", "-id-seed", "-journal-size", "-cors"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("usage lacks %s:\n%s", want, stderr.String())
		}
	}
}

func TestMainParseIDSeed(t *testing.T) {
	if p, err := parseIDSeed(""); p != nil || err != nil {
		t.Errorf(`parseIDSeed(""): %v %v, want nil nil`, p, err)
	}
	for in, want := range map[string]uint64{"0": 0, "42": 42, "-1": ^uint64(0), "9223372036854775807": 1<<63 - 1} {
		p, err := parseIDSeed(in)
		if err != nil || p == nil || *p != want {
			t.Errorf("parseIDSeed(%q): %v %v, want %d", in, p, err, want)
		}
	}
}

func TestRunIDSeedIdenticalAcrossRuns(t *testing.T) {
	p := runStart(t, runArgs("-id-seed", "42"), nil)
	e := admAt(t, p.url)
	first := runIDs(e)
	for _, id := range first {
		if !admGUIDv4.MatchString(id) {
			t.Errorf("Id %q is not a lower-case v4 GUID", id)
		}
	}
	// After a reset the sequence starts again.
	e.expect(http.StatusOK, http.MethodPost, "/__admin/reset", "")
	if again := runIDs(e); !slices.Equal(first, again) {
		t.Errorf("after a reset:\n%v\n%v", first, again)
	}
	p.stopClean()

	p = runStart(t, runArgs("-id-seed", "42"), nil)
	if second := runIDs(admAt(t, p.url)); !slices.Equal(first, second) {
		t.Errorf("two runs with -id-seed 42:\n%v\n%v", first, second)
	}
	p.stopClean()

	for _, args := range [][]string{runArgs("-id-seed", "43"), runArgs()} {
		p = runStart(t, args, nil)
		if other := runIDs(admAt(t, p.url)); slices.Equal(first, other) {
			t.Errorf("%q gave the ids of -id-seed 42", args)
		}
		p.stopClean()
	}
}

func TestRunSeedFileAtBoot(t *testing.T) {
	const id = "6f9619ff-8b86-d011-b42d-00c04fc964ff"
	seedFile := runWriteFile(t, "people.json", `[
		{"Id": "`+strings.ToUpper(id)+`", "FirstName": "Ada", "Surname": "Lovelace", "Types": [{"Type": "Employee"}]},
		{"Company": "Analytical Engines", "Status": "Inactive"},
		{"FirstName": "Grace", "Surname": "Hopper"}
	]`)
	p := runStart(t, runArgs("-seed", seedFile), nil)
	e := admAt(t, p.url)
	if n := e.health(); n != 3 {
		t.Errorf("%d resources after -seed, want 3", n)
	}
	var list struct {
		TotalResults int
		ResourceList []admResource
	}
	e.getJSON("/api/v2/resource?requestParams.filters="+urlQueryEscape("Id~eq~'"+id+"'"), &list)
	if list.TotalResults != 1 || list.ResourceList[0].DisplayName != "Ada Lovelace" {
		t.Errorf("filter by the seeded Id: %+v", list)
	}
	p.stopClean()
	if out := p.stdout.String(); !strings.Contains(out, "msg=seeded") || !strings.Contains(out, "resources=3") {
		t.Errorf("no seeded log line:\n%s", out)
	}
}

func TestRunSeedSkippedWhenSnapshotHasResources(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "dir.gob")
	seedFile := runWriteFile(t, "people.json", `[{"Company": "A"}, {"Company": "B"}]`)
	args := []string{"-addr", "127.0.0.1:0", "-snapshot", snap, "-seed", seedFile}
	p := runStart(t, args, nil)
	e := admAt(t, p.url)
	e.create("Extra")
	if n := e.health(); n != 3 {
		t.Fatalf("%d resources, want 2 seeded + 1", n)
	}
	p.stopClean() // writes the snapshot

	p = runStart(t, args, nil)
	if n := admAt(t, p.url).health(); n != 3 {
		t.Errorf("%d resources after a restart with -seed, want the snapshot's 3 (seeded once)", n)
	}
	p.stopClean()
	if out := p.stdout.String(); !strings.Contains(out, "seed file skipped") {
		t.Errorf("no skipped log line:\n%s", out)
	}

	// An empty snapshot is an empty store: the seed loads again.
	p = runStart(t, args, nil)
	e = admAt(t, p.url)
	e.expect(http.StatusOK, http.MethodDelete, "/__admin/resources", "")
	p.stopClean()
	p = runStart(t, args, nil)
	if n := admAt(t, p.url).health(); n != 2 {
		t.Errorf("%d resources after a restart on an empty snapshot, want the 2 seeded", n)
	}
	p.stopClean()
}

func TestRunSeedBadFileStops(t *testing.T) {
	long := strings.Repeat("x", 51)
	tests := []struct {
		name, content string
		want          []string
	}{
		{"invalid-item.json", `[{"Company": "ok"}, {"FirstName": "` + long + `", "Company": "Acme"}]`, []string{"[1].FirstName", "51"}},
		{"bad-id.json", `[{"Company": "ok"}, {"Company": "x"}, {"Id": "nope", "Company": "y"}]`, []string{"[2].Id", "not a GUID"}},
		{"duplicate.json", `[{"Id": "6f9619ff-8b86-d011-b42d-00c04fc964ff", "Company": "a"}, {"Id": "6F9619FF-8B86-D011-B42D-00C04FC964FF", "Company": "b"}]`, []string{"[1].Id", "item 0"}},
		{"not-json.json", `[{"Company": "a"},`, []string{"not valid JSON"}},
		{"object.json", `{"Company": "a"}`, []string{"JSON array"}},
	}
	for _, tt := range tests {
		path := runWriteFile(t, tt.name, tt.content)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var stdout bytes.Buffer
		err := run(ctx, runArgs("-seed", path), func(string) string { return "" }, &stdout, io.Discard)
		if err == nil {
			t.Errorf("%s: run returned nil", tt.name)
			continue
		}
		for _, want := range append([]string{path}, tt.want...) {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not contain %q", tt.name, err, want)
			}
		}
		if strings.Contains(stdout.String(), "serving") {
			t.Errorf("%s: served despite a bad seed", tt.name)
		}
	}
}

// TestRunAuthAndCORSOffByDefault: with neither flag, no credentials are
// needed and no CORS headers are sent.
func TestRunAuthAndCORSOffByDefault(t *testing.T) {
	p := runStart(t, runArgs(), nil)
	e := admAt(t, p.url)
	r := e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", "Origin", "http://app.test")
	for name := range r.Header {
		if strings.HasPrefix(name, "Access-Control-") || name == "Www-Authenticate" {
			t.Errorf("default run sent %s", name)
		}
	}
	p.stopClean()
}
