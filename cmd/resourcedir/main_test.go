package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resourcedir/resourcedir"
)

// runIDs seeds two resources without an Id and creates one, and returns
// the three Ids.
func runIDs(e *testClient) []string {
	var ids []string
	for _, r := range e.seed(`[{"Company": "A"}, {"Company": "B"}]`) {
		ids = append(ids, r.Id)
	}
	return append(ids, e.createPerson("C").Id)
}

func TestRunServesAndStops(t *testing.T) {
	t.Parallel()
	p := runStart(t, runArgs(), nil)
	if !strings.HasPrefix(p.url, "http://127.0.0.1:") || strings.HasSuffix(p.url, ":0") {
		t.Errorf("serving address %q", p.url)
	}
	e := clientAt(t, p.url)
	if n := e.health(); n != 0 {
		t.Errorf("%d resources at start", n)
	}
	e.createPerson("Ada")
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
	t.Parallel()
	dir := t.TempDir()
	snap := filepath.Join(dir, "flags.gob")
	p := runStart(t, []string{
		"-addr", "127.0.0.1:0", "-snapshot", snap, "-snapshot-interval", "20ms",
		"-journal-size", "2", "-auth", "ci:s3cret", "-cors", "http://app.test",
		"-max-page-size", "3", "-max-body", "300", "-max-seed-body", "2000",
		"-id-seed", "7", "-log-format", "json",
	}, nil)
	e := clientAt(t, p.url)
	auth := []string{"Authorization", "Basic Y2k6czNjcmV0"} // ci:s3cret

	// -auth
	r := e.expect(http.StatusUnauthorized, http.MethodGet, "/__admin/resources", "")
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
	var seeded struct{ Ids []string }
	e.expect(http.StatusOK, http.MethodPost, "/__admin/resources", `[{"Company":"A"},{"Company":"B"},{"Company":"C"},{"Company":"D"},{"Company":"E"}]`, auth...).decode(t, &seeded)
	// -id-seed: the same ids as a Store with that seed.
	seed := uint64(7)
	ref := startServer(t, resourcedir.DefaultConfig(), &seed)
	for i, r := range ref.seed(`[{"Company":"A"},{"Company":"B"},{"Company":"C"},{"Company":"D"},{"Company":"E"}]`) {
		if seeded.Ids[i] != r.Id {
			t.Errorf("resource %d: Id %s with -id-seed 7, %s from NewStore(7)", i, seeded.Ids[i], r.Id)
		}
	}
	// -max-page-size
	var list struct {
		TotalResults, TotalPages int
		ResourceList             []seededResource
	}
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource?requestParams.pageSize=100", "", auth...).decode(t, &list)
	if list.TotalResults != 5 || list.TotalPages != 2 || len(list.ResourceList) != 3 {
		t.Errorf("-max-page-size 3: %d results, %d pages, %d on the page", list.TotalResults, list.TotalPages, len(list.ResourceList))
	}
	// -max-body
	e.expect(http.StatusRequestEntityTooLarge, http.MethodPost, "/api/v2/resource", `{"Company": "`+strings.Repeat("x", 300)+`"}`, auth...)
	e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", `{"Company": "small"}`, auth...)
	// -journal-size
	var j struct{ Requests []wireEntry }
	e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "", auth...).decode(t, &j)
	if len(j.Requests) != 2 || j.Requests[0].Status != 413 || j.Requests[1].Status != 201 {
		t.Errorf("-journal-size 2: %+v", j.Requests)
	}
	// -snapshot and -snapshot-interval: written in the background.
	eventually(t, 10*time.Second, "the snapshot written by its interval", func() bool {
		n, err := snapshotResources(t, snap)
		return err == nil && n == 6
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
	t.Parallel()
	snap := filepath.Join(t.TempDir(), "dir.gob")
	p := runStart(t, []string{"-addr", "127.0.0.1:0", "-snapshot", snap, "-snapshot-interval", "1h"}, nil)
	e := clientAt(t, p.url)
	id := e.createPerson("Kept").Id
	p.stopClean()
	p = runStart(t, []string{"-addr", "127.0.0.1:0", "-snapshot", snap}, nil)
	e = clientAt(t, p.url)
	all := e.all()
	if len(all) != 1 || all[0].Id != id {
		t.Errorf("after a restart: %+v, want the resource %s", all, id)
	}
	p.stopClean()
}

func TestRunEnvironment(t *testing.T) {
	t.Parallel()
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
	e := clientAt(t, p.url)
	auth := []string{"Authorization", "Basic ZW52OnRvaw=="} // env:tok
	e.expect(http.StatusUnauthorized, http.MethodGet, "/__admin/resources", "")
	var h struct{ Resources int }
	e.expect(http.StatusOK, http.MethodGet, "/__admin/health", "", auth...).decode(t, &h)
	if h.Resources != 2 {
		t.Errorf("RESOURCEDIR_SEED: %d resources, want 2", h.Resources)
	}
	r := e.expect(http.StatusNoContent, http.MethodOptions, "/api/v2/resource", "", "Origin", "http://x.test", "Access-Control-Request-Method", "GET")
	if r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("RESOURCEDIR_CORS: %v", r.Header)
	}
	var list struct{ ResourceList []seededResource }
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource?requestParams.pageSize=10", "", auth...).decode(t, &list)
	if len(list.ResourceList) != 1 {
		t.Errorf("RESOURCEDIR_MAX_PAGE_SIZE 1: %d on a page", len(list.ResourceList))
	}
	e.expect(http.StatusRequestEntityTooLarge, http.MethodPost, "/api/v2/resource", `{"Company": "`+strings.Repeat("x", 200)+`"}`, auth...)
	e.expect(http.StatusRequestEntityTooLarge, http.MethodPost, "/__admin/resources", `[`+strings.Repeat(`{"Company": "A"},`, 60)+`{}]`, auth...)
	var j struct{ Requests []wireEntry }
	e.expect(http.StatusOK, http.MethodGet, "/__admin/requests", "", auth...).decode(t, &j)
	if len(j.Requests) != 1 || j.Requests[0].Status != 413 {
		t.Errorf("RESOURCEDIR_JOURNAL_SIZE 1: %+v", j.Requests)
	}
	var sn struct{ Path string }
	e.expect(http.StatusOK, http.MethodPost, "/__admin/snapshot", "", auth...).decode(t, &sn)
	if sn.Path != env["RESOURCEDIR_SNAPSHOT"] {
		t.Errorf("RESOURCEDIR_SNAPSHOT: snapshot written to %q", sn.Path)
	}
	// The seed's Ids come from the seed file; -id-seed makes the Ids of
	// creations repeat.
	var created struct{ Data []seededResource }
	e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", `{"Company": "Created"}`, auth...).decode(t, &created)
	seed := uint64(5)
	if want := startServer(t, resourcedir.DefaultConfig(), &seed).createPerson("Ref").Id; created.Data[0].Id != want {
		t.Errorf("RESOURCEDIR_ID_SEED 5: Id %s, want %s", created.Data[0].Id, want)
	}
	p.stopClean()
	if !strings.HasPrefix(p.stdout.String(), "{") {
		t.Errorf("RESOURCEDIR_LOG_FORMAT json: %.200s", p.stdout)
	}
}

func TestRunFlagWinsOverEnvironment(t *testing.T) {
	t.Parallel()
	envSnap := filepath.Join(t.TempDir(), "env.gob")
	env := map[string]string{
		"RESOURCEDIR_ADDR":         "203.0.113.1:1", // not ours: listening there would fail
		"RESOURCEDIR_SNAPSHOT":     envSnap,
		"RESOURCEDIR_JOURNAL_SIZE": "1",
		"RESOURCEDIR_AUTH":         "env:tok",
	}
	p := runStart(t, runArgs("-journal-size", "3", "-auth", "flag:tok"), env)
	e := clientAt(t, p.url)
	auth := []string{"Authorization", "Basic ZmxhZzp0b2s="} // flag:tok
	e.expect(http.StatusUnauthorized, http.MethodGet, "/__admin/resources", "", "Authorization", "Basic ZW52OnRvaw==")
	for range 5 {
		e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", auth...)
	}
	var j struct{ Requests []wireEntry }
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
	{"addr-file", "a.url", "b.url", func(o *options) any { return o.addrFile }, "a.url", "b.url"},
	{"version", "true", "false", func(o *options) any { return o.version }, true, false},
	{"linger", "true", "false", func(o *options) any { return o.linger }, true, false},
	{"exit-with-parent", "true", "false", func(o *options) any { return o.exitWithParent }, true, false},
	{"snapshot", "a.gob", "b.gob", func(o *options) any { return o.cfg.Snapshot }, "a.gob", "b.gob"},
	{"snapshot-interval", "3s", "1m", func(o *options) any { return o.cfg.SnapshotInterval }, 3 * time.Second, time.Minute},
	{"seed", "a.json", "b.json", func(o *options) any { return o.cfg.SeedFile }, "a.json", "b.json"},
	{"id-seed", "42", "-3", func(o *options) any { return o.idSeed }, "42", "-3"},
	{"log-format", "json", "text", func(o *options) any { return o.logFormat }, "json", "text"},
	{"log-level", "warn", "debug", func(o *options) any { return o.logLevel }, slog.LevelWarn, slog.LevelDebug},
	{"max-page-size", "7", "8", func(o *options) any { return o.cfg.MaxPageSize }, 7, 8},
	{"max-body", "100", "200", func(o *options) any { return o.cfg.MaxBody }, int64(100), int64(200)},
	{"max-seed-body", "300", "400", func(o *options) any { return o.cfg.MaxSeedBody }, int64(300), int64(400)},
	{"journal-size", "0", "5", func(o *options) any { return o.cfg.JournalSize }, -1, 5},
	{"auth", "u:t", "v:w:x", func(o *options) any { return o.cfg.Auth }, "u:t", "v:w:x"},
	{"cors", "*", "http://app.test, https://b.test:8443/", func(o *options) any { return strings.Join(o.cfg.CORSOrigins, "|") }, "*", "http://app.test|https://b.test:8443"},
	{"namespace-idle", "1h", "90s", func(o *options) any { return o.cfg.NamespaceIdle }, time.Hour, 90 * time.Second},
	{"max-namespaces", "3", "4", func(o *options) any { return o.cfg.MaxNamespaces }, 3, 4},
	{"max-request-bytes", "900", "1000", func(o *options) any { return o.cfg.MaxRequestBytes }, int64(900), int64(1000)},
	{"journal-budget", "700", "800", func(o *options) any { return o.cfg.JournalBudget }, int64(700), int64(800)},
	{"max-fault-bodies", "500", "600", func(o *options) any { return o.cfg.MaxFaultBodies }, int64(500), int64(600)},
	{"filters", "kendo", "assetic", func(o *options) any { return o.cfg.Filters }, "kendo", "assetic"},
	{"service-version", "2023.1.0.0", "1.2.3.4", func(o *options) any { return o.cfg.ServiceVersion }, "2023.1.0.0", "1.2.3.4"},
	{"create-status", "200", "201", func(o *options) any { return o.cfg.CreateStatus }, 200, 201},
	{"tls", "true", "false", func(o *options) any { return o.tls }, true, false},
	{"tls-ca-file", "a.pem", "b.pem", func(o *options) any { return o.tlsCAFile }, "a.pem", "b.pem"},
	{"tls-cert", "a.crt", "b.crt", func(o *options) any { return o.tlsCert }, "a.crt", "b.crt"},
	{"tls-key", "a.key", "b.key", func(o *options) any { return o.tlsKey }, "a.key", "b.key"},
	{"allowed-hosts", "a.test", "b.test,c.test", func(o *options) any { return strings.Join(o.cfg.AllowedHosts, "|") }, "a.test", "b.test|c.test"},
}

func runEnvName(flagName string) string {
	return "RESOURCEDIR_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func TestMainEveryFlagAndItsEnvironmentVariable(t *testing.T) {
	t.Parallel()
	var noEnv []string
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
			o, err := parseOptions([]string{"-" + c.name + "=" + c.value}, noEnv, io.Discard)
			if err != nil {
				t.Fatalf("-%s %s: %v", c.name, c.value, err)
			}
			if got := c.get(o); got != c.want {
				t.Errorf("-%s %s: got %v, want %v", c.name, c.value, got, c.want)
			}
			env := map[string]string{runEnvName(c.name): c.value}
			if actionFlags[c.name] {
				// An action has no variable: RESOURCEDIR_VERSION=v0.3.0
				// in a CI job's environment must not print and exit.
				if _, err := parseOptions(nil, runEnviron(env), io.Discard); err == nil || !strings.Contains(err.Error(), "is an action, given on the command line only") {
					t.Errorf("%s=%s: %v, want a refusal", runEnvName(c.name), c.value, err)
				}
				return
			}
			o, err = parseOptions(nil, runEnviron(env), io.Discard)
			if err != nil {
				t.Fatalf("%s=%s: %v", runEnvName(c.name), c.value, err)
			}
			if got := c.get(o); got != c.want {
				t.Errorf("%s=%s: got %v, want %v", runEnvName(c.name), c.value, got, c.want)
			}
			o, err = parseOptions([]string{"-" + c.name + "=" + c.other}, runEnviron(env), io.Discard)
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
	t.Parallel()
	o, err := parseOptions(nil, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := options{
		addr: "127.0.0.1:8080", logFormat: "text",
		cfg: resourcedir.Config{MaxPageSize: 500, MaxBody: 1 << 20, MaxSeedBody: 64 << 20, JournalSize: 1000, MaxNamespaces: 1000,
			JournalBudget: 32 << 20, MaxRequestBytes: 256 << 20, MaxFaultBodies: 64 << 20, Filters: "assetic",
			ServiceVersion: "2026.4.1.1", CreateStatus: 201},
	}
	want.cfg.Snapshot, want.cfg.SnapshotInterval, want.snapshotDefault = "resourcedir.gob", 10*time.Second, true
	if !reflect.DeepEqual(*o, want) {
		t.Errorf("defaults %+v, want %+v", *o, want)
	}
	// The server's flags alone have a snapshot by default; a resourcedir.Config has none.
	if want.cfg.Snapshot = ""; !reflect.DeepEqual(resourcedir.DefaultConfig(), want.cfg) {
		t.Errorf("DefaultConfig %+v", resourcedir.DefaultConfig())
	}
}

func TestMainBadFlagValues(t *testing.T) {
	t.Parallel()
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
		{[]string{"-no-such-flag"}, nil, "unknown flag -no-such-flag; did you mean -"},
		{[]string{"-snapshot-interval", "5"}, nil, `invalid value "5" for flag -snapshot-interval: a duration needs a unit: 5s for seconds (or ms, m, h)`},
		{nil, map[string]string{"RESOURCEDIR_SNAPSHOT_INTERVAL": "5"}, `environment RESOURCEDIR_SNAPSHOT_INTERVAL="5": a duration needs a unit: 5s`},
		{[]string{"stray"}, nil, `unexpected argument "stray" (flags start with -; to run a command, put -- before it`},
		{[]string{"--"}, nil, "-- must be followed by a command to run"},
		{[]string{"-addr", "127.0.0.1:notaport"}, nil, "listen on 127.0.0.1:notaport"},
		{[]string{"-addr", ""}, nil, "-addr must not be empty"},
		{[]string{"-addr-file", filepath.Join(missing, "url")}, nil, "-addr-file: write " + filepath.Join(missing, "url")},
		{[]string{"-seed", missing}, nil, missing},
		{nil, map[string]string{"RESOURCEDIR_JOURNAL_SIZE": "abc"}, `environment RESOURCEDIR_JOURNAL_SIZE="abc"`},
		{nil, map[string]string{"RESOURCEDIR_MAX_BODY": "0"}, "-max-body must be at least 1"},
		{nil, map[string]string{"RESOURCEDIR_LOG_FORMAT": "yaml"}, "-log-format must be text or json"},
		{nil, map[string]string{"RESOURCEDIR_SNAPSHOT_INTERVAL": "-1s"}, "-snapshot-interval must be positive"},
		{nil, map[string]string{"RESOURCEDIR_ID_SEED": "x"}, "-id-seed must be an integer"},
		{[]string{"-service-version", "2026.4.1"}, nil, `service version "2026.4.1": want four non-negative integers joined by dots`},
		{nil, map[string]string{"RESOURCEDIR_SERVICE_VERSION": "v1.2.3.4"}, `service version "v1.2.3.4"`},
		{[]string{"-create-status", "202"}, nil, "create status 202: want 201 (the real service's) or 200"},
		{nil, map[string]string{"RESOURCEDIR_CREATE_STATUS": "204"}, "create status 204"},
	}
	for _, tt := range tests {
		// A cancelled context: should a bad value be accepted, run returns
		// at once instead of serving.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var stdout, stderr bytes.Buffer
		err := run(ctx, runArgs(tt.args...), runEnviron(tt.env), &stdout, &stderr)
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
	t.Parallel()
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"-h"}, nil, io.Discard, &stderr)
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
	t.Parallel()
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
	t.Parallel()
	p := runStart(t, runArgs("-id-seed", "42"), nil)
	e := clientAt(t, p.url)
	first := runIDs(e)
	for _, id := range first {
		if !guidV4.MatchString(id) {
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
	if second := runIDs(clientAt(t, p.url)); !slices.Equal(first, second) {
		t.Errorf("two runs with -id-seed 42:\n%v\n%v", first, second)
	}
	p.stopClean()

	for _, args := range [][]string{runArgs("-id-seed", "43"), runArgs()} {
		p = runStart(t, args, nil)
		if other := runIDs(clientAt(t, p.url)); slices.Equal(first, other) {
			t.Errorf("%q gave the ids of -id-seed 42", args)
		}
		p.stopClean()
	}
}

func TestRunSeedFileAtBoot(t *testing.T) {
	t.Parallel()
	const id = "6f9619ff-8b86-d011-b42d-00c04fc964ff"
	seedFile := runWriteFile(t, "people.json", `[
		{"Id": "`+strings.ToUpper(id)+`", "FirstName": "Ada", "Surname": "Lovelace", "Types": [{"Type": "Employee"}]},
		{"Company": "Analytical Engines", "Status": "Inactive"},
		{"FirstName": "Grace", "Surname": "Hopper"}
	]`)
	p := runStart(t, runArgs("-seed", seedFile), nil)
	e := clientAt(t, p.url)
	if n := e.health(); n != 3 {
		t.Errorf("%d resources after -seed, want 3", n)
	}
	var list struct {
		TotalResults int
		ResourceList []seededResource
	}
	e.getJSON("/api/v2/resource?requestParams.filters="+urlQueryEscape("Id~eq~'"+id+"'"), &list)
	if list.TotalResults != 1 || list.ResourceList[0].DisplayName != "Ada Lovelace" {
		t.Errorf("filter by the seeded Id: %+v", list)
	}
	p.stopClean()
	if out := p.stdout.String(); !strings.Contains(out, `msg="seed read`) || !strings.Contains(out, "resources=3") {
		t.Errorf("no seeded log line:\n%s", out)
	}
}

func TestRunSeedSkippedWhenSnapshotHasResources(t *testing.T) {
	t.Parallel()
	snap := filepath.Join(t.TempDir(), "dir.gob")
	seedFile := runWriteFile(t, "people.json", `[{"Company": "A"}, {"Company": "B"}]`)
	args := []string{"-addr", "127.0.0.1:0", "-snapshot", snap, "-seed", seedFile}
	p := runStart(t, args, nil)
	e := clientAt(t, p.url)
	e.createPerson("Extra")
	if n := e.health(); n != 3 {
		t.Fatalf("%d resources, want 2 seeded + 1", n)
	}
	p.stopClean() // writes the snapshot

	p = runStart(t, args, nil)
	if n := clientAt(t, p.url).health(); n != 3 {
		t.Errorf("%d resources after a restart with -seed, want the snapshot's 3 (seeded once)", n)
	}
	p.stopClean()
	if out := p.stdout.String(); !strings.Contains(out, `msg="snapshot loaded"`) || !strings.Contains(out, "resources=3") {
		t.Errorf("no loaded log line:\n%s", out)
	}

	// A directory emptied with DELETE /__admin/resources stays empty across
	// a restart (the snapshot keeps it), and a reset brings the seed back.
	p = runStart(t, args, nil)
	e = clientAt(t, p.url)
	e.expect(http.StatusOK, http.MethodDelete, "/__admin/resources", "")
	e.in("t").createPerson("T")
	e.expect(http.StatusOK, http.MethodDelete, "/ns/t/__admin/resources", "")
	e.in("u").health() // used, never written: still the seed after the restart
	p.stopClean()
	p = runStart(t, args, nil)
	e = clientAt(t, p.url)
	for _, c := range []struct {
		ns   string
		want int
	}{{"default", 0}, {"t", 0}, {"u", 2}} {
		if n := e.in(c.ns).health(); n != c.want {
			t.Errorf("/ns/%s: %d resources after a restart, want %d", c.ns, n, c.want)
		}
	}
	e.expect(http.StatusOK, http.MethodPost, "/__admin/reset", "")
	if n := e.health(); n != 2 {
		t.Errorf("%d resources after a reset, want the 2 seeded", n)
	}
	p.stopClean()
}

func TestRunSeedBadFileStops(t *testing.T) {
	t.Parallel()
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
		err := run(ctx, runArgs("-seed", path), nil, &stdout, io.Discard)
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
	t.Parallel()
	p := runStart(t, runArgs(), nil)
	e := clientAt(t, p.url)
	r := e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "", "Origin", "http://app.test")
	for name := range r.Header {
		if strings.HasPrefix(name, "Access-Control-") || name == "Www-Authenticate" {
			t.Errorf("default run sent %s", name)
		}
	}
	p.stopClean()
}

// ---- the built binary: ownership of the snapshot and boot inputs ----

// mainRefused checks that a boot was refused with exit status 1 and a
// message holding every one of want.
func mainRefused(t *testing.T, r binaryRun, want ...string) {
	t.Helper()
	code, stdout, stderr := r.code, r.stdout, r.stderr
	if code != 1 {
		t.Errorf("exit status %d, want 1; stderr: %s", code, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not say %q: %s", w, stderr)
		}
	}
	if strings.Contains(stdout, "msg=serving") {
		t.Errorf("served despite the refusal:\n%s", stdout)
	}
}

func TestMainBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	bin := builtBinary(t)
	t.Run("OneServerPerSnapshot", func(t *testing.T) { mainTestOneServerPerSnapshot(t, bin) })
	t.Run("NonRegularSnapshot", func(t *testing.T) { mainTestNonRegularSnapshot(t, bin) })
	t.Run("SparseSnapshot", func(t *testing.T) { mainTestSparseSnapshot(t, bin) })
	t.Run("SeedFromDevZero", func(t *testing.T) { mainTestSeedFromDevZero(t, bin) })
	t.Run("AddrFile", func(t *testing.T) { mainTestAddrFile(t, bin) })
	t.Run("Version", func(t *testing.T) { mainTestVersion(t, bin) })
}

// Two servers on one snapshot file lost acknowledged writes silently: the
// second one now refuses to boot, naming the file and the first one's PID,
// also when it reaches the file through a symbolic link; once the first
// one stops, or is killed, the file is free again.
func mainTestOneServerPerSnapshot(t *testing.T, bin string) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shared.gob")
	first := startBinary(t, bin, dir, "-snapshot", path)
	pid := strconv.Itoa(first.cmd.Process.Pid)
	if b, err := os.ReadFile(path + ".lock"); err != nil || string(b) != pid+"\n" {
		t.Errorf("lock file: %q %v, want the PID %s", b, err, pid)
	}
	link := filepath.Join(t.TempDir(), "link.gob")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{path, "shared.gob", link} {
		r := runBinary(t, dir, nil, "", "-addr", "127.0.0.1:0", "-snapshot", name)
		mainRefused(t, r, "snapshot "+name, "process "+pid, path+".lock")
	}
	// The first server was not disturbed.
	if code, body, err := doJSON(http.DefaultClient, http.MethodPost, first.url+"/api/v2/resource", []byte(`{"Company":"Kept"}`)); err != nil || code != http.StatusCreated {
		t.Fatalf("create on the first server: %d %v %s", code, err, body)
	}
	if code := first.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("first server exit status %d; stderr: %s", code, first.stderr.String())
	}
	if _, err := os.Stat(path + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file stayed after a clean stop: %v", err)
	}

	second := startBinary(t, bin, dir, "-snapshot", link)
	if got := len(second.listAll(t)); got != 1 {
		t.Errorf("the second server serves %d resources, want the first one's 1", got)
	}
	second.cmd.Process.Kill() // the kernel lets go of the lock
	<-second.done
	third := startBinary(t, bin, dir, "-snapshot", path)
	third.stop(syscall.SIGTERM)
}

// A FIFO blocked the boot forever (and SIGTERM with it); a folder or a
// device is no snapshot either. Each is refused at once, named.
func mainTestNonRegularSnapshot(t *testing.T, bin string) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.gob")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "folder.gob")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	linkToFifo := filepath.Join(dir, "link-to-pipe.gob")
	if err := os.Symlink(fifo, linkToFifo); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, kind string }{
		{fifo, "a named pipe (FIFO), not a regular file"},
		{linkToFifo, "a named pipe (FIFO), not a regular file"},
		{folder, "a folder, not a regular file"},
		{os.DevNull, "a device, not a regular file"},
	} {
		r := runBinary(t, dir, nil, "", "-addr", "127.0.0.1:0", "-snapshot", tc.path)
		mainRefused(t, r, "snapshot "+tc.path, tc.kind)
	}
}

// A valid header on a sparse 60 GB file ended in "fatal error: runtime: out
// of memory": the file's size decided the size of a buffer. It is refused,
// with status 1, before anything that large is allocated.
func mainTestSparseSnapshot(t *testing.T, bin string) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sparse.gob")
	writeSnapshot(t, path, 3)
	if err := os.Truncate(path, 60<<30); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, dir, nil, "", "-addr", "127.0.0.1:0", "-snapshot", path)
	// Which of the refusals depends on the checksum's bytes, read as a record
	// where the file goes on: each names the file's size.
	mainRefused(t, r, "load snapshot "+path, "corrupt or truncated", "64424509440")
}

// -seed /dev/zero grew without bound: the -max-seed-body limit applies.
func mainTestSeedFromDevZero(t *testing.T, bin string) {
	r := runBinary(t, t.TempDir(), nil, "", "-addr", "127.0.0.1:0", "-snapshot", "off", "-seed", "/dev/zero", "-max-seed-body", "1000000")
	mainRefused(t, r, "seed /dev/zero: larger than the -max-seed-body limit of 1000000 bytes")
}

// -addr-file: with -addr 127.0.0.1:0 a harness waits for the file, reads
// the URL, and finds the server there; the file goes when the server does.
func mainTestAddrFile(t *testing.T, bin string) {
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "url")
	for _, format := range []string{"text", "json"} {
		// Not startBinary: the -addr-file, not the log, is what tells
		// this harness the address.
		cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-addr-file", addrFile, "-snapshot", "off", "-log-format", format)
		cmd.Env = binaryEnv()
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { cmd.Process.Kill() })
		var url []byte
		eventually(t, 15*time.Second, "the -addr-file", func() bool {
			var err error
			url, err = os.ReadFile(addrFile)
			return err == nil
		})
		if !regexp.MustCompile(`^http://127\.0\.0\.1:[1-9][0-9]*\n$`).Match(url) {
			t.Fatalf("-addr-file holds %q, want one line http://127.0.0.1:PORT", url)
		}
		resp, err := http.Get(strings.TrimSpace(string(url)) + "/__admin/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("health at the -addr-file URL: %d", resp.StatusCode)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if err := <-done; err != nil {
			t.Fatalf("exit: %v; stderr: %s", err, stderr.String())
		}
		if _, err := os.Stat(addrFile); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("-addr-file left behind at exit: %v", err)
		}
	}
}

func mainTestVersion(t *testing.T, bin string) {
	r := runBinary(t, t.TempDir(), nil, "", "-version")
	code, stdout, stderr := r.code, r.stdout, r.stderr
	if code != 0 || stderr != "" {
		t.Fatalf("-version: exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) < 2 || !regexp.MustCompile(`^resourcedir \S+$`).MatchString(lines[0]) ||
		lines[len(lines)-1] != runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("-version printed %q", stdout)
	}
	if len(lines) == 3 && !regexp.MustCompile(`^revision [0-9a-f]{40} \(\d{4}-\d\d-\d\dT[0-9:]+Z\)( with uncommitted changes)?$`).MatchString(lines[1]) {
		t.Errorf("-version revision line %q", lines[1])
	}
}

// ---- run: the snapshot's path and folder, -snapshot off, -seed ----

// -snapshot off and RESOURCEDIR_SNAPSHOT=off keep everything in memory (an
// empty variable cannot say ""); a file really named off is ./off.
func TestRunSnapshotOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"-snapshot off", []string{"-addr", "127.0.0.1:0", "-snapshot", "off"}, nil},
		{"RESOURCEDIR_SNAPSHOT=off", []string{"-addr", "127.0.0.1:0"}, map[string]string{"RESOURCEDIR_SNAPSHOT": "off"}},
		{`-snapshot ""`, []string{"-addr", "127.0.0.1:0", "-snapshot", ""}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			p := runStart(t, tc.args, tc.env)
			e := clientAt(t, p.url)
			e.createPerson("Ephemeral")
			e.expect(http.StatusConflict, http.MethodPost, "/__admin/snapshot", "")
			p.stopClean()
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("files written in the working directory: %v", entries)
			}
			if !strings.Contains(p.stdout.String(), "snapshots off") {
				t.Errorf("no 'snapshots off' line:\n%s", p.stdout)
			}
		})
	}
	t.Run("./off", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		p := runStart(t, []string{"-addr", "127.0.0.1:0", "-snapshot", "./off"}, nil)
		clientAt(t, p.url).createPerson("Kept")
		p.stopClean()
		if n, err := snapshotResources(t, filepath.Join(dir, "off")); err != nil || n != 1 {
			t.Errorf("./off: %d resources, %v; want a snapshot of 1", n, err)
		}
	})
}

// A snapshot folder that is missing or cannot be written stopped nothing:
// the server failed at every tick and lost everything at exit. The boot
// stops now, naming the folder; so does a path that is not a regular file.
func TestRunSnapshotPathChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := runWriteFile(t, "plain.txt", "not a folder")
	folder := filepath.Join(dir, "folder.gob")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{filepath.Join(dir, "missing", "rd.gob"), "the folder " + filepath.Join(dir, "missing") + " does not exist"},
		{filepath.Join(file, "rd.gob"), file + " is not a folder"},
		// sysfs takes no new files, even from root: a folder that cannot
		// be written wherever the test runs.
		{"/sys/rd.gob", "the folder /sys cannot be written"},
		{folder, "it is a folder, not a regular file"},
		{os.DevNull, "it is a device, not a regular file"},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var stdout, stderr bytes.Buffer
		err := run(ctx, []string{"-addr", "127.0.0.1:0", "-snapshot", tt.path}, nil, &stdout, &stderr)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "snapshot "+tt.path+": ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("-snapshot %s: %v, want an error naming it and saying %q", tt.path, err, tt.want)
		}
		if strings.Contains(stdout.String(), "serving") {
			t.Errorf("-snapshot %s: served", tt.path)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing folder was created: %v", err)
	}
}

// A symbolic link as -snapshot was replaced by a regular file at the first
// write; now the file it points to is replaced, in its own folder.
func TestRunSnapshotThroughSymlink(t *testing.T) {
	t.Parallel()
	linkDir, dataDir := t.TempDir(), t.TempDir()
	target := filepath.Join(dataDir, "real.gob")
	link := filepath.Join(linkDir, "rd.gob")
	rel, err := filepath.Rel(linkDir, target)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, link); err != nil { // dangling until the first write
		t.Fatal(err)
	}
	for i, name := range []string{"First", "Second"} {
		p := runStart(t, []string{"-addr", "127.0.0.1:0", "-snapshot", link, "-snapshot-interval", "1h"}, nil)
		e := clientAt(t, p.url)
		if n := e.health(); n != i {
			t.Errorf("boot %d: %d resources, want %d", i+1, n, i)
		}
		e.createPerson(name)
		p.stopClean()
		info, err := os.Lstat(link)
		if err != nil || info.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("after write %d the link is no longer a link: %v %v", i+1, info.Mode(), err)
		}
		if dest, _ := os.Readlink(link); dest != rel {
			t.Errorf("the link points to %q, want %q", dest, rel)
		}
		if n, err := snapshotResources(t, target); err != nil || n != i+1 {
			t.Errorf("target after write %d: %d resources, %v", i+1, n, err)
		}
		if entries, _ := os.ReadDir(linkDir); len(entries) != 1 {
			t.Errorf("files beside the link: %v", entries)
		}
		if entries, _ := os.ReadDir(dataDir); len(entries) != 1 {
			t.Errorf("temporary files left beside the target: %v", entries)
		}
	}
}

// -seed read the whole file whatever its size: now at most -max-seed-body
// bytes are read, from a regular file or a pipe alike.
func TestRunSeedFileBounded(t *testing.T) {
	t.Parallel()
	big := runWriteFile(t, "big.json", `[`+strings.Repeat(`{"Company": "A"},`, 100)+`{}]`)
	for _, path := range []string{big, "/dev/zero"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var stdout bytes.Buffer
		err := run(ctx, runArgs("-seed", path, "-max-seed-body", "1000"), nil, &stdout, io.Discard)
		cancel()
		want := "seed " + path + ": larger than the -max-seed-body limit of 1000 bytes"
		if err == nil || err.Error() != want {
			t.Errorf("-seed %s: %v, want %q", path, err, want)
		}
	}

	// A FIFO is read (-seed <(generate) works), within the limit.
	fifo := filepath.Join(t.TempDir(), "seed.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		io.WriteString(f, `[{"Company": "Piped"}, {"Company": "In"}]`)
	}()
	p := runStart(t, runArgs("-seed", fifo, "-max-seed-body", "1000"), nil)
	if n := clientAt(t, p.url).health(); n != 2 {
		t.Errorf("%d resources seeded from a FIFO, want 2", n)
	}
	p.stopClean()

	// A FIFO that no one writes to does not hold the boot past its end.
	idle := filepath.Join(t.TempDir(), "idle.fifo")
	if err := syscall.Mkfifo(idle, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, runArgs("-seed", idle), nil, io.Discard, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "seed "+idle) {
			t.Errorf("run on an idle FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run blocked on a FIFO seed after its context ended")
	}
	// Unblock the abandoned open so no goroutine outlives the test.
	if f, err := os.OpenFile(idle, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// A RESOURCEDIR_ variable with a typo passed silently; it stops the start,
// naming the closest flag, as a mistyped flag does (TestMainStartupErrors
// runs it through the binary).
func TestRunRefusesUnknownEnvironmentVariables(t *testing.T) {
	t.Parallel()
	tests := []struct {
		environ []string
		want    []string
	}{
		{[]string{"RESOURCEDIR_SNAPSHOT_INTERVALL=5s"}, []string{"environment RESOURCEDIR_SNAPSHOT_INTERVALL names no flag; did you mean RESOURCEDIR_SNAPSHOT_INTERVAL (-snapshot-interval)?"}},
		{[]string{"RESOURCEDIR_ADR=127.0.0.1:1"}, []string{"environment RESOURCEDIR_ADR names no flag; did you mean RESOURCEDIR_ADDR (-addr)?"}},
		{[]string{"RESOURCEDIR_MAXBODY=5", "RESOURCEDIR_JOURNALSIZE=1"}, []string{
			"environment RESOURCEDIR_MAXBODY names no flag; did you mean RESOURCEDIR_MAX_BODY (-max-body)?",
			"environment RESOURCEDIR_JOURNALSIZE names no flag; did you mean RESOURCEDIR_JOURNAL_SIZE (-journal-size)?",
		}},
		{[]string{"RESOURCEDIR_ADDR_FILE=x", "RESOURCEDIR_MAX_SEED_BODY=5", "PATH=/bin", "resourcedir_addr=x", "RESOURCEDIR_SNAPSHOT=", "RESOURCEDIR_URL=http://x:1"}, nil},
	}
	for _, tt := range tests {
		if got := unknownEnvVars(tt.environ); !slices.Equal(got, tt.want) {
			t.Errorf("unknownEnvVars(%q) = %q, want %q", tt.environ, got, tt.want)
		}
		_, err := parseOptions(nil, tt.environ, io.Discard)
		if want := strings.Join(tt.want, "; "); (err == nil) != (want == "") || err != nil && err.Error() != want {
			t.Errorf("parseOptions with %q: %v, want %q", tt.environ, err, want)
		}
	}
}

// A failed POST /__admin/snapshot answered the internal path and the OS's
// error text; it answers the reason, and the log has the path and the error.
func TestRunFailedSnapshotRequestHidesThePath(t *testing.T) {
	t.Parallel()
	sub := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sub, "rd.gob")
	p := runStart(t, []string{"-addr", "127.0.0.1:0", "-snapshot", path, "-snapshot-interval", "1h"}, nil)
	e := clientAt(t, p.url)
	e.createPerson("Doomed")
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	r := e.expect(http.StatusInternalServerError, http.MethodPost, "/__admin/snapshot", "")
	var body struct{ Message string }
	r.decode(t, &body)
	want := "The snapshot could not be written (the snapshot's folder no longer exists); the previous snapshot is kept, and the server log says more (request id " + r.Header.Get("X-Request-Id") + ")."
	if body.Message != want {
		t.Errorf("message %q, want %q", body.Message, want)
	}
	for _, leak := range []string{sub, "no such file", "open "} {
		if strings.Contains(string(r.Body), leak) {
			t.Errorf("the answer shows %q: %s", leak, r.Body)
		}
	}
	if !strings.Contains(p.stdout.String(), path) {
		t.Errorf("the log does not name %s:\n%s", path, p.stdout)
	}
	if err := os.Mkdir(sub, 0o755); err != nil { // so that the final write works
		t.Fatal(err)
	}
	p.stopClean()
}

// Two servers in one process collide on the lock too (flock is per open
// file), and the second one's refusal names the file and this PID.
func TestRunSecondServerOnSnapshotRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "one.gob")
	p := runStart(t, []string{"-addr", "127.0.0.1:0", "-snapshot", path}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var stdout bytes.Buffer
	err := run(ctx, []string{"-addr", "127.0.0.1:0", "-snapshot", path}, nil, &stdout, io.Discard)
	want := fmt.Sprintf("snapshot %s: another resourcedir, process %d, is using it (lock file %s.lock); stop it or give this one another -snapshot", path, os.Getpid(), path)
	if err == nil || err.Error() != want {
		t.Errorf("second run: %v, want %q", err, want)
	}
	if strings.Contains(stdout.String(), "serving") {
		t.Error("the second server served")
	}
	p.stopClean()
	p = runStart(t, []string{"-addr", "127.0.0.1:0", "-snapshot", path}, nil)
	p.stopClean()
}

// ---- resourcedir -- COMMAND, through the built binary ----

func TestMainCommand(t *testing.T) {
	t.Parallel()
	// What a command sees of the URL, without printing the port.
	const checkURL = `case "$RESOURCEDIR_URL" in http://127.0.0.1:[1-9]*) echo "url ok" ;; *) echo "url $RESOURCEDIR_URL" ;; esac`
	for _, tt := range []struct {
		name           string
		env            []string
		stdin          string
		args           []string
		code           int
		stdout, stderr string
	}{
		{name: "health", args: []string{"--", "sh", "-c", `curl -fsS "$RESOURCEDIR_URL/__admin/health"`},
			stdout: `{"Status":"ok","Resources":0}`},
		{name: "exit status", args: []string{"--", "sh", "-c", "exit 3"}, code: 3,
			stderr: "resourcedir: sh exited with status 3; no namespace received requests\n"},
		{name: "url", args: []string{"--", "sh", "-c", checkURL}, stdout: "url ok\n"},
		// Set by an outer resourcedir -- ...: replaced, and no warning.
		{name: "url replaced", env: []string{"RESOURCEDIR_URL=http://elsewhere:1"}, args: []string{"--", "sh", "-c", checkURL}, stdout: "url ok\n"},
		{name: "arguments verbatim", args: []string{"--", "sh", "-c", `printf '[%s]' "$@"`, "sh", "a b", "", "$HOME", "--"},
			stdout: "[a b][][$HOME][--]"},
		{name: "stdin", stdin: "piped\n", args: []string{"--", "cat"}, stdout: "piped\n"},
		{name: "stderr", args: []string{"--", "sh", "-c", "echo oops >&2; exit 1"}, code: 1,
			stderr: "oops\nresourcedir: sh exited with status 1; no namespace received requests\n"},
		{name: "killed", args: []string{"--", "sh", "-c", "kill -KILL $$"}, code: 128 + 9,
			stderr: "resourcedir: sh exited with status 137; no namespace received requests\n"},
		{name: "not found", args: []string{"--", "no-such-command", "arg"}, code: 127,
			stderr: "resourcedir: cannot run no-such-command: executable file not found in $PATH\n"},
		{name: "not executable", args: []string{"--", "/dev/null"}, code: 127,
			stderr: "resourcedir: cannot run /dev/null: permission denied\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			got := runBinary(t, dir, tt.env, tt.stdin, tt.args...)
			if got.code != tt.code || got.stdout != tt.stdout || stripLogTime(got.stderr) != tt.stderr || got.served == "" {
				t.Errorf("exit %d, stdout %q, stderr %q, start line for %q; want %d, %q, %q and a start line", got.code, got.stdout, got.stderr, got.served, tt.code, tt.stdout, tt.stderr)
			}
			// -snapshot off is the default: nothing is left behind.
			if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
				t.Errorf("the working folder holds %v (%v), want nothing", entries, err)
			}
		})
	}
}

// The server's log goes to stderr in the command mode: stdout is the
// command's alone.
func TestMainCommandLogsToStderr(t *testing.T) {
	t.Parallel()
	got := runBinary(t, t.TempDir(), []string{"RESOURCEDIR_LOG_LEVEL=info"}, "", "--", "sh", "-c", "echo out")
	if got.code != 0 || got.stdout != "out\n" || got.served == "" || !strings.Contains(got.stderr, "level=INFO msg=serving addr="+got.served+"\n") {
		t.Errorf("exit %d, stdout %q, stderr %q, served %q", got.code, got.stdout, got.stderr, got.served)
	}
}

// stripLogTime drops the time= of text log lines, the one part that
// changes from run to run.
func stripLogTime(s string) string {
	return regexp.MustCompile(`(?m)^time=\S+ `).ReplaceAllString(s, "")
}

// The defaults of the command mode give way to a flag or a variable; a
// snapshot, when asked for, is written at the stop and read at the next.
func TestMainCommandOverrides(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	create := `curl -fsS -o /dev/null -H 'Content-Type: application/json' -d '{"Company": "Kept"}' "$RESOURCEDIR_URL/api/v2/resource"`
	first := runBinary(t, dir, nil, "", "-snapshot", "state.gob", "--", "sh", "-c", create)
	if first.code != 0 || first.stdout != "" || first.stderr != "" {
		t.Fatalf("first run: %+v", first)
	}
	second := runBinary(t, dir, []string{"RESOURCEDIR_SNAPSHOT=state.gob", "RESOURCEDIR_LOG_LEVEL=info"}, "",
		"--", "sh", "-c", `curl -fsS "$RESOURCEDIR_URL/__admin/health"`)
	if second.code != 0 || !strings.HasPrefix(second.stdout, `{"Status":"ok","Resources":1,"Snapshot":{"LastWrite":"`) {
		t.Errorf("second run: exit %d, stdout %q; want 0 and the first run's resource", second.code, second.stdout)
	}
	if !regexp.MustCompile(`(?m)^time=\S+ level=INFO msg=serving addr=http://127\.0\.0\.1:[1-9][0-9]*$`).MatchString(second.stderr) {
		t.Errorf("RESOURCEDIR_LOG_LEVEL=info: no serving line on stderr:\n%s", second.stderr)
	}
}

// SIGINT and SIGTERM sent to resourcedir reach the command, which decides
// how to end; resourcedir exits with its status.
func TestMainCommandSignals(t *testing.T) {
	t.Parallel()
	const loop = "echo ready; while :; do sleep 0.1; done"
	for _, tt := range []struct {
		name   string
		sig    syscall.Signal
		script string
		code   int
		stdout string
	}{
		{"TERM trapped", syscall.SIGTERM, "trap 'echo TERM; exit 7' TERM; " + loop, 7, "ready\nTERM\n"},
		{"INT trapped", syscall.SIGINT, "trap 'echo INT; exit 9' INT; " + loop, 9, "ready\nINT\n"},
		{"TERM", syscall.SIGTERM, "echo ready; exec sleep 60", 128 + 15, "ready\n"},
		{"INT", syscall.SIGINT, "echo ready; exec sleep 60", 128 + 2, "ready\n"},
		// A terminal that closes, or a wrapper passing its own SIGHUP on.
		{"HUP trapped", syscall.SIGHUP, "trap 'echo HUP; exit 5' HUP; " + loop, 5, "ready\nHUP\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Not startBinary: the signal goes to the command after --,
			// whose output, not the server's log, says it is ready.
			cmd := exec.Command(builtBinary(t), "--", "sh", "-c", tt.script)
			cmd.Dir = t.TempDir()
			cmd.Env = binaryEnv()
			var stdout, stderr syncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }() //nolint:errcheck // ProcessState says how it ended
			t.Cleanup(func() { cmd.Process.Kill(); <-done })
			eventually(t, 30*time.Second, "the command to start", func() bool { return stdout.String() == "ready\n" })
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("resourcedir did not exit within 30s of %v; stderr: %s", tt.sig, stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != tt.code || stdout.String() != tt.stdout || !startLine.MatchString(stderr.String()) ||
				len(startLine.FindString(stderr.String())) != len(stderr.String()) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q and the start line alone", code, stdout.String(), stderr.String(), tt.code, tt.stdout)
			}
		})
	}
}

// run with a command, in the process: cancelling its context asks the
// command to stop with SIGTERM, and run returns the command's status.
func TestRunCommandCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	args := []string{"--", "sh", "-c", "trap 'echo stopped; exit 5' TERM; echo ready; while :; do sleep 0.1; done"}
	go func() { done <- run(ctx, args, []string{"PATH=" + os.Getenv("PATH")}, &stdout, &stderr) }()
	eventually(t, 30*time.Second, "the command to start", func() bool { return stdout.String() == "ready\n" })
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return within 30s of its context's end")
	}
	if exitCode(err) != 5 || stdout.String() != "ready\nstopped\n" || !startLine.MatchString(stderr.String()) || len(startLine.FindString(stderr.String())) != len(stderr.String()) {
		t.Errorf("run: %v (exit %d), stdout %q, stderr %q; want exit 5 and ready, stopped", err, exitCode(err), stdout.String(), stderr.String())
	}
}

// A start that fails says, in one line, what is wrong and what to do, and
// runs no command.
func TestMainStartupErrors(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() }) // after the parallel subtests
	addr := held.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	const garbage = "not a snapshot\n"
	ran := []string{"--", "sh", "-c", "echo ran"}
	for _, tt := range []struct {
		name string
		env  []string
		args []string
		line string
	}{
		{"unknown flag", nil, []string{"-adr", "127.0.0.1:0"},
			"unknown flag -adr; did you mean -addr? (resourcedir -help lists every flag)"},
		{"unknown flag with a command", nil, append([]string{"--snapshot-intervall", "5s"}, ran...),
			"unknown flag -snapshot-intervall; did you mean -snapshot-interval? (resourcedir -help lists every flag)"},
		{"-port", nil, []string{"-port", "8080"},
			"unknown flag -port; did you mean -addr 127.0.0.1:8080? (resourcedir -help lists every flag)"},
		{"-port=", nil, []string{"-snapshot", "off", "--port=9000"},
			"unknown flag -port; did you mean -addr 127.0.0.1:9000? (resourcedir -help lists every flag)"},
		{"RESOURCEDIR_VERSION", []string{"RESOURCEDIR_VERSION=v0.3.0"}, []string{"-snapshot", "off"},
			"environment RESOURCEDIR_VERSION names no flag: -version is an action, given on the command line only (resourcedir -version)"},
		{"RESOURCEDIR_VERSION=1", []string{"RESOURCEDIR_VERSION=1"}, ran,
			"environment RESOURCEDIR_VERSION names no flag: -version is an action, given on the command line only (resourcedir -version)"},
		{"RESOURCEDIR_HELP", []string{"RESOURCEDIR_HELP=true"}, []string{"-snapshot", "off"},
			"environment RESOURCEDIR_HELP names no flag: -help is an action, given on the command line only (resourcedir -help)"},
		{"unknown flag=value", nil, []string{"-max-namespace=5"},
			"unknown flag -max-namespace; did you mean -max-namespaces? (resourcedir -help lists every flag)"},
		{"duration without a unit", nil, []string{"-snapshot-interval", "5"},
			`invalid value "5" for flag -snapshot-interval: a duration needs a unit: 5s for seconds (or ms, m, h)`},
		{"fraction without a unit", nil, []string{"-snapshot-interval=1.5"},
			`invalid value "1.5" for flag -snapshot-interval: a duration needs a unit: 1.5s for seconds (or ms, m, h)`},
		{"duration without a unit from the environment", []string{"RESOURCEDIR_SNAPSHOT_INTERVAL=30"}, nil,
			`environment RESOURCEDIR_SNAPSHOT_INTERVAL="30": a duration needs a unit: 30s for seconds (or ms, m, h)`},
		{"port in use", nil, []string{"-addr", addr, "-snapshot", "off", "-log-level", "warn"},
			fmt.Sprintf("listen on %s: port %s is already in use; choose another with -addr 127.0.0.1:PORT, or -addr 127.0.0.1:0 for a free one", addr, port)},
		{"port in use with a command", nil, append([]string{"-addr", addr}, ran...),
			fmt.Sprintf("listen on %s: port %s is already in use; choose another with -addr 127.0.0.1:PORT, or -addr 127.0.0.1:0 for a free one", addr, port)},
		{"unreadable snapshot", nil, []string{"-addr", "127.0.0.1:0", "-snapshot", "bad.gob", "-log-level", "warn"},
			"load snapshot bad.gob: not a resourcedir snapshot (bad magic); the file is left untouched: move it aside (mv bad.gob bad.gob.bad) to start empty, or run with -snapshot off"},
		{"unreadable snapshot with a command", nil, append([]string{"-snapshot", "bad.gob"}, ran...),
			"load snapshot bad.gob: not a resourcedir snapshot (bad magic); the file is left untouched: move it aside (mv bad.gob bad.gob.bad) to start empty, or run with -snapshot off"},
		{"a -cors origin without a scheme", nil, []string{"-snapshot", "off", "-cors", "http://localhost:3000,localhost:5173"},
			`invalid value "http://localhost:3000,localhost:5173" for flag -cors: "localhost:5173" is not an origin: give scheme://host[:port], such as http://localhost:3000, or * for any`},
		{"a -cors origin with a path", []string{"RESOURCEDIR_CORS=http://localhost:3000/app"}, []string{"-snapshot", "off"},
			`environment RESOURCEDIR_CORS="http://localhost:3000/app": "http://localhost:3000/app" is not an origin: give scheme://host[:port], such as http://localhost:3000, or * for any`},
		{"unknown variable", []string{"RESOURCEDIR_SEEED=people.json"}, []string{"-snapshot", "off"},
			"environment RESOURCEDIR_SEEED names no flag; did you mean RESOURCEDIR_SEED (-seed)?"},
		{"unknown variable with a command", []string{"RESOURCEDIR_SNAPSHOT_INTERVALL=5s"}, ran,
			"environment RESOURCEDIR_SNAPSHOT_INTERVALL names no flag; did you mean RESOURCEDIR_SNAPSHOT_INTERVAL (-snapshot-interval)?"},
		{"no command after --", nil, []string{"-snapshot", "off", "--"},
			"-- must be followed by a command to run, as in resourcedir -- go test ./..."},
		{"command without --", nil, []string{"go", "test"},
			`unexpected argument "go" (flags start with -; to run a command, put -- before it: resourcedir -- go test ./...)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			bad := filepath.Join(dir, "bad.gob")
			if err := os.WriteFile(bad, []byte(garbage), 0o644); err != nil {
				t.Fatal(err)
			}
			got := runBinary(t, dir, tt.env, "", tt.args...)
			if want := "resourcedir: " + tt.line + "\n"; got.code != 1 || got.stderr != want || got.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1, no stdout, stderr:\n%s", got.code, got.stdout, got.stderr, want)
			}
			if b, err := os.ReadFile(bad); err != nil || string(b) != garbage {
				t.Errorf("the snapshot was touched: %q %v", b, err)
			}
		})
	}
}

// binaryRun is how one run of the binary ended.
type binaryRun struct {
	code           int
	stdout, stderr string
	// served is the URL of the line a run with a command writes first to
	// standard error, which stderr then lacks; "" when there was none.
	served string
}

// startLine is the line that a run with a command writes at start.
var startLine = regexp.MustCompile(`(?m)^resourcedir: serving (http://127\.0\.0\.1:[0-9]+) for \S+; console (http://127\.0\.0\.1:[0-9]+)/\n`)

// runBinary runs the built resourcedir to its end in dir with args, the
// environment without RESOURCEDIR_ variables plus env, and stdin. A run
// that should end must not hang: the deadline kills it and fails the test.
func runBinary(t *testing.T, dir string, env []string, stdin string, args ...string) binaryRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, builtBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(binaryEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("resourcedir %q did not exit within 60s; stderr: %s", args, stderr.String())
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("resourcedir %q: %v", args, err)
	}
	r := binaryRun{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
	if m := startLine.FindStringSubmatchIndex(r.stderr); m != nil && r.stderr[m[2]:m[3]] == r.stderr[m[4]:m[5]] {
		r.served, r.stderr = r.stderr[m[2]:m[3]], r.stderr[:m[0]]+r.stderr[m[1]:]
	}
	return r
}

func runWriteFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestHelpListsSubcommands(t *testing.T) {
	t.Parallel()
	var usage bytes.Buffer
	if err := run(context.Background(), []string{"-help"}, nil, &bytes.Buffer{}, &usage); err == nil {
		t.Fatal("-help returned no error")
	}
	for _, want := range []string{"resourcedir generate -n N [-rand-seed S]", "resourcedir import -from URL", "resourcedir compare -from URL", "resourcedir health [URL]", "  -filters dialect"} {
		if !strings.Contains(usage.String(), want) {
			t.Errorf("-help does not mention %q:\n%s", want, usage.String())
		}
	}
}

// TestRunCommandToldWhenServerStops: when the server stops for any reason
// but main's own signal (which the command has already), the command run
// after -- is sent a SIGTERM, whatever the context's cause says (found in
// review: a cause of the caller's own let the command run on).
func TestRunCommandToldWhenServerStops(t *testing.T) {
	t.Parallel()
	for _, cause := range []error{nil, errors.New("the caller stopped the server")} {
		t.Run(fmt.Sprint(cause), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			up, w := io.Pipe()
			go func() {
				// The command says it is up; then the server stops.
				buf := make([]byte, 3)
				if _, err := io.ReadFull(up, buf); err == nil {
					cancel(cause)
				}
				io.Copy(io.Discard, up) //nolint:errcheck // draining
			}()
			status, err := runCommand(ctx, []string{"sh", "-c", "echo up; exec sleep 60"}, os.Environ(), nil, w, io.Discard, nil)
			w.Close()
			if err != nil || status != 128+int(syscall.SIGTERM) {
				t.Errorf("status %d, err %v; want %d (SIGTERM), nil", status, err, 128+int(syscall.SIGTERM))
			}
		})
	}
}

func TestFiltersFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
		err  string
	}{
		{nil, "assetic", ""},
		{[]string{"-filters", "kendo"}, "kendo", ""},
		{[]string{"-filters=assetic"}, "assetic", ""},
		{[]string{"-filters", "odata"}, "", `invalid value "odata" for flag -filters: unknown filter dialect "odata": use assetic (what the real service documents) or kendo (the whole Kendo grammar)`},
	}
	for _, tt := range tests {
		o, err := parseOptions(tt.args, nil, io.Discard)
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err {
				t.Errorf("%q: %v, want %s", tt.args, err, tt.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.args, err)
		case o.cfg.Filters != tt.want:
			t.Errorf("%q: Filters %q, want %q", tt.args, o.cfg.Filters, tt.want)
		}
	}
}

// TestRunServiceVersionAndCreateStatus: the two flags of the real service's
// answers, as a user's command line sets them.
func TestRunServiceVersionAndCreateStatus(t *testing.T) {
	t.Parallel()
	p := runStart(t, []string{"-addr", "127.0.0.1:0", "-snapshot", "off", "-service-version", "2023.1.2.70000", "-create-status", "200"}, nil)
	e := clientAt(t, p.url)
	r := e.expect(http.StatusOK, http.MethodGet, "/api/v2/version", "")
	if want := `{"Major":2023,"Minor":1,"Build":2,"Revision":70000,"MajorRevision":1,"MinorRevision":4464}`; string(r.Body) != want {
		t.Errorf("version %s, want %s", r.Body, want)
	}
	e.expect(http.StatusOK, http.MethodPost, "/api/v2/resource", `{"Company": "Two hundred"}`)
	e.expect(http.StatusOK, http.MethodPost, "/ns/other/api/v2/resource", `{"Company": "Two hundred"}`)
}

// -journal-size 0 kept a journal of 1000: the program turned 0 into "off"
// (-1), and the library's defaults, applied twice, turned that back into
// the default. The journal is off through the binary's own flags.
func TestRunJournalSizeZeroTurnsTheJournalOff(t *testing.T) {
	t.Parallel()
	p := runStart(t, runArgs("-journal-size", "0"), nil)
	c := clientAt(t, p.url)
	c.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
	var j struct {
		Requests []wireEntry
		Count    int
		Journal  string
	}
	c.getJSON("/__admin/requests", &j)
	if j.Journal != "off" || j.Count != 0 || len(j.Requests) != 0 {
		t.Errorf("-journal-size 0: Journal %q, Count %d, %d entries; want off and none", j.Journal, j.Count, len(j.Requests))
	}
	p.stopClean()
}

// A newcomer's first start in a folder they cannot write was refused
// naming a path they never chose; it says it is the default and the way
// out.
func TestMainDefaultSnapshotUnwritable(t *testing.T) {
	t.Parallel()
	// sysfs takes no new files, even from root.
	got := runBinary(t, "/sys", nil, "", "-addr", "127.0.0.1:0")
	want := "resourcedir: snapshot resourcedir.gob: the folder /sys cannot be written (permission denied); " +
		"resourcedir.gob in the working directory is the default snapshot: run with -snapshot off to keep everything in memory, or -snapshot PATH to write it elsewhere\n"
	if got.code != 1 || got.stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and:\n%s", got.code, got.stderr, want)
	}
}

// In the image, a /data that the container's user cannot write (a bind
// mount of a folder of the host's user) says whom the image runs as and
// how to give it the folder.
func TestMainImageDataUnwritable(t *testing.T) {
	t.Parallel()
	denied := func(string) error { return fs.ErrPermission }
	err := checkSnapshotFolder("/data/resourcedir.gob", false, denied)
	want := "snapshot /data/resourcedir.gob: the folder /data cannot be written (permission denied) by uid " + strconv.Itoa(os.Getuid()) +
		"; the image runs as 65532:65532: give it the folder, as in podman run -v DIR:/data:U, or chown 65532:65532 DIR (or run with -snapshot off)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	// Elsewhere, a path of one's own is the library's to check.
	if err := checkSnapshotFolder("/srv/x.gob", false, denied); err != nil {
		t.Errorf("a chosen path outside /data: %v", err)
	}
	if err := checkSnapshotFolder("/data/x.gob", false, func(string) error { return nil }); err != nil {
		t.Errorf("a writable /data: %v", err)
	}
}
