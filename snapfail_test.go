package main

// A failed POST /__admin/snapshot keeps the error shape (behaviour.md 11):
// a 500 whose Message gives the request id and a reason, while the path
// and the operating system's words go to the log only.

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSnapshotFailureAnswer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "private-folder")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := runStart(t, runArgs("-snapshot", filepath.Join(dir, "directory.gob")), nil)
	accCreate(t, p.url)
	// The folder becomes a file: no snapshot can be written into it,
	// whoever runs the test (root ignores permissions).
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}

	status, h, body := accSend(t, p.url, http.MethodPost, "/__admin/snapshot", "", "", "", "")
	if status != http.StatusInternalServerError {
		t.Fatalf("POST /__admin/snapshot into a file: %d %s, want 500", status, body)
	}
	e := checkErrorShape(t, "failed snapshot", h, body)
	id := h.Get("X-Request-Id")
	if !strings.Contains(e.Message, "request id "+id) {
		t.Errorf("Message %q does not give the request id %s", e.Message, id)
	}
	if !strings.Contains(e.Message, "snapshot could not be written") {
		t.Errorf("Message %q does not say what failed", e.Message)
	}
	for _, secret := range []string{dir, "private-folder", "directory.gob", "not a directory", "no such file", "/tmp", "open ", "rename "} {
		if strings.Contains(string(body), secret) {
			t.Errorf("the answer names %q: %s", secret, body)
		}
	}
	// The log has what the answer leaves out, under the same request id.
	// The log writer writes a moment after the answer: poll.
	eventually(t, 10*time.Second, "a log line giving request id "+id+" with the path", func() bool {
		for line := range strings.SplitSeq(p.stdout.String(), "\n") {
			if strings.Contains(line, id) && strings.Contains(line, "private-folder") {
				return true
			}
		}
		return false
	})
	// The server goes on serving; its final snapshot fails too, and says so.
	if n := accResources(t, p.url); n != 1 {
		t.Errorf("after the failed snapshot the store holds %d resources, want 1", n)
	}
	if err := p.stop(); err == nil || !strings.Contains(err.Error(), "private-folder") {
		t.Errorf("run returned %v, want the failed final snapshot naming its path", err)
	}
}
