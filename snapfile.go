package resourcedir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// writeSnapshot replaces path atomically with a snapshot of spaces and the current seed.
func writeSnapshot(path string, spaces []snapshotSpace, current *snapshotBase) (size int64, err error) {
	return writeFileAtomic(path, 0o600, func(w io.Writer) error { return encodeSnapshot(w, spaces, current) })
}

// writeFileAtomic replaces path atomically with what write writes, and
// returns its size: a temporary file beside it is fsynced and renamed over
// it, then the folder fsynced so that the rename survives a crash. An error
// leaves path as it was; a symbolic link stays, its target replaced.
func writeFileAtomic(path string, perm fs.FileMode, write func(io.Writer) error) (size int64, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	target, err := resolveLink(path)
	if err != nil {
		return 0, err
	}
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, tempPrefix(target)+"*")
	if err != nil {
		return 0, err
	}
	// After an error the temporary file goes; once renamed, both are no-ops.
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := tmp.Chmod(perm); err != nil { // CreateTemp makes it 0600
		return 0, err
	}
	if err := write(tmp); err != nil {
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		return 0, err
	}
	info, err := tmp.Stat()
	if err != nil {
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return 0, err
	}
	d, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return 0, fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return info.Size(), nil
}

// resolveLink follows path while it is a symbolic link to the file a write
// must replace, which may not exist yet. Only the last element matters: a
// rename within a linked folder lands in the real folder anyway.
func resolveLink(path string) (string, error) {
	for range 40 {
		info, err := os.Lstat(path)
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return path, nil // nothing to follow; the write will say what is wrong
		}
		if err != nil {
			return "", err
		}
		if info.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			// Not filepath.Join: cleaning "dir/../x" lexically is wrong
			// when dir is itself a link.
			dest = filepath.Dir(path) + string(filepath.Separator) + dest
		}
		path = dest
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// tempPrefix is how the names of path's temporary files start.
func tempPrefix(path string) string {
	return "." + filepath.Base(path) + ".tmp-"
}

// removeStaleTemps removes, and counts, the temporary files crashed writes left beside path.
func removeStaleTemps(path string) (int, error) {
	path, err := resolveLink(path)
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return 0, nil // no folder, no temporary files; writes will say so
	case err != nil:
		return 0, err
	}
	prefix, removed := tempPrefix(path), 0
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if err := os.Remove(filepath.Join(filepath.Dir(path), e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

// readSnapshot loads path, never writing to it; a missing file's error is os.ErrNotExist.
func readSnapshot(path string) ([]snapshotSpace, *snapshotBase, error) {
	f, size, err := openRegular(path)
	var spaces []snapshotSpace
	var current *snapshotBase
	if err == nil {
		defer f.Close()
		spaces, current, err = decodeSnapshot(f, size)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("load snapshot %s: %w", path, err)
	}
	return spaces, current, nil
}

// dataRun returns where, from at on, r's next run of data and the hole
// after it start, both at most end. Only a file whose file system reports
// holes (lseek's SEEK_DATA and SEEK_HOLE) has any.
func dataRun(r io.ReaderAt, at, end int64) (data, hole int64) {
	f, ok := r.(*os.File)
	seekData, seekHole := 3, 4 // Linux, FreeBSD, illumos
	switch runtime.GOOS {
	case "darwin", "ios":
		seekData, seekHole = 4, 3
	case "linux", "android", "freebsd", "illumos", "solaris":
	default:
		ok = false
	}
	if !ok {
		return at, end
	}
	data, err := f.Seek(at, seekData)
	switch {
	case errors.Is(err, syscall.ENXIO): // nothing but a hole up to the end
		return end, end
	case err != nil || data < at:
		return at, end
	}
	hole, err = f.Seek(data, seekHole)
	if err != nil || hole <= data {
		return min(data, end), end
	}
	return min(data, end), min(hole, end)
}

// openRegular opens path for reading only if it is a regular file: a FIFO would block until a writer
// came, a device could be read forever. O_NONBLOCK: the open of a FIFO returns at once, to be refused.
func openRegular(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = notRegular(info.Mode())
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, info.Size(), nil
}

// notRegular says what a file that is not a regular file is.
func notRegular(mode os.FileMode) error {
	kind := "not a regular file"
	switch {
	case mode.IsDir():
		kind = "a folder"
	case mode&os.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case mode&os.ModeSocket != 0:
		kind = "a socket"
	case mode&os.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("it is %s, not a regular file", kind)
}

// WriteFileAtomic writes b to path as the snapshot is written (a temporary
// file in the same folder, synced, renamed over path, the folder synced),
// with permissions perm: a reader sees no file or the whole of b, never a
// part.
func WriteFileAtomic(path string, b []byte, perm fs.FileMode) error {
	_, err := writeFileAtomic(path, perm, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	return err
}
