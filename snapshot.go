package resourcedir

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
	"time"
)

// The snapshot file is: snapshotMagic, a big-endian uint32 format version,
// a gob stream, and a big-endian CRC-32C of everything before it.
//
// Version 4 holds the bases that namespaces share (the -seed file) once,
// and each namespace as its layer of changes on one of them, so that the
// file grows with the seed plus the writes, not the seed times the
// namespaces. The gob stream is a snapshotHeader, then snapshotRecords
// chunks: every base's resources, then each namespace's replaced and own
// resources, in the header's order. A record's string values follow the
// header's Fields, by name, so that a property added to the model later
// reads as null in an older file instead of breaking it.
//
// Versions 2 and 3 (every namespace a full copy) still load: snapshotv3.go.
const (
	snapshotMagic   = "resourcedir snapshot\n"
	snapshotVersion = 4
	// oldestSnapshotVersion is the oldest format that still loads; format
	// 1 never left development.
	oldestSnapshotVersion = 2
	// snapshotChunkSize records go in one gob value: one value per record
	// costs a gob message each, one value for all a second copy in memory.
	snapshotChunkSize = 4096
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// snapshotBase is a base as the snapshot holds it: its resources, and the
// base they were frozen into when the server has it (nil when read from a
// file, until restored).
type snapshotBase struct {
	Resources []*resource
	frozen    *base
}

// snapshotSpace is one namespace as saved and restored: the base it is
// layered on (nil: none, an empty directory) and its layer.
type snapshotSpace struct {
	Name     string
	Base     *snapshotBase
	Replaced []replacedResource
	Own      []*resource
	// reseed: the namespace starts from the seed. Formats 2 and 3 cannot
	// tell a cleared namespace from one never written: an empty one starts
	// from the seed again, as it did when they were current.
	reseed bool
}

// count is the number of resources the namespace shows.
func (sp *snapshotSpace) count() int {
	n := len(sp.Own)
	if sp.Base != nil {
		n += len(sp.Base.Resources)
	}
	return n
}

type snapshotHeader struct {
	Written time.Time
	// Fields names the string fields in the order of each record's Values.
	Fields     []string
	Bases      []int // resource count of each base
	Namespaces []snapshotNamespace

	// Count and the namespaces' Count are those of versions 2 and 3.
	Count int
}

type snapshotNamespace struct {
	Name string
	// Base is 1 + the index of the base in Bases; 0 for none.
	Base          int
	Replaced, Own int
	Count         int // versions 2 and 3: the namespace's resources
}

// snapshotRecords is one chunk of records, all of one section.
type snapshotRecords struct {
	Records []snapshotRecord
}

type snapshotRecord struct {
	Pos     int32    // a replaced resource's position in its base
	Values  []string // by the header's Fields
	Nulls   []uint8  // indexes in Fields of the null values
	Types   []uint8
	Address []byte // nil: null
}

func recordOf(r *resource, pos int32) snapshotRecord {
	rec := snapshotRecord{Pos: pos, Values: r.vals[:], Address: r.address}
	for f := range numStringFields {
		if r.null[f] {
			rec.Nulls = append(rec.Nulls, uint8(f))
		}
	}
	for _, t := range r.types {
		rec.Types = append(rec.Types, uint8(t))
	}
	return rec
}

// encodeSnapshot writes the namespaces to w in the snapshot format.
func encodeSnapshot(w io.Writer, spaces []snapshotSpace) error {
	header := snapshotHeader{Written: time.Now().UTC(), Fields: fieldNames[:numStringFields], Namespaces: make([]snapshotNamespace, len(spaces))}
	var bases []*snapshotBase
	baseIndex := map[*snapshotBase]int{}
	for i, sp := range spaces {
		ns := snapshotNamespace{Name: sp.Name, Replaced: len(sp.Replaced), Own: len(sp.Own)}
		if sp.Base != nil {
			if _, ok := baseIndex[sp.Base]; !ok {
				baseIndex[sp.Base] = len(bases)
				bases = append(bases, sp.Base)
				header.Bases = append(header.Bases, len(sp.Base.Resources))
			}
			ns.Base = baseIndex[sp.Base] + 1
		}
		header.Namespaces[i] = ns
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
	var chunk snapshotRecords
	section := func(n int, record func(i int) snapshotRecord) error {
		for start := 0; start < n; start += snapshotChunkSize {
			chunk.Records = chunk.Records[:0]
			for i := start; i < min(start+snapshotChunkSize, n); i++ {
				chunk.Records = append(chunk.Records, record(i))
			}
			if err := enc.Encode(&chunk); err != nil {
				return fmt.Errorf("encode resources: %w", err)
			}
			// Encoding is CPU-bound and runs while the server serves: let
			// a waiting request have the CPU every chunk.
			runtime.Gosched()
		}
		return nil
	}
	for _, b := range bases {
		if err := section(len(b.Resources), func(i int) snapshotRecord { return recordOf(b.Resources[i], 0) }); err != nil {
			return err
		}
	}
	for _, sp := range spaces {
		if err := section(len(sp.Replaced), func(i int) snapshotRecord { return recordOf(sp.Replaced[i].res, sp.Replaced[i].pos) }); err != nil {
			return err
		}
		if err := section(len(sp.Own), func(i int) snapshotRecord { return recordOf(sp.Own[i], 0) }); err != nil {
			return err
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
	// A version this resourcedir cannot read is refused before the rest is
	// read: nothing says how big its parts are.
	switch {
	case version > snapshotVersion:
		return nil, fmt.Errorf("format version %d is newer than this resourcedir reads (%d to %d); upgrade resourcedir",
			version, oldestSnapshotVersion, snapshotVersion)
	case version < oldestSnapshotVersion:
		return nil, fmt.Errorf("unknown format version %d (this resourcedir reads %d to %d)", version, oldestSnapshotVersion, snapshotVersion)
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
	br := bytes.NewReader(payload)
	dec := gob.NewDecoder(br)
	var header snapshotHeader
	if err := dec.Decode(&header); err != nil {
		return nil, fmt.Errorf("decode header: %w", err)
	}
	var spaces []snapshotSpace
	var err error
	if version < 4 {
		spaces, err = decodeV3(dec, header, len(payload))
	} else {
		spaces, err = decodeV4(dec, header, len(payload))
	}
	if err != nil {
		return nil, err
	}
	if br.Len() != 0 {
		return nil, errors.New("data after the resources its header announces")
	}
	return spaces, nil
}

func decodeV4(dec *gob.Decoder, header snapshotHeader, payload int) ([]snapshotSpace, error) {
	// Every record takes bytes of the payload, so counts beyond its length
	// are lies, and must not size an allocation.
	total := 0
	counts := append([]int{}, header.Bases...)
	for _, ns := range header.Namespaces {
		counts = append(counts, ns.Replaced, ns.Own)
	}
	for _, n := range counts {
		if n < 0 || n > payload-total {
			return nil, fmt.Errorf("bad resource count %d in the header", n)
		}
		total += n
	}
	fields := make([]int, len(header.Fields)) // the header's field i is ours fields[i], or -1
	for i, name := range header.Fields {
		fields[i] = -1
		if f, ok := lookupField(name); ok && f < numStringFields && fieldNames[f] == name {
			fields[i] = int(f)
		}
	}
	read := &recordReader{dec: dec, fields: fields}
	bases := make([]*snapshotBase, len(header.Bases))
	for i, n := range header.Bases {
		rs, _, err := read.section(n)
		if err != nil {
			return nil, fmt.Errorf("base %d: %w", i, err)
		}
		bases[i] = &snapshotBase{Resources: rs}
	}
	spaces := make([]snapshotSpace, len(header.Namespaces))
	seen := map[string]bool{}
	for i, ns := range header.Namespaces {
		if !validNamespaceName(ns.Name) || seen[ns.Name] || ns.Base < 0 || ns.Base > len(bases) {
			return nil, fmt.Errorf("bad namespace %q in the header", ns.Name)
		}
		seen[ns.Name] = true
		sp := snapshotSpace{Name: ns.Name}
		if ns.Base > 0 {
			sp.Base = bases[ns.Base-1]
		}
		replaced, pos, err := read.section(ns.Replaced)
		if err != nil {
			return nil, fmt.Errorf("namespace %s: %w", ns.Name, err)
		}
		for k, r := range replaced {
			if sp.Base == nil || pos[k] < 0 || int(pos[k]) >= len(sp.Base.Resources) || sp.Base.Resources[pos[k]].id() != r.id() {
				return nil, fmt.Errorf("namespace %s: the changed seed resource %s is not in the seed", ns.Name, r.id())
			}
			sp.Replaced = append(sp.Replaced, replacedResource{pos[k], r})
		}
		if sp.Own, _, err = read.section(ns.Own); err != nil {
			return nil, fmt.Errorf("namespace %s: %w", ns.Name, err)
		}
		spaces[i] = sp
	}
	return spaces, nil
}

// recordReader reads the chunks of one section after another.
type recordReader struct {
	dec    *gob.Decoder
	fields []int
	read   int
}

// section reads n records, which the writer put in chunks of their own.
func (rr *recordReader) section(n int) ([]*resource, []int32, error) {
	out := make([]*resource, 0, n)
	var pos []int32
	for len(out) < n {
		var chunk snapshotRecords
		if err := rr.dec.Decode(&chunk); err != nil {
			return nil, nil, fmt.Errorf("decode resources after %d: %w", rr.read, err)
		}
		if len(chunk.Records) == 0 || len(chunk.Records) > n-len(out) {
			return nil, nil, fmt.Errorf("a chunk of %d resources where %d remain", len(chunk.Records), n-len(out))
		}
		for _, rec := range chunk.Records {
			r, err := rr.resource(rec)
			if err != nil {
				return nil, nil, fmt.Errorf("resource %d: %w", rr.read, err)
			}
			out = append(out, r)
			pos = append(pos, rec.Pos)
			rr.read++
		}
	}
	return out, pos, nil
}

func (rr *recordReader) resource(rec snapshotRecord) (*resource, error) {
	if len(rec.Values) != len(rr.fields) {
		return nil, fmt.Errorf("%d values for %d fields", len(rec.Values), len(rr.fields))
	}
	r := &resource{address: rec.Address}
	for f := range numStringFields {
		r.null[f] = true // a field the file does not have is null
	}
	for i, v := range rec.Values {
		if f := rr.fields[i]; f >= 0 {
			r.vals[f], r.null[f] = v, false
		}
	}
	for _, i := range rec.Nulls {
		if int(i) >= len(rr.fields) {
			return nil, fmt.Errorf("null field %d of %d", i, len(rr.fields))
		}
		if f := rr.fields[i]; f >= 0 {
			if r.vals[f] != "" {
				return nil, errors.New("a null field has a value")
			}
			r.null[f] = true
		}
	}
	r.types = make([]requestorType, len(rec.Types))
	for i, t := range rec.Types {
		if r.types[i] = requestorType(t); !knownRequestorType(r.types[i]) {
			return nil, fmt.Errorf("unknown requestor type id %d", t)
		}
	}
	return r, checkLoaded(r)
}

// checkLoaded checks what the store relies on: a canonical GUID as Id, a
// Status of Active or Inactive.
func checkLoaded(r *resource) error {
	if !isCanonicalGUID(r.id()) || r.isNull(fieldID) {
		return fmt.Errorf("a resource has the invalid Id %q", r.id())
	}
	if st, ok := r.value(fieldStatus); !ok || (st != statusActive && st != statusInactive) {
		return fmt.Errorf("resource %s has the invalid Status %q", r.id(), st)
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
	if string(head[:len(snapshotMagic)]) != snapshotMagic || version < oldestSnapshotVersion || version > snapshotVersion {
		return nil // not gob, or not gob we know: decodeSnapshot refuses it before reading it
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
