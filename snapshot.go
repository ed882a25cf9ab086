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
	"sync"
	"time"
)

// The snapshot file is: snapshotMagic, a big-endian uint32 format version,
// a gob stream (a snapshotHeader, then []snapshotRecord chunks), and a
// big-endian CRC-32C of everything before it.
const (
	snapshotMagic   = "resourcedir snapshot\n"
	snapshotVersion = 1
	// snapshotChunk resources go in one gob value: one value per resource
	// costs a gob message each, one value for all of them a second copy of
	// the whole directory in memory.
	snapshotChunk = 4096
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

type snapshotHeader struct {
	Count   int
	Written time.Time
}

// snapshotRecord is a Resource as stored: gob drops zero values, so null
// and "" are told apart by Nulls, not by the strings.
type snapshotRecord struct {
	Vals    [numStringFields]string
	Nulls   uint16
	Types   []uint8
	Address []byte
}

func toRecord(r *Resource) snapshotRecord {
	rec := snapshotRecord{Vals: r.vals, Nulls: r.nulls, Address: r.address}
	rec.Types = make([]uint8, len(r.types))
	for i, t := range r.types {
		rec.Types[i] = uint8(t)
	}
	return rec
}

func fromRecord(rec *snapshotRecord) (*Resource, error) {
	r := &Resource{address: rec.Address, types: make([]requestorType, len(rec.Types))}
	for f := field(0); f < numStringFields; f++ {
		r.set(f, rec.Vals[f], rec.Nulls&(1<<f) == 0)
	}
	if _, ok := parseGUID(r.ID()); !ok {
		return nil, fmt.Errorf("a resource has the invalid Id %q", r.ID())
	}
	for i, t := range rec.Types {
		r.types[i] = requestorType(t)
		if !knownRequestorType(r.types[i]) {
			return nil, fmt.Errorf("resource %s has the unknown requestor type id %d", r.ID(), t)
		}
	}
	return r, nil
}

func knownRequestorType(t requestorType) bool {
	for _, e := range requestorTypeTable {
		if e.id == t {
			return true
		}
	}
	return false
}

// encodeSnapshot writes resources to w in the snapshot format.
func encodeSnapshot(w io.Writer, resources []*Resource) error {
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	var version [4]byte
	binary.BigEndian.PutUint32(version[:], snapshotVersion)
	bw.WriteString(snapshotMagic)
	bw.Write(version[:])
	enc := gob.NewEncoder(bw)
	if err := enc.Encode(snapshotHeader{Count: len(resources), Written: time.Now().UTC()}); err != nil {
		return fmt.Errorf("encode header: %w", err)
	}
	chunk := make([]snapshotRecord, 0, snapshotChunk)
	for start := 0; start < len(resources); start += snapshotChunk {
		chunk = chunk[:0]
		for _, r := range resources[start:min(start+snapshotChunk, len(resources))] {
			chunk = append(chunk, toRecord(r))
		}
		if err := enc.Encode(chunk); err != nil {
			return fmt.Errorf("encode resources: %w", err)
		}
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
func decodeSnapshot(r io.Reader, size int64) ([]*Resource, error) {
	headerLen := int64(len(snapshotMagic) + 4)
	if size == 0 {
		return nil, errors.New("the file is empty")
	}
	if size < headerLen+4 {
		b, _ := io.ReadAll(io.LimitReader(r, size))
		if !bytes.HasPrefix(b, []byte(snapshotMagic)) && !bytes.HasPrefix([]byte(snapshotMagic), b) {
			return nil, errors.New("not a resourcedir snapshot (bad magic)")
		}
		return nil, errors.New("the file is truncated")
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
	if v := binary.BigEndian.Uint32(head[len(snapshotMagic):]); v != snapshotVersion {
		if v > snapshotVersion {
			return nil, fmt.Errorf("format version %d is newer than this resourcedir reads (%d); upgrade resourcedir", v, snapshotVersion)
		}
		return nil, fmt.Errorf("unknown format version %d", v)
	}
	// The checksum is checked before gob sees the content, so a corrupt file
	// fails as corrupt rather than as whatever gob makes of it.
	payload := make([]byte, size-headerLen-4)
	if _, err := io.ReadFull(body, payload); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return nil, fmt.Errorf("read checksum: %w", err)
	}
	if binary.BigEndian.Uint32(sum[:]) != crc.Sum32() {
		return nil, errors.New("checksum mismatch: the file is corrupt or truncated")
	}

	dec := gob.NewDecoder(bytes.NewReader(payload))
	var header snapshotHeader
	if err := dec.Decode(&header); err != nil {
		return nil, fmt.Errorf("decode header: %w", err)
	}
	if header.Count < 0 {
		return nil, fmt.Errorf("bad resource count %d", header.Count)
	}
	resources := make([]*Resource, 0, min(header.Count, len(payload)))
	var chunk []snapshotRecord
	for len(resources) < header.Count {
		chunk = chunk[:0]
		if err := dec.Decode(&chunk); err != nil {
			return nil, fmt.Errorf("decode resources after %d of %d: %w", len(resources), header.Count, err)
		}
		for i := range chunk {
			res, err := fromRecord(&chunk[i])
			if err != nil {
				return nil, err
			}
			resources = append(resources, res)
		}
	}
	if len(resources) != header.Count {
		return nil, fmt.Errorf("holds %d resources, its header says %d", len(resources), header.Count)
	}
	return resources, nil
}

// writeSnapshotFile replaces path atomically: a temporary file in the same
// folder is written, fsynced and renamed over path, then the folder is
// fsynced so the rename itself survives a crash. On any error path is left
// as it was and the temporary file is removed.
func writeSnapshotFile(path string, resources []*Resource) (size int64, err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, fmt.Errorf("write snapshot %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("write snapshot %s: %w", path, err)
		}
	}()
	counter := &countingWriter{w: tmp}
	if err := encodeSnapshot(counter, resources); err != nil {
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return 0, err
	}
	if err := syncDir(dir); err != nil {
		return 0, err
	}
	return counter.n, nil
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

// readSnapshotFile loads path without ever writing to it. A missing file
// gives an error that errors.Is(err, os.ErrNotExist).
func readSnapshotFile(path string) ([]*Resource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load snapshot %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("load snapshot %s: %w", path, err)
	}
	resources, err := decodeSnapshot(bufio.NewReaderSize(f, 1<<20), info.Size())
	if err != nil {
		return nil, fmt.Errorf("load snapshot %s: %w", path, err)
	}
	return resources, nil
}

// snapshotter writes the store to its file: on a timer when the store has
// changed, on demand, and once more at shutdown.
type snapshotter struct {
	path  string
	store *Store
	log   *slog.Logger

	mu      sync.Mutex // one write at a time
	written uint64     // store.Changes() at the last successful write
}

// snapshotResult describes one write.
type snapshotResult struct {
	Path      string
	Resources int
	Bytes     int64
	Duration  time.Duration
}

func newSnapshotter(path string, store *Store, logger *slog.Logger) *snapshotter {
	return &snapshotter{path: path, store: store, log: logger}
}

// load reads the snapshot into the store, replacing what it holds. A
// missing file leaves the store as it is and is not an error.
func (s *snapshotter) load() error {
	start := time.Now()
	resources, err := readSnapshotFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		s.log.Info("no snapshot yet; starting empty", "path", s.path)
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.store.Load(resources); err != nil {
		return fmt.Errorf("load snapshot %s: %w", s.path, err)
	}
	s.mu.Lock()
	s.written = s.store.Changes()
	s.mu.Unlock()
	s.log.Info("snapshot loaded", "path", s.path, "resources", len(resources), "duration", time.Since(start))
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
	resources, changes := s.store.All()
	size, err := writeSnapshotFile(s.path, resources)
	if err != nil {
		return snapshotResult{}, err
	}
	s.written = changes
	res := snapshotResult{Path: s.path, Resources: len(resources), Bytes: size, Duration: time.Since(start)}
	s.log.Info("snapshot written", "path", s.path, "resources", res.Resources, "bytes", res.Bytes, "duration", res.Duration)
	return res, nil
}

// writeIfChanged writes only when the store changed since the last write.
func (s *snapshotter) writeIfChanged() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.store.Changes() == s.written {
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
