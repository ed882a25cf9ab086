package resourcedir

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// snapshotter writes the store to its file: on a timer after changes, on demand, and at shutdown.
type snapshotter struct {
	path string
	dir  snapshotDir
	log  *slog.Logger

	mu      sync.Mutex // one write at a time
	written uint64     // the directory's change mark at the last successful write
	// What health reports, so that a run whose every write fails does not
	// look healthy until its data is lost at exit. A lock of its own: a
	// health probe must not wait for a write.
	statusMu sync.Mutex
	status   snapshotHealth

	lock *fileLock // held from open to close
}

// snapshotResult describes one write, as POST /__admin/snapshot answers.
type snapshotResult struct {
	Path       string
	Resources  int
	Bytes      int64
	DurationMs float64
	Duration   time.Duration `json:"-"`
}

// snapshotDir is what a snapshot saves and restores: the Server's
// namespaces and its current seed.
type snapshotDir interface {
	// snapshotSpaces returns every namespace's resources, the current
	// seed (nil: none) and a mark that changes whenever any of them changes.
	snapshotSpaces() ([]snapshotSpace, *snapshotBase, uint64)
	changeMark() uint64
	// restore replaces them with the snapshot's; path names the file in
	// what it logs.
	restore(path string, spaces []snapshotSpace, current *snapshotBase) error
}

func newSnapshotter(path string, dir snapshotDir, logger *slog.Logger) *snapshotter {
	return &snapshotter{path: path, dir: dir, log: logger}
}

// open makes the snapshotter the file's only user and loads it: a regular
// file or none yet, in a folder that takes new files, that no other
// resourcedir uses. Checks and lock are on the file a symbolic link points
// to, so that two servers reaching one file by two names still collide.
func (s *snapshotter) open() error {
	target, err := resolveLink(s.path)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", s.path, err)
	}
	// The file first: a device's folder (/dev) is no place for a probe.
	info, err := os.Stat(target)
	switch {
	case err == nil && !info.Mode().IsRegular():
		return fmt.Errorf("snapshot %s: %w", s.path, notRegular(info.Mode()))
	case err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("snapshot %s: %w", s.path, err)
	}
	if err := checkWritableFolder(target); err != nil {
		return fmt.Errorf("snapshot %s: %w", s.path, err)
	}
	lockPath, err := filepath.Abs(target + ".lock")
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", s.path, err)
	}
	lock, err := lockFile(lockPath)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", s.path, err)
	}
	if err := s.load(); err != nil {
		lock.release()
		// The server refuses to start on a file it cannot read and leaves
		// it untouched, so the way on is the user's to choose.
		return fmt.Errorf("%w; the file is left untouched: move it aside (mv %s %s.bad) to start empty, or run with -snapshot off", err, s.path, s.path)
	}
	s.lock = lock
	return nil
}

// close lets another server use the file.
func (s *snapshotter) close() {
	s.lock.release()
	s.lock = nil
}

// checkWritableFolder checks that path's folder exists and takes new files,
// by creating one as a write would: otherwise the data is lost at exit.
func checkWritableFolder(path string) error {
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("the folder %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("the folder %s: %w", dir, err)
	case !info.IsDir():
		return fmt.Errorf("%s is not a folder", dir)
	}
	probe, err := os.CreateTemp(dir, tempPrefix(path)+"probe-*")
	if err != nil {
		return fmt.Errorf("the folder %s cannot be written: %w", dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// load reads the snapshot into the store, replacing what it holds; a missing file changes nothing.
func (s *snapshotter) load() error {
	start := time.Now()
	spaces, current, err := readSnapshot(s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		s.log.Info("no snapshot yet; starting empty", "path", s.path)
	case err != nil:
		return err
	default:
		if err := s.dir.restore(s.path, spaces, current); err != nil {
			return fmt.Errorf("load snapshot %s: %w", s.path, err)
		}
		s.log.Info("snapshot loaded", "path", s.path, "resources", resourceCount(spaces), "namespaces", len(spaces),
			"duration", time.Since(start))
		// The file loaded is the last good write, if an earlier run's.
		if info, err := os.Stat(s.path); err == nil {
			s.statusMu.Lock()
			s.status.LastWrite = new(info.ModTime().UTC())
			s.statusMu.Unlock()
		}
	}
	// Nothing has changed yet: an idle run must not write an empty file.
	s.mu.Lock()
	s.written = s.dir.changeMark()
	s.mu.Unlock()
	// A write interrupted by a crash leaves its temporary file behind.
	if n, err := removeStaleTemps(s.path); err != nil {
		s.log.Warn("could not remove the temporary files of an interrupted snapshot", "path", s.path, "error", err)
	} else if n > 0 {
		s.log.Info("removed the temporary files of an interrupted snapshot", "path", s.path, "files", n)
	}
	return nil
}

// write writes the snapshot now; the store's lock is held only to copy resource pointers, not to encode.
func (s *snapshotter) write() (snapshotResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked()
}

func (s *snapshotter) writeLocked() (snapshotResult, error) {
	start := time.Now()
	spaces, current, changes := s.dir.snapshotSpaces()
	size, err := writeSnapshot(s.path, spaces, current)
	took := time.Since(start)
	now, ms := time.Now().UTC(), durationMs(took)
	s.statusMu.Lock()
	if err != nil {
		s.status.LastError, s.status.LastErrorTime = writeFailureReason(err), &now
		s.status.FailedWrites++
		s.statusMu.Unlock()
		return snapshotResult{}, err
	}
	s.status = snapshotHealth{LastWrite: &now, LastWriteDurationMs: &ms}
	s.statusMu.Unlock()
	s.written = changes
	res := snapshotResult{Path: s.path, Resources: resourceCount(spaces), Bytes: size, DurationMs: ms, Duration: took}
	s.log.Info("snapshot written", "path", s.path, "resources", res.Resources, "bytes", res.Bytes, "duration", took)
	return res, nil
}

// snapshotHealth is the snapshot's part of /__admin/health.
type snapshotHealth struct {
	LastWrite *time.Time // null until the file is written (or loaded)
	// This run's last good write's: kill -9 can lose an interval plus that.
	LastWriteDurationMs *float64 `json:",omitempty"`
	// Present while writes fail: the reason (no path: the log has the
	// whole error), when the last one failed, and how many in a row.
	LastError     string     `json:",omitempty"`
	LastErrorTime *time.Time `json:",omitempty"`
	FailedWrites  int        `json:",omitempty"`
}

// health is the snapshot's part of /__admin/health; its pointers are replaced, never written through.
func (s *snapshotter) health() snapshotHealth {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	return s.status
}

// writeFailureReason says in a few words why a snapshot write failed,
// without the path or the OS's text: a client (POST /__admin/snapshot) has
// no business knowing the server's folders; the log has the whole error.
func writeFailureReason(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full"
	case errors.Is(err, syscall.EDQUOT):
		return "the disk quota is used up"
	case errors.Is(err, syscall.EROFS):
		return "the file system is read-only"
	case errors.Is(err, os.ErrPermission):
		return "permission denied"
	case errors.Is(err, os.ErrNotExist):
		return "the snapshot's folder no longer exists"
	default:
		return "an input/output error"
	}
}

// writeIfChanged writes only when the store changed since the last write.
func (s *snapshotter) writeIfChanged() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir.changeMark() == s.written {
		return false, nil
	}
	_, err := s.writeLocked()
	return err == nil, err
}

// run writes on every tick until ctx is done; a failed write is logged, the old file kept, and retried.
func (s *snapshotter) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.writeIfChanged(); err != nil {
				s.log.Error("snapshot failed; will retry at the next tick", "path", s.path, "error", err)
			}
		}
	}
}

// durationMs is d in milliseconds, to the microsecond, as the admin API gives durations.
func durationMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
