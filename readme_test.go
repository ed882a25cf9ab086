package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The README section "Using resourcedir in your tests" shows the three
// snippets below verbatim; TestReadmeExamples runs them, so that what the
// README promises keeps working.

// readmeSeed is testdata/people.json in the README.
const readmeSeed = `[
  {"Id": "6f9619ff-8b86-4011-b42d-00c04fc964ff", "FirstName": "Ada", "Surname": "Lovelace",
   "Email": "ada@example.com", "Types": [{"Type": "Employee"}]},
  {"Company": "Analytical Engines", "Types": [{"Type": "Company"}]}
]
`

// readmeGoTest is the README's Go example: the resourcedir_test.go of a
// client package, next to a resourcedir checkout in ../resourcedir. A
// Go raw string cannot hold a backquote, so ´ stands for one here.
var readmeGoTest = strings.ReplaceAll(`package client_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// resourcedirURL is where the test double listens, such as http://127.0.0.1:41234.
var resourcedirURL string

func TestMain(m *testing.M) {
	stop, err := startResourcedir("../resourcedir", "testdata/people.json")
	if err != nil {
		fmt.Fprintln(os.Stderr, "start resourcedir:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// startResourcedir builds resourcedir from its source folder src, starts it
// in memory on a free port with seedFile loaded, and checks that it is healthy.
func startResourcedir(src, seedFile string) (stop func(), err error) {
	dir, err := os.MkdirTemp("", "resourcedir")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "resourcedir")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("go build: %v\n%s", err, out)
	}

	// Port 0 lets the system pick a free port; resourcedir logs the one it
	// got ("msg=serving addr=http://127.0.0.1:41234") once it listens.
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-snapshot", "", "-seed", seedFile)
	logs, logWriter := io.Pipe()
	cmd.Stdout, cmd.Stderr = logWriter, os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		logWriter.Close()
		close(exited)
	}()
	stop = func() {
		cmd.Process.Kill() // it runs in memory only: there is nothing to save
		<-exited
		os.RemoveAll(dir)
	}

	lines := bufio.NewScanner(logs)
	for resourcedirURL == "" && lines.Scan() {
		if _, addr, ok := strings.Cut(lines.Text(), "msg=serving addr="); ok {
			resourcedirURL = addr
		}
	}
	if resourcedirURL == "" {
		stop()
		return nil, errors.New("resourcedir stopped before serving; its error is above")
	}
	go io.Copy(io.Discard, logs) // it logs every request: keep reading

	resp, err := http.Get(resourcedirURL + "/__admin/health")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET /__admin/health: %s", resp.Status)
		}
	}
	if err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// call sends a request to resourcedir and decodes its JSON answer into out,
// unless out is nil. It returns the status code.
func call(t *testing.T, method, path, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, resourcedirURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// resetResourcedir empties the directory, the journal and the faults, and
// seeds the same people again, so that every test starts alike.
func resetResourcedir(t *testing.T) {
	t.Helper()
	if status := call(t, "POST", "/__admin/reset", "", nil); status != http.StatusOK {
		t.Fatalf("reset: %d", status)
	}
	seed, err := os.ReadFile("testdata/people.json")
	if err != nil {
		t.Fatal(err)
	}
	if status := call(t, "POST", "/__admin/resources", string(seed), nil); status != http.StatusOK {
		t.Fatalf("seed: %d", status)
	}
}

func TestFindSeededPerson(t *testing.T) {
	resetResourcedir(t)
	var page struct {
		TotalResults int
		ResourceList []struct{ Id, DisplayName string }
	}
	filter := url.QueryEscape("Email~eq~'ada@example.com'")
	call(t, "GET", "/api/v2/resource?requestParams.filters="+filter, "", &page)
	if page.TotalResults != 1 || page.ResourceList[0].Id != "6f9619ff-8b86-4011-b42d-00c04fc964ff" {
		t.Fatalf("got %+v", page)
	}
}

// createResource stands for your client: it retries a create once on 503.
func createResource(body string) (status int, err error) {
	for attempt := 1; ; attempt++ {
		resp, err := http.Post(resourcedirURL+"/api/v2/resource", "application/json", strings.NewReader(body))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || attempt == 2 {
			return resp.StatusCode, nil
		}
	}
}

func TestCreateRetriesAfter503(t *testing.T) {
	resetResourcedir(t)
	// The next create answers 503; the one after it is served as usual.
	call(t, "POST", "/__admin/faults", ´{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Times": 1}´, nil)

	if status, err := createResource(´{"FirstName": "Grace", "Surname": "Hopper"}´); err != nil || status != http.StatusOK {
		t.Fatalf("create: %d %v", status, err)
	}

	// The journal holds every /api/v2 request since the reset, oldest first.
	var journal struct {
		Requests []struct {
			Method, Path string
			Status       int
			Body         json.RawMessage
		}
	}
	call(t, "GET", "/__admin/requests", "", &journal)
	if len(journal.Requests) != 2 || journal.Requests[0].Status != 503 || journal.Requests[1].Status != 200 {
		t.Fatalf("journal: %+v", journal.Requests)
	}
	if body := string(journal.Requests[1].Body); body != ´{"FirstName":"Grace","Surname":"Hopper"}´ {
		t.Errorf("the retry sent %s", body)
	}
}
`, "´", "`")

// readmeShell is the README's shell example, run from a folder holding
// testdata/people.json with resourcedir on the PATH.
const readmeShell = `set -euo pipefail
# In memory, seeded, on RESOURCEDIR_ADDR (every flag has such a variable).
export RESOURCEDIR_ADDR="${RESOURCEDIR_ADDR:-127.0.0.1:8080}"
base="http://$RESOURCEDIR_ADDR"
resourcedir -snapshot "" -seed testdata/people.json > resourcedir.log 2>&1 &
pid=$!
trap 'kill "$pid"' EXIT
for i in $(seq 100); do
  curl -fsS "$base/__admin/health" > /dev/null 2>&1 && break
  sleep 0.1
done

curl -fsS "$base/__admin/health"; echo            # {"Status":"ok","Resources":2}
curl -fsS -G "$base/api/v2/resource" \
  --data-urlencode "requestParams.filters=Email~eq~'ada@example.com'"; echo

# The next create answers 503 once: a client that retries gets a 200.
curl -fsS -X POST "$base/__admin/faults" \
  -d '{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Times": 1}'; echo
for attempt in 1 2; do
  curl -s -o /dev/null -w '%{http_code}\n' -X POST "$base/api/v2/resource" \
    -H 'Content-Type: application/json' -d '{"FirstName": "Grace", "Surname": "Hopper"}'
done                                                # 503, then 200

curl -fsS "$base/__admin/requests"; echo          # what was sent, what it answered
curl -fsS -X POST "$base/__admin/reset"; echo     # empty again for the next test
`

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

	t.Run("Go", func(t *testing.T) {
		// The layout the README assumes: the client package next to a
		// resourcedir checkout.
		if err := os.Symlink(src, filepath.Join(tmp, "resourcedir")); err != nil {
			t.Fatal(err)
		}
		client := filepath.Join(tmp, "client")
		readmeWrite(t, filepath.Join(client, "go.mod"), "module example.com/client\n\ngo 1.22\n")
		readmeWrite(t, filepath.Join(client, "resourcedir_test.go"), readmeGoTest)
		readmeWrite(t, filepath.Join(client, "testdata", "people.json"), readmeSeed)
		cmd := exec.CommandContext(ctx, goCmd, "test", "-count=1", "-v", ".")
		cmd.Dir = client
		cmd.Env = append(env, "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go test of the README's example: %v\n%s", err, out)
		}
		for _, want := range []string{"--- PASS: TestFindSeededPerson", "--- PASS: TestCreateRetriesAfter503", "ok  \texample.com/client"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("Shell", func(t *testing.T) {
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Skip("bash is not installed")
		}
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("curl is not installed")
		}
		bin := filepath.Join(tmp, "bin")
		build := exec.CommandContext(ctx, goCmd, "build", "-o", filepath.Join(bin, "resourcedir"), ".")
		build.Env = env
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		work := filepath.Join(tmp, "shell")
		readmeWrite(t, filepath.Join(work, "testdata", "people.json"), readmeSeed)
		cmd := exec.CommandContext(ctx, bash, "-c", readmeShell)
		cmd.Dir = work
		cmd.Env = append(readmePath(env, bin), "RESOURCEDIR_ADDR="+readmeFreeAddr(t))
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
			`{"Status":"reset"}`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("output lacks %q:\n%s", want, text)
			}
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

// readmeFreeAddr returns a loopback address with a port free a moment ago,
// for the shell example, which takes a fixed address.
func readmeFreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
