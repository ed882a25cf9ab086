package resourcedir

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Tests of snapfile.go: snapshot files written atomically, through
// symbolic links, and read only when they are regular files.

func TestSnapshotWriteFailsMidway(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rd.gob")
	old := snapRealistic(5)
	if _, err := writeSnapshotFile(path, old); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	newer := snapRealistic(snapshotChunkSize + 1)
	for _, limit := range []int{0, 1000, 1 << 17} {
		_, err := writeFileAtomic(path, 0o600, func(w io.Writer) error {
			return encodeSnapshot(&snapFailingWriter{w: w, limit: limit, err: errSnapInjected}, defaultSpace(newer), nil)
		})
		if !errors.Is(err, errSnapInjected) || !strings.Contains(err.Error(), path) {
			t.Errorf("writeFileAtomic = %v; want the injected error, naming %s", err, path)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
			t.Fatalf("a failed write after %d bytes changed the old snapshot", limit)
		}
		snapAssertNoTemps(t, dir)
	}
	if rs, err := readSnapshotFile(path); err != nil || len(rs) != len(old) {
		t.Fatalf("the old snapshot no longer loads: %d, %v", len(rs), err)
	}
}

func TestSnapshotWriteFileFaults(t *testing.T) {
	rs := snapRealistic(20)
	t.Run("folder does not exist", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "missing", "rd.gob")
		_, err := writeSnapshotFile(path, rs)
		if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
			t.Errorf("writeSnapshotFile = %v; want a not-exist error naming %s", err, path)
		}
		if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the missing folder was created: %v", err)
		}
	})
	t.Run("a directory in place of the file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "rd.gob")
		if err := os.MkdirAll(filepath.Join(path, "keep"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := writeSnapshotFile(path, rs)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("writeSnapshotFile over a directory = %v; want an error naming %s", err, path)
		}
		if info, err := os.Stat(filepath.Join(path, "keep")); err != nil || !info.IsDir() {
			t.Errorf("the directory in the way was disturbed: %v", err)
		}
		snapAssertNoTemps(t, dir)
	})
}

// A symbolic link as the snapshot path was replaced by a regular file; the
// file it points to is replaced now, in its own folder, whatever the link
// looks like.
func TestSnapshotWriteThroughSymlink(t *testing.T) {
	rs := snapRealistic(3)
	tests := []struct {
		name string
		// make creates the link(s) in linkDir to a file in dataDir and
		// returns the path to write and the file that must be written.
		make func(t *testing.T, linkDir, dataDir string) (path, target string)
	}{
		{"absolute link to an existing file", func(t *testing.T, linkDir, dataDir string) (string, string) {
			target := filepath.Join(dataDir, "real.gob")
			if _, err := writeSnapshotFile(target, snapRealistic(1)); err != nil {
				t.Fatal(err)
			}
			return snapSymlink(t, target, filepath.Join(linkDir, "rd.gob")), target
		}},
		{"relative link, dangling until written", func(t *testing.T, linkDir, dataDir string) (string, string) {
			target := filepath.Join(dataDir, "real.gob")
			rel, _ := filepath.Rel(linkDir, target)
			return snapSymlink(t, rel, filepath.Join(linkDir, "rd.gob")), target
		}},
		{"a link to a link", func(t *testing.T, linkDir, dataDir string) (string, string) {
			target := filepath.Join(dataDir, "real.gob")
			middle := snapSymlink(t, "real.gob", filepath.Join(dataDir, "middle.gob"))
			return snapSymlink(t, middle, filepath.Join(linkDir, "rd.gob")), target
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			linkDir, dataDir := t.TempDir(), t.TempDir()
			path, target := tt.make(t, linkDir, dataDir)
			before := snapLinks(t, linkDir, dataDir)
			if _, err := writeSnapshotFile(path, rs); err != nil {
				t.Fatal(err)
			}
			if after := snapLinks(t, linkDir, dataDir); !maps.Equal(before, after) {
				t.Errorf("links changed: %v, then %v", before, after)
			}
			if info, err := os.Lstat(target); err != nil || !info.Mode().IsRegular() {
				t.Fatalf("target %s: %v %v", target, info, err)
			}
			for _, p := range []string{path, target} {
				if got, err := readSnapshotFile(p); err != nil || len(got) != len(rs) {
					t.Errorf("read %s: %d resources, %v", p, len(got), err)
				}
			}
			snapAssertNoTemps(t, linkDir)
			snapAssertNoTemps(t, dataDir)

			// The temporary files of an interrupted write are beside the
			// target, and found there through the link.
			stale := filepath.Join(filepath.Dir(target), tempPrefix(target)+"123")
			if err := os.WriteFile(stale, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if n, err := removeStaleTemps(path); n != 1 || err != nil {
				t.Errorf("removeStaleTemps through the link: %d, %v", n, err)
			}
		})
	}
	t.Run("a loop of links", func(t *testing.T) {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a.gob"), filepath.Join(dir, "b.gob")
		snapSymlink(t, b, a)
		snapSymlink(t, a, b)
		if _, err := writeSnapshotFile(a, rs); err == nil || !strings.Contains(err.Error(), "too many levels of symbolic links") {
			t.Errorf("write through a loop: %v", err)
		}
	})
}

func snapSymlink(t *testing.T, dest, link string) string {
	t.Helper()
	if err := os.Symlink(dest, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// snapLinks maps every symbolic link in dirs to where it points.
func snapLinks(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	links := map[string]string{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Type()&os.ModeSymlink != 0 {
				dest, _ := os.Readlink(filepath.Join(dir, e.Name()))
				links[filepath.Join(dir, e.Name())] = dest
			}
		}
	}
	return links
}

// Reading a FIFO blocked until a writer came; a named pipe, a folder or a
// device is refused without waiting, and named.
func TestSnapshotReadRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.gob")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{
		fifo:       "named pipe (FIFO)",
		dir:        "folder",
		os.DevNull: "device",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := readSnapshotFile(path)
			done <- err
		}()
		select {
		case err := <-done:
			snapCheckRefusal(t, err, path, "it is a "+regexp.QuoteMeta(kind)+", not a regular file")
		case <-time.After(10 * time.Second):
			t.Fatalf("readSnapshotFile(%s) blocked", path)
		}
	}
}
