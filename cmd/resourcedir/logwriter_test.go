package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resourcedir/resourcedir"
)

// gatedDest records each Write it is given. While closed, a Write blocks
// until the gate opens; entered tells the test that a Write is waiting.
type gatedDest struct {
	mu      sync.Mutex
	writes  []string
	gate    chan struct{}
	entered chan struct{}
	err     error // what every Write returns
}

func newGatedDest() *gatedDest {
	return &gatedDest{gate: make(chan struct{}), entered: make(chan struct{}, 1000)}
}

func openDest() *gatedDest {
	d := newGatedDest()
	close(d.gate)
	return d
}

func (d *gatedDest) Write(p []byte) (int, error) {
	d.entered <- struct{}{}
	<-d.gate
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes = append(d.writes, string(p))
	return len(p), d.err
}

func (d *gatedDest) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(d.writes, "")
}

func (d *gatedDest) Writes() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.writes...)
}

// waitEntered waits, with a deadline, until the writer is inside a Write.
func (d *gatedDest) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-d.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the writer did not write within 10s")
	}
}

func numberedLines(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "line %04d\n", i)
	}
	return b.String()
}

func writeLines(t *testing.T, w *logWriter, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		line := fmt.Sprintf("line %04d\n", i)
		if n, err := w.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", line, n, err)
		}
	}
}

func TestLogWriterBatchesWhatArrivesDuringAWrite(t *testing.T) {
	t.Parallel()
	d := newGatedDest()
	w := newLogWriterBounded(d, logPendingLimit, 10*time.Second)
	writeLines(t, w, 0, 1)
	d.waitEntered(t)
	writeLines(t, w, 1, 100) // while line 0 is being written
	close(d.gate)
	eventually(t, 10*time.Second, "100 lines written", func() bool { return d.String() == numberedLines(0, 100) })
	if got := d.Writes(); len(got) != 2 || got[0] != numberedLines(0, 1) || got[1] != numberedLines(1, 100) {
		t.Errorf("writes %q, want line 0 alone, then lines 1-99 in one write", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.droppedLines() != 0 {
		t.Errorf("Dropped() = %d, want 0", w.droppedLines())
	}
}

func TestLogWriterIdleLineWrittenWithoutClose(t *testing.T) {
	t.Parallel()
	d := openDest()
	w := newLogWriter(d)
	t.Cleanup(func() { w.Close() })
	writeLines(t, w, 0, 1)
	eventually(t, 10*time.Second, "a lone line reaches the destination", func() bool { return d.String() == numberedLines(0, 1) })
	writeLines(t, w, 1, 2) // the writer went back to waiting: the next line too
	eventually(t, 10*time.Second, "a second lone line reaches the destination", func() bool { return d.String() == numberedLines(0, 2) })
}

func TestLogWriterKeepsEachWritersOrder(t *testing.T) {
	t.Parallel()
	d := openDest()
	w := newLogWriter(d)
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(w, "writer %d line %04d\n", g, i)
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	for _, line := range strings.Split(strings.TrimSuffix(d.String(), "\n"), "\n") {
		var g, i int
		if _, err := fmt.Sscanf(line, "writer %d line %d", &g, &i); err != nil || g < 0 || g >= writers {
			t.Fatalf("line %q is not one line of one writer: %v", line, err)
		}
		if i != next[g] {
			t.Fatalf("writer %d: line %d after line %d", g, i, next[g]-1)
		}
		next[g]++
	}
	for g, n := range next {
		if n != lines {
			t.Errorf("writer %d: %d lines written, want %d", g, n, lines)
		}
	}
}

func TestLogWriterCloseDrains(t *testing.T) {
	t.Parallel()
	d := openDest()
	w := newLogWriter(d)
	writeLines(t, w, 0, 1000)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := d.String(); got != numberedLines(0, 1000) {
		t.Errorf("after Close the destination holds %d bytes, want the 1000 lines in order", len(got))
	}
	// A line after Close has nowhere to go: counted, not written.
	writeLines(t, w, 1000, 1001)
	if w.droppedLines() != 1 || d.String() != numberedLines(0, 1000) {
		t.Errorf("a line after Close: Dropped() = %d, want 1, and nothing written", w.droppedLines())
	}
}

func TestLogWriterDropsBeyondTheLimit(t *testing.T) {
	t.Parallel()
	d := newGatedDest()
	const lineLen = len("line 0000\n")
	w := newLogWriterBounded(d, 10*lineLen, 10*time.Second)
	writeLines(t, w, 0, 1)
	d.waitEntered(t) // line 0 is out of the pending bytes, stuck in the write
	writeLines(t, w, 1, 16)
	if w.droppedLines() != 5 {
		t.Errorf("Dropped() = %d with 15 lines pending and room for 10, want 5", w.droppedLines())
	}
	close(d.gate)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := d.String(); got != numberedLines(0, 11) {
		t.Errorf("written %q, want lines 0-10", got)
	}
	if w.droppedLines() != 5 {
		t.Errorf("Dropped() = %d after Close, want still 5", w.droppedLines())
	}
}

func TestLogWriterCloseGivesUpOnABlockedDestination(t *testing.T) {
	t.Parallel()
	d := newGatedDest()
	t.Cleanup(func() { close(d.gate) }) // lets the writing goroutine end
	w := newLogWriterBounded(d, logPendingLimit, 50*time.Millisecond)
	writeLines(t, w, 0, 1)
	d.waitEntered(t)
	writeLines(t, w, 1, 4)
	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	select {
	case err := <-closed:
		if err == nil || !strings.Contains(err.Error(), "3 pending lines dropped") {
			t.Errorf("Close() = %v, want an error counting 3 pending lines", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return within 10s with a 50ms deadline")
	}
	if w.droppedLines() != 3 {
		t.Errorf("Dropped() = %d, want the 3 lines still pending", w.droppedLines())
	}
}

func TestLogWriterCountsLinesTheDestinationRefuses(t *testing.T) {
	t.Parallel()
	d := openDest()
	d.err = errors.New("broken pipe")
	w := newLogWriter(d)
	writeLines(t, w, 0, 3)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.droppedLines() != 3 {
		t.Errorf("Dropped() = %d, want the 3 refused lines", w.droppedLines())
	}
}

// TestLogWriterCarriesRequestLines serves a request through a Server whose
// logger writes through a logWriter, in both formats and at each level.
func TestLogWriterCarriesRequestLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format string
		level  slog.Level
		want   func(t *testing.T, line string)
	}{
		{"text", slog.LevelInfo, func(t *testing.T, line string) {
			for _, want := range []string{"level=INFO msg=request method=GET path=/__admin/health status=200 bytes=", "request_id=log-7"} {
				if !strings.Contains(line, want) {
					t.Errorf("request line %q lacks %q", line, want)
				}
			}
		}},
		{"json", slog.LevelInfo, func(t *testing.T, line string) {
			var got map[string]any
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("request line %q: %v", line, err)
			}
			want := map[string]any{"level": "INFO", "msg": "request", "method": "GET", "path": "/__admin/health", "status": 200.0, "request_id": "log-7"}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("request line %s = %v, want %v", k, got[k], v)
				}
			}
		}},
		{"text", slog.LevelDebug, func(t *testing.T, line string) {
			if !strings.Contains(line, "msg=request method=GET") {
				t.Errorf("debug keeps the request line; got %q", line)
			}
		}},
		{"text", slog.LevelWarn, func(t *testing.T, line string) {
			if !strings.HasPrefix(line, "time=") || !strings.Contains(line, "level=WARN msg=marker") {
				t.Errorf("warn drops the request line: the first line is %q, want the marker", line)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.format+"/"+tt.level.String(), func(t *testing.T) {
			var out syncBuffer
			w := newLogWriter(&out)
			t.Cleanup(func() { w.Close() })
			logger := newLogger(tt.format, tt.level, w)
			srv, err := resourcedir.New(resourcedir.Config{Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			// What New logs of its start comes first, written at once or soon:
			// the request's line is the first after the line that says so.
			if tt.level <= slog.LevelInfo {
				eventually(t, 10*time.Second, "New's start line is written", func() bool { return strings.Contains(out.String(), "snapshots off") })
			}
			start := len(out.String())
			req := httptest.NewRequest(http.MethodGet, "/__admin/health", nil)
			req.Header.Set("X-Request-Id", "log-7")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET /__admin/health = %d", rec.Code)
			}
			// Lines keep their order, so once the marker is out, the request
			// line (if kept) is out before it.
			logger.Warn("marker")
			eventually(t, 10*time.Second, "the marker is written", func() bool { return strings.Contains(out.String(), "marker") })
			tt.want(t, strings.SplitN(out.String()[start:], "\n", 2)[0])
		})
	}
}

// TestProcessStdoutNobodyReads runs the built binary with its stdout a pipe
// that is never read: once the pipe's buffer is full, every request must
// still be answered, and SIGTERM must still end the process.
func TestProcessStdoutNobodyReads(t *testing.T) {
	bin := builtBinary(t)
	unread, stdout, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unread.Close() })
	// Not startBinary: its stdout is a buffer that is always read, and the
	// point here is a pipe that nobody reads.
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "url")
	var stderr syncBuffer
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-addr-file", addrFile, "-snapshot", filepath.Join(dir, "s.gob"))
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Close() // the child holds its own copy
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default: // the test failed before it ended
			cmd.Process.Kill() //nolint:errcheck // it may end on its own meanwhile
			<-exited
		}
	})

	// The log goes to the unread pipe, so the -addr-file tells the address.
	base := waitAddrFile(t, addrFile, 15*time.Second, exited, stderr.String)
	client := &http.Client{Timeout: 10 * time.Second}
	// 2,000 request lines are far more than a pipe's 64 KiB buffer holds.
	const clients, each = 4, 500
	errs := make(chan error, clients)
	for range clients {
		go func() {
			for i := range each {
				resp, err := client.Get(fmt.Sprintf("%s/api/v2/resource?page=1&pageSize=%d", base, i%50+1))
				if err != nil {
					errs <- fmt.Errorf("request %d: %w", i, err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("request %d: status %d", i, resp.StatusCode)
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Past the writer's 4 MiB of pending lines, lines are dropped, and
	// counted where an operator looks: 400 requests whose log lines carry
	// a 16 KiB path.
	long := base + "/" + strings.Repeat("x", 16<<10)
	for i := range 400 {
		resp, err := client.Get(long)
		if err != nil {
			t.Fatalf("long request %d: %v", i, err)
		}
		resp.Body.Close()
	}
	resp, err := client.Get(base + "/__admin/health")
	if err != nil {
		t.Fatal(err)
	}
	var health struct{ DroppedLogLines uint64 }
	err = json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if err != nil || health.DroppedLogLines == 0 {
		t.Errorf("health DroppedLogLines %d (%v), want the dropped lines counted", health.DroppedLogLines, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("exit after SIGTERM: %v; stderr:\n%s", waitErr, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the process did not end within 20s of SIGTERM; stderr:\n%s", stderr.String())
	}
}
