package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The README section "Using resourcedir in your tests" holds three code
// blocks, each after a "<!-- readme-test: NAME -->" line; TestReadmeExamples
// reads them from README.md and runs them, so the README cannot rot.

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

func TestReadmeExamples(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build resourcedir: %v", err)
	}
	src, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env := readmeEnv()
	readmeSeed := readmeSnippet(t, "seed")
	readmeGoTest := readmeSnippet(t, "go")
	readmeShell := readmeSnippet(t, "shell")
	readmeRetries := readmeSnippet(t, "retries")
	readmeParallel := readmeSnippet(t, "go-parallel")

	t.Run("Go", func(t *testing.T) {
		// The layout the README assumes: the client package next to a
		// resourcedir checkout.
		if err := os.Symlink(src, filepath.Join(tmp, "resourcedir")); err != nil {
			t.Fatal(err)
		}
		client := filepath.Join(tmp, "client")
		readmeWrite(t, filepath.Join(client, "go.mod"), "module example.com/client\n\ngo 1.22\n")
		readmeWrite(t, filepath.Join(client, "resourcedir_test.go"), readmeGoTest)
		readmeWrite(t, filepath.Join(client, "parallel_test.go"), readmeParallel)
		readmeWrite(t, filepath.Join(client, "testdata", "people.json"), readmeSeed)
		cmd := exec.CommandContext(ctx, goCmd, "test", "-count=1", "-v", ".")
		cmd.Dir = client
		// JSON logs once made a harness that read the text log line wait
		// for ever: the example must not depend on the log format.
		cmd.Env = append(env, "GOWORK=off", "RESOURCEDIR_LOG_FORMAT=json")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go test of the README's example: %v\n%s", err, out)
		}
		for _, want := range []string{"--- PASS: TestFindSeededPerson", "--- PASS: TestCreateRetriesAfter503",
			"--- PASS: TestParallelClients/client7", "--- PASS: TestParallelClients ", "ok  \texample.com/client"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	bash, bashErr := exec.LookPath("bash")
	_, curlErr := exec.LookPath("curl")
	bin := filepath.Join(tmp, "bin")
	build := exec.CommandContext(ctx, goCmd, "build", "-o", filepath.Join(bin, "resourcedir"), ".")
	build.Env = env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	t.Run("Shell", func(t *testing.T) {
		if bashErr != nil || curlErr != nil {
			t.Skip("the shell examples need bash and curl")
		}
		work := filepath.Join(tmp, "shell")
		readmeWrite(t, filepath.Join(work, "testdata", "people.json"), readmeSeed)
		// A demo is running where the environment points: the script once
		// failed to bind there, then ran its checks and its reset against
		// the demo and emptied it.
		demo := NewServer(DefaultConfig(), NewStore(nil), nil)
		demoTS := httptest.NewServer(demo)
		defer demoTS.Close()
		demoAPI := clientAt(t, demoTS.URL)
		demoAPI.createPerson("Demo")
		cmd := exec.CommandContext(ctx, bash, "-c", readmeShell)
		cmd.Dir = work
		cmd.Env = append(readmePath(env, bin), "RESOURCEDIR_ADDR="+strings.TrimPrefix(demoTS.URL, "http://"), "RESOURCEDIR_LOG_FORMAT=json")
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
		cmd.Env = readmePath(env, bin)
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

// readmeEnv is the environment without RESOURCEDIR_ variables, which would
// change how the examples' resourcedir runs.
func readmeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RESOURCEDIR_") {
			env = append(env, kv)
		}
	}
	return env
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

// freeAddr returns a loopback address with a port free a moment ago, for a
// process that must be told its address before it starts.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestReadmeFlagTable: the README's flag table lists every flag, with its
// environment variable.
func TestReadmeFlagTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	newFlagSet(&options{}, io.Discard).VisitAll(func(f *flag.Flag) {
		row := fmt.Sprintf("| `-%s` | `%s` |", f.Name, envName(f.Name))
		if !strings.Contains(string(readme), row) {
			t.Errorf("README.md has no row starting %s", row)
		}
	})
}
