package main

// Named after no source file: runs the examples and flag table of README.md.

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resourcedir/resourcedir"
)

// The recipes of README.md and docs/ each follow a "<!-- readme-test:
// NAME -->" line; TestReadmeExamples reads them (docsSnippet, in
// docs_test.go) and runs them as written, so the documentation cannot rot.

// readmeCommand returns the line of the README's "run" snippet that holds
// part: the command line a user types.
func readmeCommand(t *testing.T, part string) string {
	t.Helper()
	for _, line := range strings.Split(docsSnippet(t, "run"), "\n") {
		if strings.Contains(line, part) {
			return line
		}
	}
	t.Fatalf("the README's run snippet has no line with %q", part)
	return ""
}

// readmeManyTests is a package of 32 parallel tests on docs/go.md's
// recipe (its people and createResource), each a user's test of a client:
// creates retried through a 503, a filtered and paged list, a PUT, and the
// journal. They call RunT, and after the README's swap ConnectT.
const readmeManyTests = `package client_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/resourcedir/resourcedir"
)

func send(t *testing.T, method, target, body string, out any) int {
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
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

func TestMany(t *testing.T) {
	for i := range 32 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			dir := resourcedir.RunT(t, people)
			dir.AddFault(resourcedir.Fault{Method: "POST", Path: "/api/v2/resource", Status: 503, Times: 1})
			for j := range 3 {
				body := fmt.Sprintf(` + "`" + `{"FirstName": "Test %d", "Surname": "Many %d"}` + "`" + `, i, j)
				if status, err := createResource(dir.URL, body); err != nil || status != http.StatusCreated {
					t.Fatalf("create %d: %d %v", j, status, err)
				}
			}
			var page struct {
				TotalResults, TotalPages int
				ResourceList             []map[string]any
			}
			query := "requestParams.filters=" + url.QueryEscape("Surname~startswith~'many'") +
				"&requestParams.sorts=Surname-desc&requestParams.pageSize=2&requestParams.page=2"
			if status := send(t, "GET", dir.URL+"/api/v2/resource?"+query, "", &page); status != http.StatusOK ||
				page.TotalResults != 3 || page.TotalPages != 2 || len(page.ResourceList) != 1 || page.ResourceList[0]["Surname"] != "Many 0" {
				t.Fatalf("list: %d %+v", status, page)
			}
			r := page.ResourceList[0]
			r["Status"] = "Inactive"
			body, _ := json.Marshal(r)
			var updated map[string]any
			if status := send(t, "PUT", dir.URL+"/api/v2/resource/"+r["Id"].(string), string(body), &updated); status != http.StatusOK || updated["Status"] != "Inactive" {
				t.Fatalf("update: %d %+v", status, updated)
			}
			sent := dir.Requests(resourcedir.RequestFilter{Method: "POST"})
			if len(sent) != 4 || sent[0].Delivered != 503 || sent[1].Delivered != 201 || sent[1].Fault != nil {
				t.Errorf("the creates: %+v", sent)
			}
			if all := dir.Requests(resourcedir.RequestFilter{}); len(all) != 6 {
				t.Errorf("the journal holds %d requests, want this test's 6", len(all))
			}
		})
	}
}
`

// readmeSwap is docs/go.md's one change that runs the Go recipe against a
// server in another process.
var readmeSwap = [2]string{"resourcedir.RunT(t, people)", "resourcedir.ConnectT(t)"}

func TestReadmeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("the documentation's recipes build and run modules of their own for minutes; they run without -short, as in CI")
	}
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	checkout, err := filepath.Abs(docsRoot)
	if err != nil {
		t.Fatal(err)
	}

	// Every snippet of docsRunSnippets is read by a subtest below; the
	// check at the end makes sure none was forgotten.
	read := map[string]bool{}
	snippet := func(t *testing.T, name string) string {
		t.Helper()
		read[name] = true
		return docsSnippet(t, name)
	}
	command := func(t *testing.T, part string) string {
		t.Helper()
		read["run"] = true
		return readmeCommand(t, part)
	}
	defer func() {
		if strings.Contains(flag.Lookup("test.run").Value.String(), "/") {
			return // some subtests were chosen with -run: the others read theirs
		}
		for _, name := range docsRunSnippets {
			if !read[name] {
				t.Errorf("the snippet %q was never run", name)
			}
		}
	}()

	// The README's install line, run in the checkout as written; the one
	// substitution is GOBIN, a temporary folder rather than the user's
	// $(go env GOPATH)/bin. Every recipe then finds that resourcedir first
	// on its PATH.
	bin := filepath.Join(tmp, "bin")
	install := exec.CommandContext(ctx, "sh", "-c", snippet(t, "install"))
	install.Dir, install.Env = checkout, append(binaryEnv(), "GOBIN="+bin, "GOWORK=off")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("the README's install line: %v\n%s", err, out)
	}
	env := readmePath(binaryEnv(), bin)
	readmeSeed := snippet(t, "seed")

	// run runs a command line of the documentation with sh in dir, and
	// returns its output; it fails the test unless the command succeeds.
	run := func(t *testing.T, dir, line string, extraEnv ...string) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Dir = dir
		cmd.Env = append(slices.Clone(env), extraEnv...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		return string(out)
	}
	wantCounts := func(t *testing.T, out string, counts map[string]int) {
		t.Helper()
		for text, n := range counts {
			if got := strings.Count(out, text); got != n {
				t.Errorf("the output holds %q %d times, want %d:\n%s", text, got, n, out)
			}
		}
	}
	// wantLine: beside the server's line on standard error, the recipe
	// printed want, a line of its own.
	wantLine := func(t *testing.T, out, want string) {
		t.Helper()
		for _, line := range strings.Split(out, "\n") {
			if strings.TrimRight(line, "\r") == want {
				return
			}
		}
		t.Errorf("the output has no line %q:\n%s", want, out)
	}
	wantIn := func(t *testing.T, doc, text string) {
		t.Helper()
		if !strings.Contains(docsRead(t, doc), text) {
			t.Fatalf("%s no longer says %q", doc, text)
		}
	}

	// goModule makes a fresh Go module in dir as the README's Go quick
	// start does, in its order: the setup commands in an empty folder
	// (their -replace pointed at this checkout), then the test files.
	goEnv := []string{"GOWORK=off", "GOFLAGS=" + os.Getenv("GOFLAGS")}
	goModule := func(t *testing.T, dir string) {
		t.Helper()
		run(t, dir, strings.ReplaceAll(snippet(t, "go-setup"), "../resourcedir", checkout), goEnv...)
	}

	t.Run("GoQuickStart", func(t *testing.T) {
		mod := filepath.Join(tmp, "go-quick")
		goModule(t, mod)
		readmeWrite(t, filepath.Join(mod, "client_test.go"), snippet(t, "go-quick"))
		wantIn(t, "README.md", "`client_test.go`, run with `go test ./...`")
		out := run(t, mod, "go test -v ./...", goEnv...)
		wantCounts(t, out, map[string]int{"--- PASS: TestCreateIsRetriedAfter503": 1, "--- FAIL": 0, "ok  \texample.com/client": 1})
	})

	// A module of the user's with two packages of docs/go.md's tests and
	// 32 parallel ones each.
	mod := filepath.Join(tmp, "go")
	readmeGo := snippet(t, "go")
	writeTests := func(t *testing.T, swap bool) {
		code, many := readmeGo, readmeManyTests
		if swap {
			code, many = strings.ReplaceAll(code, readmeSwap[0], readmeSwap[1]), strings.ReplaceAll(many, readmeSwap[0], readmeSwap[1])
		}
		for _, pkg := range []string{"a", "b"} {
			readmeWrite(t, filepath.Join(mod, pkg, "resourcedir_test.go"), code)
			readmeWrite(t, filepath.Join(mod, pkg, "many_test.go"), many)
			readmeWrite(t, filepath.Join(mod, pkg, "testdata", "people.json"), readmeSeed)
		}
	}
	goPassed := map[string]int{
		"--- PASS: TestFindSeededPerson": 2, "--- PASS: TestCreateRetriesAfter503": 2,
		"--- PASS: TestMany ": 2, "--- PASS: TestMany/31 ": 2, "--- FAIL": 0,
		"ok  \texample.com/client/a": 1, "ok  \texample.com/client/b": 1,
	}
	times := func(m map[string]int, n int) map[string]int {
		out := map[string]int{}
		for k, v := range m {
			out[k] = v
			if strings.HasPrefix(k, "--- PASS") {
				out[k] = v * n
			}
		}
		return out
	}

	t.Run("GoInProcess", func(t *testing.T) {
		goModule(t, mod)
		readmeWrite(t, filepath.Join(mod, "testdata", "people.json"), readmeSeed)
		writeTests(t, false)
		out := run(t, mod, "go test -race -count=3 -v ./...", goEnv...)
		wantCounts(t, out, times(goPassed, 3))
		// One test from an editor: no wrapper, no server of its own.
		out = run(t, filepath.Join(mod, "a"), "go test -count=1 -run TestFindSeededPerson -v .", goEnv...)
		wantCounts(t, out, map[string]int{"--- PASS: TestFindSeededPerson": 1, "--- FAIL": 0})
	})

	t.Run("GoAgainstTheBinary", func(t *testing.T) {
		wantIn(t, "docs/go.md", fmt.Sprintf("swap `%s`\nfor `%s`", readmeSwap[0], readmeSwap[1]))
		line := strings.TrimSpace(snippet(t, "go-remote"))
		if want := strings.TrimSpace(strings.SplitN(command(t, "-- go test"), "#", 2)[0]); line != want {
			t.Errorf("docs/go.md runs %q, the README %q", line, want)
		}
		writeTests(t, true)
		out := run(t, mod, line, append(goEnv, "GOFLAGS="+os.Getenv("GOFLAGS")+" -race -v")...)
		wantCounts(t, out, goPassed)
		// Right after that pass, with no server: a failure, never a cached pass.
		cmd := exec.CommandContext(ctx, "sh", "-c", "go test ./...")
		cmd.Dir, cmd.Env = mod, append(slices.Clone(env), append(goEnv, "GOFLAGS="+os.Getenv("GOFLAGS")+" -race")...)
		noServer, err := cmd.CombinedOutput()
		if err == nil || strings.Contains(string(noServer), "(cached)") ||
			!strings.Contains(string(noServer), "RESOURCEDIR_URL is not set: run the tests under a server, as in resourcedir -- go test ./...") {
			t.Errorf("go test with no server: %v\n%s", err, noServer)
		}
	})

	t.Run("GoParallelSection", func(t *testing.T) {
		// docs/namespaces.md builds on docs/go.md's recipe; with fresh
		// namespaces it passes run twice in one process.
		mod := filepath.Join(tmp, "go-parallel")
		goModule(t, mod)
		readmeWrite(t, filepath.Join(mod, "testdata", "people.json"), readmeSeed)
		readmeWrite(t, filepath.Join(mod, "resourcedir_test.go"), readmeGo)
		readmeWrite(t, filepath.Join(mod, "parallel_test.go"), snippet(t, "go-parallel"))
		out := run(t, mod, command(t, "-- go test"), append(goEnv, "GOFLAGS="+os.Getenv("GOFLAGS")+" -count=2 -v")...)
		wantCounts(t, out, map[string]int{
			"--- PASS: TestParallelClients/client7": 2, "--- PASS: TestParallelClients ": 2, "--- FAIL": 0,
			"ok  \texample.com/client": 1,
		})
	})

	t.Run("TLS", func(t *testing.T) {
		// Each client of docs/https.md, through the binary.
		work := filepath.Join(tmp, "tls")
		for _, line := range strings.Split(strings.TrimSpace(snippet(t, "tls")), "\n") {
			if out := run(t, work, line); !strings.Contains(out, `{"Status":"ok","Resources":0}`) {
				t.Errorf("%s:\n%s", line, out)
			}
		}
		// The Go handle trusts the CA by itself; the client under test
		// through the page's trustingClient.
		mod := filepath.Join(tmp, "go-tls")
		goModule(t, mod)
		readmeWrite(t, filepath.Join(mod, "tls_test.go"), `package client_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"testing"

	"github.com/resourcedir/resourcedir"
)
`+snippet(t, "tls-go")+`
func TestOverTLS(t *testing.T) {
	dir := resourcedir.ConnectT(t)
	resp, err := trustingClient(t).Get(dir.URL + "/api/v2/resource")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || len(dir.Requests(resourcedir.RequestFilter{})) != 1 {
		t.Fatalf("%d", resp.StatusCode)
	}
}
`)
		out := run(t, mod, "resourcedir -tls -- go test -count=1 -v ./...", goEnv...)
		wantCounts(t, out, map[string]int{"--- PASS: TestOverTLS": 1, "--- FAIL": 0})
	})

	t.Run("PythonQuickStart", func(t *testing.T) {
		// The wheel of this checkout, wrapping the binary installed above,
		// in a fresh venv: the install line runs as written with the
		// wheel's path for the package's name (no index is asked).
		work := filepath.Join(tmp, "python-quick")
		build := exec.CommandContext(ctx, "python3", "python/build.py", "--binary", filepath.Join(bin, "resourcedir"),
			"--goos", runtime.GOOS, "--goarch", runtime.GOARCH, "--out", filepath.Join(work, "dist"))
		build.Dir, build.Env = checkout, env
		out, err := build.Output()
		if err != nil {
			t.Fatalf("python/build.py: %v\n%s", err, out)
		}
		wheel := strings.TrimSpace(string(out))
		venv := filepath.Join(work, "venv")
		run(t, work, "python3 -m venv "+venv)
		venvPath := "PATH=" + filepath.Join(venv, "bin") + string(os.PathListSeparator) + os.Getenv("PATH")
		line := strings.TrimSpace(snippet(t, "python-install"))
		if line != "pip install resourcedir" {
			t.Fatalf("the README's Python install line is %q; this test substitutes the wheel in pip install resourcedir", line)
		}
		run(t, work, "pip install --no-index --disable-pip-version-check "+wheel, venvPath)
		project := filepath.Join(work, "project")
		readmeWrite(t, filepath.Join(project, "test_quick.py"), snippet(t, "python-quick"))
		wantIn(t, "README.md", "`test_quick.py`, run with `python -m unittest`")
		// The binary installed above is not on this PATH: the test runs
		// the wheel's own.
		cmd := exec.CommandContext(ctx, "sh", "-c", "python -m unittest")
		cmd.Dir, cmd.Env = project, append(binaryEnv(), venvPath, "PYTHONDONTWRITEBYTECODE=1")
		got, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(got), "Ran 1 test") || !strings.HasSuffix(string(got), "\nOK\n") {
			t.Errorf("python -m unittest did not pass 1 test: %v\n%s", err, got)
		}
	})

	t.Run("Node", func(t *testing.T) {
		dir := filepath.Join(tmp, "node")
		readmeWrite(t, filepath.Join(dir, "testdata", "people.json"), readmeSeed)
		readmeWrite(t, filepath.Join(dir, "test", "directory.test.mjs"), snippet(t, "node"))
		out := run(t, dir, command(t, "-- node --test"))
		if !regexp.MustCompile(`(?m)^(# |ℹ )pass 2$`).MatchString(out) || !regexp.MustCompile(`(?m)^(# |ℹ )fail 0$`).MatchString(out) {
			t.Errorf("node --test did not pass 2 tests:\n%s", out)
		}
		// A test that fails keeps its namespace and says where it is.
		readmeWrite(t, filepath.Join(dir, "test", "directory.test.mjs"), snippet(t, "node")+
			"directoryTest('fails on purpose', async (t, base) => { assert.fail('on purpose'); });\n")
		readmeWantKept(t, ctx, env, dir, command(t, "-- node --test"), "node-")
	})

	t.Run("Python", func(t *testing.T) {
		dir := filepath.Join(tmp, "python")
		readmeWrite(t, filepath.Join(dir, "testdata", "people.json"), readmeSeed)
		readmeWrite(t, filepath.Join(dir, "test_directory.py"), snippet(t, "python"))
		out := run(t, dir, command(t, "-- python3 -m unittest"))
		if !strings.Contains(out, "Ran 2 tests") || !strings.HasSuffix(out, "\nOK\n") {
			t.Errorf("python3 -m unittest did not pass 2 tests:\n%s", out)
		}
		code := strings.Replace(snippet(t, "python"), "\n\nif __name__", "\n    def test_fails_on_purpose(self):\n        self.fail(\"on purpose\")\n\n\nif __name__", 1)
		readmeWrite(t, filepath.Join(dir, "test_directory.py"), code)
		readmeWantKept(t, ctx, env, dir, command(t, "-- python3 -m unittest"), "py-")
	})

	t.Run("Cors", func(t *testing.T) {
		out := run(t, filepath.Join(tmp, "cors"), snippet(t, "cors"))
		wantLine(t, out, "Access-Control-Allow-Origin: http://localhost:5173")
	})

	t.Run("Walk", func(t *testing.T) {
		work := filepath.Join(tmp, "walk")
		readmeWrite(t, filepath.Join(work, "walk.sh"), snippet(t, "walk"))
		line := "resourcedir -- bash walk.sh"
		wantIn(t, "docs/api.md", "`"+line+"`")
		out := run(t, work, line)
		for _, want := range []string{
			`{"Data":[{"Id":"`, `"DisplayName":"Ada Lovelace Analytical Engines"`, `"Total":1}`,
			`{"TotalResults":1,"TotalPages":1,"Page":1,"ResourceList":[`,
			`"DisplayName":"Ada Lovelace","FirstName":"Ada"`, `"ExternalID":"E-1"`, `"Status":"Inactive","StatusId":2`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the walk-through's output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("Generate", func(t *testing.T) {
		out := run(t, filepath.Join(tmp, "generate"), snippet(t, "generate"))
		wantLine(t, out, `{"Status":"ok","Resources":5000}`)
	})

	bash, bashErr := exec.LookPath("bash")
	if bashErr != nil {
		t.Fatal(bashErr)
	}

	t.Run("Shell", func(t *testing.T) {
		work := filepath.Join(tmp, "shell")
		readmeWrite(t, filepath.Join(work, "testdata", "people.json"), readmeSeed)
		// A demo is running where the environment points: the script once
		// failed to bind there, then ran its checks and its reset against
		// the demo and emptied it.
		demo, err := resourcedir.New(resourcedir.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer demo.Close()
		demoTS := httptest.NewServer(demo)
		defer demoTS.Close()
		demoAPI := clientAt(t, demoTS.URL)
		demoAPI.createPerson("Demo")
		cmd := exec.CommandContext(ctx, bash, "-c", snippet(t, "shell"))
		cmd.Dir = work
		cmd.Env = append(slices.Clone(env), "RESOURCEDIR_ADDR="+strings.TrimPrefix(demoTS.URL, "http://"), "RESOURCEDIR_LOG_FORMAT=json")
		out, err := cmd.CombinedOutput()
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(work, "resourcedir.log"))
			t.Fatalf("the shell example failed: %v\n%s\nresourcedir.log:\n%s", err, out, log)
		}
		text := string(out)
		for _, want := range []string{
			`{"Status":"ok","Resources":2}`,
			`"TotalResults":1`, `"DisplayName":"Ada Lovelace"`,
			`"Faults":[{"Id":1,"Method":"POST"`,
			"503\n201\n",
			`"Status":503`, `"Body":{"FirstName":"Grace","Surname":"Hopper"}`,
			`{"Status":"reset","Resources":2}`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("output lacks %q:\n%s", want, text)
			}
		}
		if n, journal := demoAPI.health(), demoAPI.journal(); n != 1 || len(journal) != 1 {
			t.Errorf("the demo was touched: %d resources, %d journal entries; want its 1 and 1", n, len(journal))
		}
	})

	t.Run("Retries", func(t *testing.T) {
		work := filepath.Join(tmp, "retries")
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, bash, "-c", snippet(t, "retries"))
		cmd.Dir = work
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(work, "resourcedir.log"))
			t.Fatalf("the retries example failed: %v\n%s\nresourcedir.log:\n%s", err, out, log)
		}
		want := "attempt 1: 503\nattempt 2: 201\n" +
			"attempt 1: failed (curl exit 56)\nattempt 2: 201\n" +
			"attempt 1: failed (curl exit 52)\nattempt 2: 201\n" +
			"\"TotalResults\":2\n\"Count\":4\n\"Count\":1\n"
		if string(out) != want {
			t.Errorf("output:\n%s\nwant:\n%s", out, want)
		}
	})
}

// readmeWantKept runs a recipe's command whose suite has a failing test:
// it must fail, and say that the failed test's namespace (a name starting
// with prefix) is kept, with its console's address.
func readmeWantKept(t *testing.T, ctx context.Context, env []string, dir, line, prefix string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	kept := regexp.MustCompile(`resourcedir: the failed test's namespace (` + prefix + `[0-9a-f]{16}) is kept: console http://127\.0\.0\.1:[0-9]+/ns/` + prefix + `[0-9a-f]{16}/`)
	if err == nil || len(kept.FindAllString(string(out), -1)) != 1 {
		t.Errorf("%s with a failing test: %v; want a failure and one kept namespace:\n%s", line, err, out)
	}
}

// readmePath puts dir first on the PATH of env.
func readmePath(env []string, dir string) []string {
	out := []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return out
}

func readmeWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
