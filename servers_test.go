package resourcedir

// Servers as a user runs them: run() in the process, the built binary as
// a shell starts it, a production http.Server, and raw connections to them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// serveProduction serves h with the production settings of newHTTPServer on a
// real loopback listener; tweak may adjust the *http.Server before it
// starts. It returns the address.
func serveProduction(t testing.TB, h http.Handler, tweak func(*http.Server)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(h, discardLogger)
	if tweak != nil {
		tweak(hs)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		hs.Serve(ln) //nolint:errcheck // ErrServerClosed at cleanup
	}()
	t.Cleanup(func() {
		hs.Close()
		<-done
	})
	return ln.Addr().String()
}

// rawExchange sends head and then body on a fresh connection, concurrently with
// reading the response, and returns the response with its body read. Write
// errors are ignored: a server that answers early may close before the
// client has written everything. A failed dial is returned, not fatal, so
// goroutines may call it.
func rawExchange(t testing.TB, addr, head string, body io.Reader) (*http.Response, []byte, error) {
	t.Helper()
	return rawExchangeWithin(t, addr, head, body, 20*time.Second)
}

// rawExchangeWithin is rawExchange with a deadline for the whole exchange.
func rawExchangeWithin(t testing.TB, addr, head string, body io.Reader, d time.Duration) (*http.Response, []byte, error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(d)) //nolint:errcheck // a fresh conn
	go func() {
		if _, err := io.WriteString(conn, head); err != nil {
			return
		}
		if body != nil {
			io.Copy(conn, body) //nolint:errcheck // see above
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
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
		if out, err := exec.Command(goTool, "build", "-o", path, "./cmd/resourcedir").CombinedOutput(); err != nil {
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

func TestMain(m *testing.M) {
	// As Main does, before anything runs: the tests and benchmarks make
	// GUIDs as the binary does.
	uuid.EnableRandPool()
	code := m.Run()
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
// change how a resourcedir the tests start runs.
func binaryEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RESOURCEDIR_") {
			env = append(env, kv)
		}
	}
	return env
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

// served is a Server of the library serving on a loopback port as the
// binary does (Open, then Serve), until stop.
type served struct {
	t    *testing.T
	url  string
	log  *syncBuffer // the text log, when cfg had no Logger
	stop func() error
}

// serveStart serves cfg on a free loopback port with Serve, stopped at the
// test's end if the test has not stopped it.
func serveStart(t *testing.T, cfg Config) *served {
	t.Helper()
	log := &syncBuffer{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(log, nil))
	}
	srv, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	var stopErr error
	p := &served{t: t, url: "http://" + ln.Addr().String(), log: log, stop: func() error {
		once.Do(func() {
			cancel()
			stopErr = <-done
		})
		return stopErr
	}}
	t.Cleanup(func() { p.stop() })
	return p
}

// stopClean stops the server and fails the test unless Serve returned nil.
func (p *served) stopClean() {
	p.t.Helper()
	if err := p.stop(); err != nil {
		p.t.Fatalf("Serve returned %v, want nil", err)
	}
}
