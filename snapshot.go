package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The snapshot file is: snapshotMagic, a big-endian uint32 format version,
// a gob stream (a snapshotHeader, then the resources in chunks), and a
// big-endian CRC-32C of everything before it.
//
// Version 3 holds every namespace: the header lists them in order with
// their counts, and the chunks hold their resources one namespace after
// another. Version 2 files (one directory) still load, into "default".
// Chunks store resources column by column (snapshotChunk).
const (
	snapshotMagic   = "resourcedir snapshot\n"
	snapshotVersion = 3
	// oldestSnapshotVersion is the oldest format that still loads; format
	// 1 never left development.
	oldestSnapshotVersion = 2
	// snapshotChunkSize resources go in one gob value: one value per
	// resource costs a gob message each, one value for all of them a second
	// copy of the whole directory in memory.
	snapshotChunkSize = 4096
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

type snapshotHeader struct {
	Count   int
	Written time.Time
	// Namespaces, from version 3: names and resource counts, in the order
	// their resources follow. The counts add up to Count.
	Namespaces []snapshotNamespace
}

type snapshotNamespace struct {
	Name  string
	Count int
}

// snapshotSpace is one namespace's resources, as saved and restored.
type snapshotSpace struct {
	Name      string
	Resources []*Resource
}

// snapshotChunk holds up to snapshotChunkSize resources, column by column,
// so that gob handles a few long slices rather than a value per string.
// gob drops zero values, so null and "" are told apart by Nulls.
type snapshotChunk struct {
	Count int
	// Text is every string field of every resource, back to back; Lens has
	// numStringFields byte lengths per resource (0 for null).
	Text []byte
	Lens []uint32
	// Nulls has a bit per string field per resource, set for null.
	Nulls []uint16
	// NTypes is each resource's number of Types, Types all of them in order.
	NTypes []uint8
	Types  []uint8
	// AddressLens is each resource's Address length, -1 for null; Address
	// is all of them back to back.
	AddressLens []int32
	Address     []byte
}

// append adds r to c.
func (c *snapshotChunk) append(r *Resource) {
	c.Count++
	for f := field(0); f < numStringFields; f++ {
		c.Text = append(c.Text, r.vals[f]...)
		c.Lens = append(c.Lens, uint32(len(r.vals[f])))
	}
	c.Nulls = append(c.Nulls, r.nulls)
	c.NTypes = append(c.NTypes, uint8(len(r.types)))
	for _, t := range r.types {
		c.Types = append(c.Types, uint8(t))
	}
	if r.address == nil {
		c.AddressLens = append(c.AddressLens, -1)
	} else {
		c.AddressLens = append(c.AddressLens, int32(len(r.address)))
		c.Address = append(c.Address, r.address...)
	}
}

func (c *snapshotChunk) reset() {
	*c = snapshotChunk{
		Text: c.Text[:0], Lens: c.Lens[:0], Nulls: c.Nulls[:0], NTypes: c.NTypes[:0],
		Types: c.Types[:0], AddressLens: c.AddressLens[:0], Address: c.Address[:0],
	}
}

// resources rebuilds the chunk's resources into dst, which must have room
// for c.Count. The chunk must be freshly decoded and not reused: Addresses
// and Types point into its slices.
func (c *snapshotChunk) resources(dst []*Resource) error {
	n := c.Count
	if n < 0 || n > len(dst) || len(c.Lens) != n*int(numStringFields) || len(c.Nulls) != n ||
		len(c.NTypes) != n || len(c.AddressLens) != n {
		return fmt.Errorf("a chunk of %d resources has columns of the wrong length", n)
	}
	types := make([]requestorType, len(c.Types))
	for i, t := range c.Types {
		types[i] = requestorType(t)
		if !knownRequestorType(types[i]) {
			return fmt.Errorf("unknown requestor type id %d", t)
		}
	}
	text, typesAt, addressAt := c.Text, 0, 0
	for i := range n {
		r := &Resource{nulls: c.Nulls[i]}
		lens := c.Lens[i*int(numStringFields) : (i+1)*int(numStringFields)]
		// One allocation holds the resource's strings; the store folds
		// them into its columns when it loads the resources.
		size := 0
		for f, l := range lens {
			if l > uint32(len(text)-size) {
				return errors.New("a chunk's text is shorter than its lengths say")
			}
			if r.nulls&(1<<f) != 0 && l != 0 {
				return errors.New("a null field has a value")
			}
			size += int(l)
		}
		s := string(text[:size])
		at := 0
		for f, l := range lens {
			r.vals[f] = s[at : at+int(l)]
			at += int(l)
		}
		text = text[size:]

		nt := int(c.NTypes[i])
		if nt > len(types)-typesAt {
			return errors.New("a chunk has fewer Types than its counts say")
		}
		r.types = types[typesAt : typesAt+nt : typesAt+nt]
		typesAt += nt
		if l := c.AddressLens[i]; l >= 0 {
			if int(l) > len(c.Address)-addressAt {
				return errors.New("a chunk has less Address text than its lengths say")
			}
			r.address = c.Address[addressAt : addressAt+int(l) : addressAt+int(l)]
			addressAt += int(l)
		} else if l != -1 {
			return fmt.Errorf("bad Address length %d", l)
		}
		if err := checkLoaded(r); err != nil {
			return err
		}
		dst[i] = r
	}
	if len(text) != 0 || typesAt != len(types) || addressAt != len(c.Address) {
		return errors.New("a chunk holds more data than its resources")
	}
	return nil
}

// checkLoaded checks what the store relies on: a canonical GUID as Id, a
// Status of Active or Inactive.
func checkLoaded(r *Resource) error {
	if !isCanonicalGUID(r.ID()) || r.isNull(fieldID) {
		return fmt.Errorf("a resource has the invalid Id %q", r.ID())
	}
	if st, ok := r.value(fieldStatus); !ok || (st != statusActive && st != statusInactive) {
		return fmt.Errorf("resource %s has the invalid Status %q", r.ID(), st)
	}
	return nil
}

// isCanonicalGUID reports whether id is a GUID as the store keys it:
// lower-case hex, hyphenated 8-4-4-4-12.
func isCanonicalGUID(id string) bool {
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !lowerHex[id[i]] && i != 8 && i != 13 && i != 18 && i != 23 {
			return false
		}
	}
	return true
}

var lowerHex = func() (t [256]bool) {
	for _, c := range "0123456789abcdef" {
		t[c] = true
	}
	return t
}()

func knownRequestorType(t requestorType) bool {
	for _, e := range requestorTypeTable {
		if e.id == t {
			return true
		}
	}
	return false
}

// encodeSnapshot writes the namespaces to w in the snapshot format.
func encodeSnapshot(w io.Writer, spaces []snapshotSpace) error {
	header := snapshotHeader{Written: time.Now().UTC(), Namespaces: make([]snapshotNamespace, len(spaces))}
	var resources []*Resource
	for i, sp := range spaces {
		header.Namespaces[i] = snapshotNamespace{sp.Name, len(sp.Resources)}
		header.Count += len(sp.Resources)
	}
	resources = make([]*Resource, 0, header.Count)
	for _, sp := range spaces {
		resources = append(resources, sp.Resources...)
	}
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	var version [4]byte
	binary.BigEndian.PutUint32(version[:], snapshotVersion)
	bw.WriteString(snapshotMagic)
	bw.Write(version[:])
	enc := gob.NewEncoder(bw)
	if err := enc.Encode(header); err != nil {
		return fmt.Errorf("encode header: %w", err)
	}
	var chunk snapshotChunk
	for start := 0; start < len(resources); start += snapshotChunkSize {
		chunk.reset()
		for _, r := range resources[start:min(start+snapshotChunkSize, len(resources))] {
			chunk.append(r)
		}
		if err := enc.Encode(&chunk); err != nil {
			return fmt.Errorf("encode resources: %w", err)
		}
		// Encoding is CPU-bound and runs while the server serves: let a
		// waiting request have the CPU every chunk (a few ms at most)
		// rather than at the scheduler's 10ms preemption.
		runtime.Gosched()
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc.Sum32())
	_, err := w.Write(sum[:])
	return err
}

// decodeSnapshot reads a whole snapshot of size bytes from r and checks its
// magic, version and checksum before it trusts anything in it.
func decodeSnapshot(r io.Reader, size int64) ([]snapshotSpace, error) {
	headerLen := int64(len(snapshotMagic) + 4)
	if size == 0 {
		return nil, errors.New("the file is empty")
	}
	if size < headerLen+4 {
		b, _ := io.ReadAll(io.LimitReader(r, size))
		if !bytes.HasPrefix(b, []byte(snapshotMagic)) && !bytes.HasPrefix([]byte(snapshotMagic), b) {
			return nil, errors.New("not a resourcedir snapshot (bad magic)")
		}
		return nil, fmt.Errorf("the file is truncated (%d bytes)", size)
	}
	crc := crc32.New(crcTable)
	body := io.TeeReader(io.LimitReader(r, size-4), crc)
	head := make([]byte, headerLen)
	if _, err := io.ReadFull(body, head); err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	if string(head[:len(snapshotMagic)]) != snapshotMagic {
		return nil, errors.New("not a resourcedir snapshot (bad magic)")
	}
	version := binary.BigEndian.Uint32(head[len(snapshotMagic):])
	known := version >= oldestSnapshotVersion && version <= snapshotVersion
	// The checksum is checked before gob sees the content, so a corrupt file
	// fails as corrupt rather than as whatever gob makes of it. A version
	// this resourcedir cannot read is only checksummed, not kept: nothing
	// has checked its size against its content (checkDeclaredSizes).
	var payload []byte
	if known {
		payload = make([]byte, size-headerLen-4)
		if _, err := io.ReadFull(body, payload); err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
	} else if _, err := io.CopyN(io.Discard, body, size-headerLen-4); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return nil, fmt.Errorf("read checksum: %w", err)
	}
	sumOK := binary.BigEndian.Uint32(sum[:]) == crc.Sum32()
	switch {
	case !known && !sumOK:
		return nil, fmt.Errorf("unknown format version %d (this resourcedir reads %d to %d) and checksum mismatch: "+
			"the file is corrupt, or was written by a newer resourcedir", version, oldestSnapshotVersion, snapshotVersion)
	case !known && version > snapshotVersion:
		return nil, fmt.Errorf("format version %d is newer than this resourcedir reads (%d to %d); upgrade resourcedir",
			version, oldestSnapshotVersion, snapshotVersion)
	case !known:
		return nil, fmt.Errorf("unknown format version %d (this resourcedir reads %d to %d)", version, oldestSnapshotVersion, snapshotVersion)
	case !sumOK:
		return nil, errors.New("checksum mismatch: the file is corrupt or truncated")
	}

	br := bytes.NewReader(payload)
	dec := gob.NewDecoder(br)
	var header snapshotHeader
	if err := dec.Decode(&header); err != nil {
		return nil, fmt.Errorf("decode header: %w", err)
	}
	// Every resource takes bytes of the payload, so a count beyond its
	// length is a lie, and must not size an allocation.
	if header.Count < 0 || header.Count > len(payload) {
		return nil, fmt.Errorf("bad resource count %d", header.Count)
	}
	resources := make([]*Resource, header.Count)
	build := newChunkBuilder(resources)
	decoded := 0
	for decoded < header.Count {
		var err error
		var n int
		var chunk snapshotChunk
		if err = dec.Decode(&chunk); err == nil {
			n = chunk.Count
			if n <= 0 || n > header.Count-decoded {
				err = fmt.Errorf("a chunk of %d resources", n)
			} else {
				build.add(&chunk, decoded)
			}
		}
		if err != nil {
			build.wait()
			return nil, fmt.Errorf("decode resources after %d of %d: %w", decoded, header.Count, err)
		}
		decoded += n
	}
	if err := build.wait(); err != nil {
		return nil, err
	}
	if br.Len() != 0 {
		return nil, fmt.Errorf("data after the %d resources its header announces", header.Count)
	}
	return splitSpaces(header, resources)
}

// splitSpaces cuts the resources into the namespaces the header lists; a
// file from before namespaces is the default namespace.
func splitSpaces(header snapshotHeader, resources []*Resource) ([]snapshotSpace, error) {
	if header.Namespaces == nil {
		return []snapshotSpace{{defaultNamespace, resources}}, nil
	}
	spaces := make([]snapshotSpace, len(header.Namespaces))
	seen := map[string]bool{}
	rest := resources
	for i, ns := range header.Namespaces {
		if !validNamespaceName(ns.Name) || seen[ns.Name] || ns.Count < 0 || ns.Count > len(rest) {
			return nil, fmt.Errorf("bad namespace %q of %d resources in the header", ns.Name, ns.Count)
		}
		seen[ns.Name] = true
		spaces[i] = snapshotSpace{ns.Name, rest[:ns.Count:ns.Count]}
		rest = rest[ns.Count:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("the namespaces hold %d resources fewer than the header's count", len(rest))
	}
	return spaces, nil
}

// chunkBuilder rebuilds the resources of decoded chunks on every CPU while
// gob decodes the next ones.
type chunkBuilder struct {
	dst  []*Resource
	jobs chan chunkJob
	wg   sync.WaitGroup

	mu       sync.Mutex
	err      error
	errStart int
}

type chunkJob struct {
	chunk *snapshotChunk
	start int
}

func newChunkBuilder(dst []*Resource) *chunkBuilder {
	workers := runtime.GOMAXPROCS(0)
	b := &chunkBuilder{dst: dst, jobs: make(chan chunkJob, 2*workers)}
	for range workers {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			for job := range b.jobs {
				if err := job.chunk.resources(b.dst[job.start : job.start+job.chunk.Count]); err != nil {
					b.fail(job.start, err)
				}
			}
		}()
	}
	return b
}

func (b *chunkBuilder) add(c *snapshotChunk, start int) { b.jobs <- chunkJob{c, start} }

// fail keeps the error of the earliest chunk, so that the report does not
// depend on scheduling.
func (b *chunkBuilder) fail(start int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil || start < b.errStart {
		b.err, b.errStart = err, start
	}
}

// wait waits for the chunks added so far and returns the first error.
func (b *chunkBuilder) wait() error {
	close(b.jobs)
	b.wg.Wait()
	if b.err != nil {
		return fmt.Errorf("decode resources after %d of %d: %w", b.errStart, len(b.dst), b.err)
	}
	return nil
}

// writeSnapshot replaces path atomically with a snapshot of spaces.
func writeSnapshot(path string, spaces []snapshotSpace) (size int64, err error) {
	return writeFileAtomic(path, func(w io.Writer) error { return encodeSnapshot(w, spaces) })
}

// writeFileAtomic replaces path atomically: a temporary file in the same
// folder is written by write, fsynced and renamed over path, then the
// folder is fsynced so the rename itself survives a crash. On any error
// path is left as it was and the temporary file is removed. When path is a
// symbolic link, the file it points to is replaced, in its own folder, and
// the link stays.
func writeFileAtomic(path string, write func(io.Writer) error) (size int64, err error) {
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
	renamed := false
	defer func() {
		if err != nil {
			tmp.Close()
			if !renamed {
				os.Remove(tmp.Name())
			}
		}
	}()
	counter := &countingWriter{w: tmp}
	if err := write(counter); err != nil {
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return 0, err
	}
	renamed = true
	if err := syncDir(dir); err != nil {
		return 0, err
	}
	return counter.n, nil
}

// resolveLink follows path while it is a symbolic link and returns the file
// a write must replace; a link to a file that does not exist yet resolves
// to where it points. Only the last element matters: a rename within a
// linked folder lands in the real folder anyway.
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

// removeStaleTemps removes the temporary files that a write interrupted by
// a crash left beside path, and returns how many it removed.
func removeStaleTemps(path string) (int, error) {
	path, err := resolveLink(path)
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil // no folder, no temporary files; writes will say so
	}
	if err != nil {
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

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

// readSnapshot loads path without ever writing to it. A missing file
// gives an error that errors.Is(err, os.ErrNotExist).
func readSnapshot(path string) ([]snapshotSpace, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, fmt.Errorf("load snapshot %s: %w", path, err)
	}
	defer f.Close()
	if err := checkDeclaredSizes(f, size); err != nil {
		return nil, fmt.Errorf("load snapshot %s: %w", path, err)
	}
	spaces, err := decodeSnapshot(bufio.NewReaderSize(f, 1<<20), size)
	if err != nil {
		return nil, fmt.Errorf("load snapshot %s: %w", path, err)
	}
	return spaces, nil
}

// openRegular opens path for reading only if it is a regular file: a FIFO
// would block the open until some writer came, a device could be read
// forever.
func openRegular(path string) (*os.File, int64, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if !info.Mode().IsRegular() {
		return nil, 0, notRegular(info.Mode())
	}
	// O_NONBLOCK: should a FIFO take the file's place after the check, the
	// open still returns at once, and the check below refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	info, err = f.Stat()
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

// checkDeclaredSizes refuses a snapshot whose content and size disagree
// before decodeSnapshot allocates a buffer of the file's size: a valid
// header on a sparse 60 GB file must not take 60 GB. The lengths of the gob
// messages are the only sizes the format declares; they must be at least
// one byte each and fill the space between the header and the checksum
// exactly. Only a few bytes per message are read.
func checkDeclaredSizes(r io.ReaderAt, size int64) error {
	headerLen := int64(len(snapshotMagic) + 4)
	head := make([]byte, headerLen)
	if size < headerLen+4 {
		return nil // decodeSnapshot says what is wrong
	}
	if _, err := r.ReadAt(head, 0); err != nil {
		return fmt.Errorf("read header: %w", err)
	}
	version := binary.BigEndian.Uint32(head[len(snapshotMagic):])
	if string(head[:len(snapshotMagic)]) != snapshotMagic || (version != 1 && version != snapshotVersion) {
		return nil // not gob, or not gob we know: decodeSnapshot refuses it without a buffer
	}
	end := size - 4 // the checksum
	var prefix [9]byte
	for at := headerLen; at < end; {
		n, err := r.ReadAt(prefix[:min(int64(len(prefix)), end-at)], at)
		if n == 0 {
			return fmt.Errorf("read at byte %d: %w", at, err)
		}
		length, width := gobLength(prefix[:n])
		switch {
		case width == 0:
			return fmt.Errorf("the file is corrupt or truncated: a bad record length at byte %d of this %d-byte file", at, size)
		case length == 0 || length > uint64(end-at-int64(width)):
			return fmt.Errorf("the file is corrupt or truncated: the record at byte %d declares %d bytes, "+
				"and %d remain before the checksum of this %d-byte file", at, length, end-at-int64(width), size)
		}
		at += int64(width) + int64(length)
	}
	return nil
}

// gobLength decodes the unsigned integer that starts a gob message: a byte
// below 0x80 is the value; otherwise the byte is minus the count of
// big-endian bytes that follow. width is 0 when b does not hold one.
func gobLength(b []byte) (length uint64, width int) {
	if len(b) == 0 {
		return 0, 0
	}
	if b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	n := int(-int8(b[0]))
	if n < 1 || n > 8 || n >= len(b) {
		return 0, 0
	}
	for _, c := range b[1 : 1+n] {
		length = length<<8 | uint64(c)
	}
	return length, 1 + n
}

// snapshotter writes the store to its file: on a timer when the store has
// changed, on demand, and once more at shutdown.
type snapshotter struct {
	path string
	dir  snapshotDir
	log  *slog.Logger

	mu      sync.Mutex // one write at a time
	written uint64     // the directory's change mark at the last successful write

	lock *fileLock // held from open to close
}

// snapshotResult describes one write.
type snapshotResult struct {
	Path      string
	Resources int
	Bytes     int64
	Duration  time.Duration
}

// snapshotDir is what a snapshot saves and restores: the Server's
// namespaces.
type snapshotDir interface {
	// snapshotSpaces returns every namespace's resources and a mark that
	// changes whenever any of them changes.
	snapshotSpaces() ([]snapshotSpace, uint64)
	changeMark() uint64
	restore([]snapshotSpace) error
}

func newSnapshotter(path string, dir snapshotDir, logger *slog.Logger) *snapshotter {
	return &snapshotter{path: path, dir: dir, log: logger}
}

// open makes the snapshotter the file's only user and loads it: the path
// must be a regular file or not exist yet, its folder must exist and take
// new files, and no other resourcedir may be using it. A symbolic link is
// followed: the lock and the checks are on the file it points to, so two
// servers reaching one file by two names still collide.
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
		return err
	}
	s.lock = lock
	return nil
}

// close lets another server use the file.
func (s *snapshotter) close() {
	s.lock.release()
	s.lock = nil
}

// checkWritableFolder checks that the folder of path exists and takes new
// files, by creating one there as a write would: otherwise every write
// would fail and the data be lost at exit.
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

// load reads the snapshot into the store, replacing what it holds. A
// missing file leaves the store as it is and is not an error.
func (s *snapshotter) load() error {
	start := time.Now()
	spaces, err := readSnapshot(s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		s.log.Info("no snapshot yet; starting empty", "path", s.path)
	case err != nil:
		return err
	default:
		if err := s.dir.restore(spaces); err != nil {
			return fmt.Errorf("load snapshot %s: %w", s.path, err)
		}
		n := 0
		for _, sp := range spaces {
			n += len(sp.Resources)
		}
		s.log.Info("snapshot loaded", "path", s.path, "resources", n, "namespaces", len(spaces), "duration", time.Since(start))
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

// write writes the snapshot now. Only the copying of the resource pointers
// holds the store's lock; encoding and I/O do not.
func (s *snapshotter) write() (snapshotResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked()
}

func (s *snapshotter) writeLocked() (snapshotResult, error) {
	start := time.Now()
	spaces, changes := s.dir.snapshotSpaces()
	size, err := writeSnapshot(s.path, spaces)
	if err != nil {
		return snapshotResult{}, err
	}
	s.written = changes
	n := 0
	for _, sp := range spaces {
		n += len(sp.Resources)
	}
	res := snapshotResult{Path: s.path, Resources: n, Bytes: size, Duration: time.Since(start)}
	s.log.Info("snapshot written", "path", s.path, "resources", res.Resources, "bytes", res.Bytes, "duration", res.Duration)
	return res, nil
}

// writeFailureReason says in a few words why a snapshot write failed,
// without the path or the OS's error text: it is for an answer to a client
// (POST /__admin/snapshot), which has no business knowing the server's
// folders; the log has the whole error.
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

// run writes on every tick until ctx is done. A failed write is logged and
// retried at the next tick; the old snapshot stays in place meanwhile.
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
