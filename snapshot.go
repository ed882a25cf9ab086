package resourcedir

import (
	"bufio"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"slices"
	"time"
)

// The snapshot file is: snapshotMagic, a big-endian uint32 format version,
// a gob stream, and a big-endian CRC-32C of everything before it. Every
// version keeps that frame, so that a reader checks any file's declared
// sizes and checksum before it believes the version (decodeSnapshot).
//
// Version 4 holds each base that namespaces share (the -seed file) once,
// and each namespace as its layer of changes on one: the file grows with
// the seed plus the writes, not the seed times the namespaces: a header,
// then chunks of every base's resources, then each namespace's replaced
// and own ones. Values go by the header's Fields, by name, so that a
// property added to the model later reads as null in an older file.
// Versions 1 to 3 came from development builds (values by enum number).
//
// A version 4 file of a build before content-derived seed Ids (3738481
// and older) holds the seed with the random Ids that build gave it, maybe
// once for every boot a namespace stayed on: restore makes those copies
// one seed with the file's Ids (keepSnapshotSeedIDs).
//
// Version 5 adds which base is the current seed (header.Current), which
// PUT /__admin/seed may have made at run time: it is written even when no
// namespace is on it. A version 4 file reads as having none.
const (
	snapshotMagic         = "resourcedir snapshot\n"
	snapshotVersion       = 5
	oldestSnapshotVersion = 4 // the first release's
	// snapshotChunkSize records go in one gob value: one value per record
	// costs a gob message each, one for all a second copy in memory. The
	// snapshotChunkBytes cut keeps a record far below maxSnapshotRecord.
	snapshotChunkSize  = 4096
	snapshotChunkBytes = 1 << 20
	// maxSnapshotRecord is the most a gob record may declare: a larger one
	// is refused before anything of its size is read.
	maxSnapshotRecord = 1 << 30
	snapshotHeaderLen = int64(len(snapshotMagic) + 4) // the magic and the version
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// snapshotBase is a base as saved: its resources, and the base they were frozen into (nil until restored).
type snapshotBase struct {
	Resources []*resource
	frozen    *base
}

// snapshotSpace is a namespace as saved and restored: its base (nil: none) and its layer on it.
type snapshotSpace struct {
	Name     string
	Base     *snapshotBase
	Replaced []replacedResource
	Own      []*resource
}

// resourceCount is the number of resources the namespaces show.
func resourceCount(spaces []snapshotSpace) int {
	n := 0
	for _, sp := range spaces {
		n += len(sp.Own)
		if sp.Base != nil {
			n += len(sp.Base.Resources)
		}
	}
	return n
}

type snapshotHeader struct {
	Written    time.Time
	Fields     []string // the string fields, in the order of each record's Values
	Bases      []int    // resource count of each base
	Namespaces []snapshotNamespace
	// Current is 1 + the index in Bases of the current seed; 0 for none
	// (an empty seed, or a version 4 file).
	Current int
}

type snapshotNamespace struct {
	Name          string
	Base          int // 1 + the index of the base in Bases; 0 for none
	Replaced, Own int
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

// encodeSnapshot writes the namespaces and the current seed (nil: none)
// to w in the snapshot format.
func encodeSnapshot(w io.Writer, spaces []snapshotSpace, current *snapshotBase) error {
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
	if current != nil && len(current.Resources) > 0 {
		if _, ok := baseIndex[current]; !ok {
			baseIndex[current] = len(bases)
			bases = append(bases, current)
			header.Bases = append(header.Bases, len(current.Resources))
		}
		header.Current = baseIndex[current] + 1
	}
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	bw.Write(binary.BigEndian.AppendUint32([]byte(snapshotMagic), snapshotVersion))
	enc := gob.NewEncoder(bw)
	if err := enc.Encode(header); err != nil {
		return fmt.Errorf("encode header: %w", err)
	}
	var chunk snapshotRecords
	var err error // the first failed section's; the sections after it write nothing
	section := func(n int, record func(i int) snapshotRecord) {
		for i := 0; i < n && err == nil; {
			chunk.Records = chunk.Records[:0]
			for size := 0; i < n && len(chunk.Records) < snapshotChunkSize && size < snapshotChunkBytes; i++ {
				rec := record(i)
				chunk.Records = append(chunk.Records, rec)
				size += len(rec.Address)
				for _, v := range rec.Values {
					size += len(v)
				}
			}
			if err = enc.Encode(&chunk); err != nil {
				err = fmt.Errorf("encode resources: %w", err)
			}
			// Encoding is CPU-bound and runs while the server serves: let
			// a waiting request have the CPU every chunk.
			runtime.Gosched()
		}
	}
	for _, b := range bases {
		section(len(b.Resources), func(i int) snapshotRecord { return recordOf(b.Resources[i], 0) })
	}
	for _, sp := range spaces {
		section(len(sp.Replaced), func(i int) snapshotRecord { return recordOf(sp.Replaced[i].res, sp.Replaced[i].pos) })
		section(len(sp.Own), func(i int) snapshotRecord { return recordOf(sp.Own[i], 0) })
	}
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err = w.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

// decodeSnapshot reads the snapshot of size bytes that r holds, believing nothing before it is
// checked: the magic, every gob record's length (checkDeclaredSizes), the checksum, only then the
// version. Nothing of a size the file declares is allocated before the file is known good.
func decodeSnapshot(r io.ReaderAt, size int64) (spaces []snapshotSpace, current *snapshotBase, err error) {
	if size == 0 {
		return nil, nil, errors.New("the file is empty")
	}
	head := make([]byte, min(size, snapshotHeaderLen))
	if _, err := io.ReadFull(io.NewSectionReader(r, 0, size), head); err != nil {
		return nil, nil, fmt.Errorf("read header: %w", err)
	}
	if n := min(len(head), len(snapshotMagic)); string(head[:n]) != snapshotMagic[:n] {
		return nil, nil, errors.New("not a resourcedir snapshot (bad magic)")
	}
	if size < snapshotHeaderLen+4 {
		return nil, nil, fmt.Errorf("the file is truncated (%d bytes)", size)
	}
	if err := checkDeclaredSizes(r, size); err != nil {
		return nil, nil, err
	}
	if err := checkChecksum(r, size); err != nil {
		return nil, nil, err
	}
	version := binary.BigEndian.Uint32(head[len(snapshotMagic):])
	switch {
	case version > snapshotVersion:
		return nil, nil, fmt.Errorf("format version %d is newer than this resourcedir reads (%d to %d); upgrade resourcedir",
			version, oldestSnapshotVersion, snapshotVersion)
	case version == 0:
		return nil, nil, fmt.Errorf("unknown format version 0 (this resourcedir reads %d to %d)", oldestSnapshotVersion, snapshotVersion)
	case version < oldestSnapshotVersion:
		return nil, nil, fmt.Errorf("format version %d was written by a development build of resourcedir, before the first release; this resourcedir reads %d to %d",
			version, oldestSnapshotVersion, snapshotVersion)
	}
	payload := size - snapshotHeaderLen - 4
	br := bufio.NewReaderSize(io.NewSectionReader(r, snapshotHeaderLen, payload), 1<<16)
	dec := gob.NewDecoder(br)
	var header snapshotHeader
	if err := dec.Decode(&header); err != nil {
		return nil, nil, fmt.Errorf("decode header: %w", err)
	}
	if version == 4 {
		header.Current = 0 // version 4 has no current seed, whatever a hostile file says
	}
	spaces, current, err = decodeV4(dec, header, int(payload))
	if err != nil {
		return nil, nil, err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, nil, errors.New("data after the resources its header announces")
	}
	return spaces, current, nil
}

// checkChecksum compares the CRC-32C of everything before the checksum
// with it. The holes of a sparse file (dataRun) are not read but added at
// once (crcZeros), so a sparse file of any size is checked in an instant.
func checkChecksum(r io.ReaderAt, size int64) error {
	end := size - 4
	buf := make([]byte, 256<<10)
	var crc uint32
	for at := int64(0); at < end; {
		data, hole := dataRun(r, at, end)
		crc = crcZeros(crc, data-at)
		for at = data; at < hole; {
			n, err := r.ReadAt(buf[:min(int64(len(buf)), hole-at)], at)
			crc = crc32.Update(crc, crcTable, buf[:n])
			at += int64(n)
			if err != nil && at < hole {
				return fmt.Errorf("read: %w", err)
			}
		}
	}
	var sum [4]byte
	if n, err := r.ReadAt(sum[:], end); n < len(sum) {
		return fmt.Errorf("read checksum: %w", err)
	}
	if binary.BigEndian.Uint32(sum[:]) != crc {
		return errors.New("checksum mismatch: the file is corrupt or truncated")
	}
	return nil
}

// crcZeros returns crc (as crc32.Update keeps it) updated with n zero
// bytes, in time of log n: zeros multiply the CRC's register by x^(8n)
// modulo the polynomial. Reflected, as CRC-32C is computed, bit 31 is x^0.
func crcZeros(crc uint32, n int64) uint32 {
	power, square := uint32(1)<<31, uint32(1)<<23 // x^0, x^8
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			power = crcMultiply(power, square)
		}
		square = crcMultiply(square, square)
	}
	return ^crcMultiply(power, ^crc)
}

// crcMultiply multiplies a and b, both reflected, modulo the Castagnoli polynomial.
func crcMultiply(a, b uint32) uint32 {
	var p uint32
	for bit := uint32(1) << 31; bit != 0; bit >>= 1 {
		if a&bit != 0 {
			p ^= b
		}
		b = b>>1 ^ crc32.Castagnoli*(b&1) // b times x, reduced
	}
	return p
}

// decodeV4 reads what follows the header of a version 4 or 5 file (5 adds
// the header's Current alone).
func decodeV4(dec *gob.Decoder, header snapshotHeader, payload int) ([]snapshotSpace, *snapshotBase, error) {
	// Every record takes bytes of the payload, so counts beyond its length
	// are lies, and must not size an allocation.
	total := 0
	counts := append([]int{}, header.Bases...)
	for _, ns := range header.Namespaces {
		counts = append(counts, ns.Replaced, ns.Own)
	}
	for _, n := range counts {
		if n < 0 || n > payload-total {
			return nil, nil, fmt.Errorf("bad resource count %d in the header", n)
		}
		total += n
	}
	fields := make([]int, len(header.Fields)) // the header's field i is ours fields[i], or -1
	for i, name := range header.Fields {
		fields[i] = slices.Index(fieldNames[:numStringFields], name)
	}
	read := &recordReader{dec: dec, fields: fields}
	bases := make([]*snapshotBase, len(header.Bases))
	for i, n := range header.Bases {
		rs, _, err := read.section(n)
		if err != nil {
			return nil, nil, fmt.Errorf("base %d: %w", i, err)
		}
		bases[i] = &snapshotBase{Resources: rs}
	}
	spaces := make([]snapshotSpace, len(header.Namespaces))
	seen := map[string]bool{}
	for i, ns := range header.Namespaces {
		if !validNamespaceName(ns.Name) || seen[ns.Name] || ns.Base < 0 || ns.Base > len(bases) {
			return nil, nil, fmt.Errorf("bad namespace %q in the header", ns.Name)
		}
		seen[ns.Name] = true
		sp := snapshotSpace{Name: ns.Name}
		if ns.Base > 0 {
			sp.Base = bases[ns.Base-1]
		}
		replaced, pos, err := read.section(ns.Replaced)
		if err != nil {
			return nil, nil, fmt.Errorf("namespace %s: %w", ns.Name, err)
		}
		twice := map[int32]bool{}
		for k, r := range replaced {
			if sp.Base == nil || pos[k] < 0 || int(pos[k]) >= len(sp.Base.Resources) || sp.Base.Resources[pos[k]].id() != r.id() {
				return nil, nil, fmt.Errorf("namespace %s: the changed seed resource %s is not in the seed", ns.Name, r.id())
			}
			// Two versions of one seed resource: a filter would find it twice.
			if twice[pos[k]] {
				return nil, nil, fmt.Errorf("namespace %s: the seed resource at position %d (%s) is replaced twice", ns.Name, pos[k], r.id())
			}
			twice[pos[k]] = true
			sp.Replaced = append(sp.Replaced, replacedResource{pos[k], r})
		}
		if sp.Own, _, err = read.section(ns.Own); err != nil {
			return nil, nil, fmt.Errorf("namespace %s: %w", ns.Name, err)
		}
		spaces[i] = sp
	}
	var current *snapshotBase
	if header.Current < 0 || header.Current > len(bases) {
		return nil, nil, fmt.Errorf("bad current seed %d in the header (%d bases)", header.Current, len(bases))
	}
	if header.Current > 0 {
		current = bases[header.Current-1]
	}
	return spaces, current, nil
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
		r.types[i] = requestorType(t)
		if _, ok := r.types[i].name(); !ok {
			return nil, fmt.Errorf("unknown requestor type id %d", t)
		}
	}
	return r, checkLoaded(r)
}

// checkLoaded checks what the store relies on: a canonical GUID as Id, Status Active or Inactive.
func checkLoaded(r *resource) error {
	if !isCanonicalGUID(r.id()) || r.isNull(fieldID) {
		return fmt.Errorf("a resource has the invalid Id %q", r.id())
	}
	if st, ok := r.value(fieldStatus); !ok || (st != statusActive && st != statusInactive) {
		return fmt.Errorf("resource %s has the invalid Status %q", r.id(), st)
	}
	return nil
}

// isCanonicalGUID reports whether id is a GUID as the store keys it: lower-case, 8-4-4-4-12.
func isCanonicalGUID(id string) bool {
	canonical, ok := parseGUID(id)
	return ok && canonical == id
}

// checkDeclaredSizes refuses a snapshot whose content and size disagree
// before any size it declares is believed (a valid header on a sparse 60
// GB file must take neither 60 GB nor seconds). The gob records' lengths,
// the only sizes declared, must each be 1 to maxSnapshotRecord, start with
// a type id (never 0, as a sparse file's zeros are), and fill the file.
func checkDeclaredSizes(r io.ReaderAt, size int64) error {
	end := size - 4 // the checksum
	var prefix [10]byte
	for at := snapshotHeaderLen; at < end; {
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
		case length > maxSnapshotRecord:
			return fmt.Errorf("the file is corrupt or truncated: the record at byte %d declares %d bytes, "+
				"more than the %d a record may hold (this file is %d bytes)", at, length, maxSnapshotRecord, size)
		case width < n && prefix[width] == 0:
			return fmt.Errorf("the file is corrupt or truncated: the record at byte %d has no type (this file is %d bytes)", at, size)
		}
		at += int64(width) + int64(length)
	}
	return nil
}

// gobLength decodes the unsigned integer that starts a gob message: a byte below 0x80, or minus
// the count of big-endian bytes that follow. width is 0 when b does not hold one.
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
