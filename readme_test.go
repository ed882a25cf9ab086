package resourcedir

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
	"slices"
	"strings"
	"testing"
	"time"
)

// The README's recipes each follow a "<!-- readme-test: NAME -->" line;
// TestReadmeExamples reads them from README.md and runs them, so the
// README cannot rot.

// readmeSnippet returns the code block that follows the marker for name.
func readmeSnippet(t *testing.T, name string) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- readme-test: "+name+" -->\n```")
	if !ok {
		t.Fatalf("README.md has no snippet marked %q", name)
	}
	_, rest, _ = strings.Cut(rest, "\n") // the fence's language tag
	code, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatalf("README.md: the snippet %q has no closing fence", name)
	}
	return code
}

// readmeCommand returns the line of the README's "run" snippet that holds
// part: the command line a user types.
func readmeCommand(t *testing.T, part string) string {
	t.Helper()
	for _, line := range strings.Split(readmeSnippet(t, "run"), "\n") {
		if strings.Contains(line, part) {
			return line
		}
	}
	t.Fatalf("the README's run snippet has no line with %q", part)
	return ""
}

// readmeFreshTests is a package of 16 parallel tests, each on a directory
// of its own from the README's newDirectory, that checks what it promises:
// nothing of another test is seen, and the directory goes with its test.
// Two packages of it run at once, three times, against one server.
const readmeFreshTests = `package client_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestFreshDirectory(t *testing.T) {
	for i := range 16 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			var base string
			// Registered first, so run last: after newDirectory's DELETE.
			t.Cleanup(func() {
				var list struct{ Namespaces []struct{ Name string } }
				call(t, "GET", "/__admin/namespaces", "", &list)
				for _, ns := range list.Namespaces {
					if base == resourcedirURL+"/ns/"+ns.Name {
						t.Errorf("the namespace %s outlived its test", ns.Name)
					}
				}
			})
			base = newDirectory(t)
			if !strings.HasPrefix(base, resourcedirURL+"/ns/go-") {
				t.Fatalf("BaseURL %q, want one under %s/ns/go-", base, resourcedirURL)
			}
			fault := ` + "`" + `{"Method": "PUT", "Path": "/api/v2/resource/{id}", "Status": 503}` + "`" + `
			if status := call(t, "POST", base+"/__admin/faults", fault, nil); status != http.StatusOK {
				t.Fatalf("add a fault: %d", status)
			}
			for j := range 3 {
				body := fmt.Sprintf(` + "`" + `{"FirstName": "Test %d", "Surname": "Fresh %d"}` + "`" + `, i, j)
				if status, err := createResource(base, body); err != nil || status != http.StatusOK {
					t.Fatalf("create: %d %v", status, err)
				}
			}
			var page struct{ TotalResults int }
			call(t, "GET", base+"/api/v2/resource", "", &page)
			var journal struct{ Count int }
			call(t, "GET", base+"/__admin/requests", "", &journal)
			var faults struct{ Faults []struct{ Id int } }
			call(t, "GET", base+"/__admin/faults", "", &faults)
			if page.TotalResults != 5 || journal.Count != 4 || len(faults.Faults) != 1 {
				t.Errorf("%d resources, %d requests, %d faults; want the seed's 2 and this test's 3, its 4, its 1",
					page.TotalResults, journal.Count, len(faults.Faults))
			}
		})
	}
}
`

func TestReadmeExamples(t *testing.T) {
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	env := readmePath(binaryEnv(), filepath.Dir(builtBinary(t)))
	readmeSeed := readmeSnippet(t, "seed")
	readmeGo := readmeSnippet(t, "go")

	// run runs a command line of the README with sh in dir, and returns its
	// output; it fails the test unless the command succeeds.
	run := func(t *testing.T, dir, line string, extraEnv ...string) string {
		t.Helper()
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

	t.Run("Go", func(t *testing.T) {
		// Two packages that go test runs at once against one server, each
		// three times: the README's tests and 16 parallel ones, on
		// directories from newDirectory that never meet.
		mod := filepath.Join(tmp, "go")
		readmeWrite(t, filepath.Join(mod, "go.mod"), "module example.com/client\n\ngo 1.22\n")
		readmeWrite(t, filepath.Join(mod, "testdata", "people.json"), readmeSeed)
		for _, pkg := range []string{"a", "b"} {
			readmeWrite(t, filepath.Join(mod, pkg, "resourcedir_test.go"), readmeGo)
			readmeWrite(t, filepath.Join(mod, pkg, "fresh_test.go"), readmeFreshTests)
		}
		out := run(t, mod, readmeCommand(t, "-- go test"), "GOWORK=off", "GOFLAGS="+os.Getenv("GOFLAGS")+" -count=3 -race -v")
		wantCounts(t, out, map[string]int{
			"--- PASS: TestFindSeededPerson": 6, "--- PASS: TestCreateRetriesAfter503": 6,
			"--- PASS: TestFreshDirectory ": 6, "--- PASS: TestFreshDirectory/15 ": 6, "--- FAIL": 0,
			"ok  \texample.com/client/a": 1, "ok  \texample.com/client/b": 1,
		})
	})

	t.Run("GoParallelSection", func(t *testing.T) {
		// The section on parallel tests builds on the helpers of the Go
		// recipe; with fresh namespaces it passes run twice in one process.
		mod := filepath.Join(tmp, "go-parallel")
		readmeWrite(t, filepath.Join(mod, "go.mod"), "module example.com/client\n\ngo 1.22\n")
		readmeWrite(t, filepath.Join(mod, "testdata", "people.json"), readmeSeed)
		readmeWrite(t, filepath.Join(mod, "resourcedir_test.go"), readmeGo)
		readmeWrite(t, filepath.Join(mod, "parallel_test.go"), readmeSnippet(t, "go-parallel"))
		out := run(t, mod, readmeCommand(t, "-- go test"), "GOWORK=off", "GOFLAGS="+os.Getenv("GOFLAGS")+" -count=2 -v")
		wantCounts(t, out, map[string]int{
			"--- PASS: TestParallelClients/client7": 2, "--- PASS: TestParallelClients ": 2, "--- FAIL": 0,
			"ok  \texample.com/client": 1,
		})
	})

	t.Run("Node", func(t *testing.T) {
		if _, err := exec.LookPath("node"); err != nil {
			t.Skip("node is not on the PATH")
		}
		dir := filepath.Join(tmp, "node")
		readmeWrite(t, filepath.Join(dir, "testdata", "people.json"), readmeSeed)
		readmeWrite(t, filepath.Join(dir, "test", "directory.test.mjs"), readmeSnippet(t, "node"))
		out := run(t, dir, readmeCommand(t, "-- node --test"))
		if !regexp.MustCompile(`(?m)^(# |ℹ )pass 2$`).MatchString(out) || !regexp.MustCompile(`(?m)^(# |ℹ )fail 0$`).MatchString(out) {
			t.Errorf("node --test did not pass 2 tests:\n%s", out)
		}
	})

	t.Run("Python", func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 is not on the PATH")
		}
		dir := filepath.Join(tmp, "python")
		readmeWrite(t, filepath.Join(dir, "testdata", "people.json"), readmeSeed)
		readmeWrite(t, filepath.Join(dir, "test_directory.py"), readmeSnippet(t, "python"))
		out := run(t, dir, readmeCommand(t, "-- python3 -m unittest"))
		if !strings.Contains(out, "Ran 2 tests") || !strings.HasSuffix(out, "\nOK\n") {
			t.Errorf("python3 -m unittest did not pass 2 tests:\n%s", out)
		}
	})

	readmeShell := readmeSnippet(t, "shell")
	readmeRetries := readmeSnippet(t, "retries")
	bash, bashErr := exec.LookPath("bash")
	_, curlErr := exec.LookPath("curl")

	t.Run("Shell", func(t *testing.T) {
		if bashErr != nil || curlErr != nil {
			t.Skip("the shell examples need bash and curl")
		}
		work := filepath.Join(tmp, "shell")
		readmeWrite(t, filepath.Join(work, "testdata", "people.json"), readmeSeed)
		// A demo is running where the environment points: the script once
		// failed to bind there, then ran its checks and its reset against
		// the demo and emptied it.
		demo := newServer(defaultConfig(), newStore(nil), nil)
		demoTS := httptest.NewServer(demo)
		defer demoTS.Close()
		demoAPI := clientAt(t, demoTS.URL)
		demoAPI.createPerson("Demo")
		cmd := exec.CommandContext(ctx, bash, "-c", readmeShell)
		cmd.Dir = work
		cmd.Env = append(slices.Clone(env), "RESOURCEDIR_ADDR="+strings.TrimPrefix(demoTS.URL, "http://"), "RESOURCEDIR_LOG_FORMAT=json")
		out, err := cmd.CombinedOutput()
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(work, "resourcedir.log"))
			t.Fatalf("the README's shell example failed: %v\n%s\nresourcedir.log:\n%s", err, out, log)
		}
		text := string(out)
		for _, want := range []string{
			`{"Status":"ok","Resources":2}`,
			`"TotalResults":1`, `"DisplayName":"Ada Lovelace"`,
			`"Faults":[{"Id":1,"Method":"POST"`,
			"503\n200\n",
			`"Status":503`, `"Body":{"FirstName":"Grace","Surname":"Hopper"}`,
			`{"Status":"reset","Resources":2}`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("output lacks %q:\n%s", want, text)
			}
		}
		if n := demoAPI.health(); n != 1 || len(journalEntries(t, demo)) != 1 {
			t.Errorf("the demo was touched: %d resources, %d journal entries; want its 1 and 1", n, len(journalEntries(t, demo)))
		}
	})

	t.Run("Retries", func(t *testing.T) {
		if bashErr != nil || curlErr != nil {
			t.Skip("the shell examples need bash and curl")
		}
		work := filepath.Join(tmp, "retries")
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, bash, "-c", readmeRetries)
		cmd.Dir = work
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(work, "resourcedir.log"))
			t.Fatalf("the README's retries example failed: %v\n%s\nresourcedir.log:\n%s", err, out, log)
		}
		want := "attempt 1: 503\nattempt 2: 200\n" +
			"attempt 1: failed (curl exit 56)\nattempt 2: 200\n" +
			"attempt 1: failed (curl exit 52)\nattempt 2: 200\n" +
			"\"TotalResults\":2\n\"Count\":4\n\"Count\":1\n"
		if string(out) != want {
			t.Errorf("output:\n%s\nwant:\n%s", out, want)
		}
	})
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

// TestReadmeFlagTable: the README's flag table lists every flag, with its
// environment variable.
func TestReadmeFlagTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	newFlagSet(&options{}).VisitAll(func(f *flag.Flag) {
		row := fmt.Sprintf("| `-%s` | `%s` |", f.Name, envName(f.Name))
		if !strings.Contains(string(readme), row) {
			t.Errorf("README.md has no row starting %s", row)
		}
	})
}
