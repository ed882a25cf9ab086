//go:build unix

package resourcedir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
)

// fileLock is an exclusive flock(2) on a lock file holding the owner's PID. The kernel drops the lock
// when the process dies: a server killed with -9 leaves at most the file, with a PID meaning nothing.
type fileLock struct {
	path string
	f    *os.File
}

// lockFile takes the lock at path without waiting.
func lockFile(path string) (*fileLock, error) {
	// The holder removes the file when it lets go: a lock on a file removed
	// meanwhile protects nothing, and is taken again on the one at path.
	for range 10 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder := lockHolder(f)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%s is using it (lock file %s); stop it or give this one another -snapshot", holder, path)
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		held, herr := f.Stat()
		now, nerr := os.Stat(path)
		if herr != nil || nerr != nil || !os.SameFile(held, now) {
			f.Close()
			continue
		}
		if err = f.Truncate(0); err == nil {
			_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return &fileLock{path: path, f: f}, nil
	}
	return nil, fmt.Errorf("lock %s: the lock file keeps being replaced", path)
}

// lockHolder names the holder of lock file f, by its PID once it wrote it.
func lockHolder(f *os.File) string {
	b, _ := io.ReadAll(io.LimitReader(f, 32))
	pid := string(bytes.TrimSpace(b))
	if _, err := strconv.Atoi(pid); err != nil {
		return "another resourcedir"
	}
	return "another resourcedir, process " + pid + ","
}

// release removes the lock file, then lets go of the lock: so, a process that opened the file just
// before cannot keep a lock on it (lockFile checks that the file it locked is still at path).
func (l *fileLock) release() {
	if l == nil {
		return
	}
	os.Remove(l.path)
	l.f.Close()
}
