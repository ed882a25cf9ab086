package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"sync"
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
	c.Text = append(c.Text, r.text...)
	for f := field(0); f < numStringFields; f++ {
		c.Lens = append(c.Lens, uint32(len(r.str(f))))
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
		r.text = string(text[:size])
		at := uint32(0)
		for f, l := range lens {
			at += l
			r.ends[f] = at
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
