package resourcedir

// The base a store is a layer over: the seed, frozen once and shared by
// every namespace, its resources with Ids derived from their content, and
// the folded values and indexes of each field.

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// indexedFields are the fields propTable marks for an exact-match index:
// those callers filter on to find a resource (spec 4.3), and Status. Id has
// its own map.
var indexedFields = func() []field {
	var fs []field
	for f := range numStringFields {
		if specOf[f].indexed {
			fs = append(fs, f)
		}
	}
	return fs
}()

// fold is the one folding rule of the directory: filters, sorts and indexes
// compare what it gives (lower-cased, then compared by code point).
func fold(s string) string { return strings.ToLower(s) }

// appendFold appends fold(s) to dst; ASCII, the usual case, without an
// allocation (strings.ToLower allocates a string for every value with a
// capital, and was 40% of freezing a seed).
func appendFold(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf { // not ASCII: the i bytes folded so far go again
			return append(dst[:len(dst)-i], fold(s)...)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// entry is a stored resource with its folded values, which filters and sorts read.
type entry struct {
	res  *resource
	fold [numStringFields]string
}

func newEntry(r *resource) *entry {
	// One string holds every folded value: a create made a string per
	// value with a capital letter.
	var buf [512]byte
	text := buf[:0]
	var ends [numStringFields]int
	for f := range numStringFields {
		text = appendFold(text, r.vals[f])
		ends[f] = len(text)
	}
	all, at := string(text), 0
	e := &entry{res: r}
	for f := range numStringFields {
		e.fold[f], at = all[at:ends[f]], ends[f]
	}
	return e
}

// folded is what a filter reads of a field: its folded text, and false for
// null. StatusId reads as "1" or "2".
func (e *entry) folded(f field) (string, bool) {
	if f == fieldStatusID {
		return strconv.Itoa(statusIDOf(e.fold[fieldStatus])), true
	}
	return e.fold[f], !e.res.null[f]
}

// postings maps a folded value to the ascending positions that hold it.
type postings map[string][]int32

// fieldIndexes are the exact-match indexes of indexedFields; nil for others.
type fieldIndexes [numStringFields]postings

func (ix *fieldIndexes) add(e *entry, pos int32) {
	for _, f := range indexedFields {
		if e.res.null[f] {
			continue // eq never matches null
		}
		if ix[f] == nil {
			ix[f] = postings{}
		}
		list := ix[f][e.fold[f]]
		at, _ := slices.BinarySearch(list, pos)
		ix[f][e.fold[f]] = slices.Insert(list, at, pos)
	}
}

func (ix *fieldIndexes) remove(e *entry, pos int32) {
	for _, f := range indexedFields {
		if e.res.null[f] {
			continue
		}
		list := ix[f][e.fold[f]]
		if at, found := slices.BinarySearch(list, pos); found {
			list = slices.Delete(list, at, at+1)
		}
		if len(list) == 0 {
			delete(ix[f], e.fold[f])
		} else {
			ix[f][e.fold[f]] = list
		}
	}
}

// base is a frozen directory that layers share: never written once built.
// Its rows are values, back to back, so that a scan reads them in order.
type base struct {
	rows  []entry
	byID  map[string]int32
	index fieldIndexes
	// derived marks the rows whose Id the seed did not give (seedIDs); nil
	// when it gave every one. A snapshot that an older resourcedir wrote
	// holds other Ids there, and restore must tell them from a different seed.
	derived []bool
}

var emptyBase = &base{}

// derivedAt reports whether the Id of row i is one the seed did not give.
func (b *base) derivedAt(i int) bool { return b.derived != nil && b.derived[i] }

// newBase freezes resources, in order; one without an Id gets one derived
// from what it holds (seedIDs), the same at every boot.
func newBase(resources []*resource) (*base, error) {
	b := &base{rows: make([]entry, 0, len(resources)), byID: make(map[string]int32, len(resources))}
	given := make([]string, len(resources)) // canonical Ids given, "" where none
	for i, r := range resources {
		if r.id() == "" || r.isNull(fieldID) {
			continue
		}
		id, ok := parseGUID(r.id())
		if !ok {
			return nil, fmt.Errorf("resource %d: Id %q is not a GUID", i, r.id())
		}
		if _, taken := b.byID[id]; taken {
			return nil, &errDuplicateID{Index: i, ID: id}
		}
		b.byID[id], given[i] = -1, id // taken; the position is set below
	}
	derived := seedIDs{}
	for i, r := range resources {
		c := *r // the caller's resources are left as they are
		id := given[i]
		if id == "" {
			id = derived.next(&c, b.byID)
			if b.derived == nil {
				b.derived = make([]bool, len(resources))
			}
			b.derived[i] = true
		}
		c.set(fieldID, id, true)
		b.byID[c.id()] = int32(i)
		b.rows = append(b.rows, entry{res: &c})
	}
	for f := range numStringFields {
		b.freezeField(f)
	}
	for i := range b.rows {
		b.index.add(&b.rows[i], int32(i))
	}
	return b, nil
}

// seedIDs derives the Ids the seed does not give: a hash of the resource's
// content (contentHash, not its place in the file) and of how many of the
// same content came before it, which the map counts. The same seed gives
// the same Ids at every boot, with -id-seed or without, so a snapshot's
// namespaces and the new ones share one seed; an edit of one resource
// changes that one's Id alone.
type seedIDs map[[sha256.Size]byte]uint32

func (d seedIDs) next(r *resource, taken map[string]int32) string {
	content := contentHash(r)
	for {
		k := d[content]
		d[content] = k + 1
		var in [sha256.Size + 4]byte
		copy(in[:], content[:])
		binary.BigEndian.PutUint32(in[sha256.Size:], k)
		sum := sha256.Sum256(in[:])
		var u uuid.UUID
		copy(u[:], sum[:16])
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
		id := u.String()
		if _, ok := taken[id]; !ok {
			return id
		}
	}
}

// contentHash is the SHA-256 of r's content, Id aside: each non-null
// value under its field's name, then Types and Address. A property added to
// the model later is null in an older seed, and leaves its hash as it was.
func contentHash(r *resource) [sha256.Size]byte {
	var buf [1024]byte
	b := buf[:0]
	key := func(name string, n int) { // the n bytes of the value follow
		b = append(b, name...)
		b = binary.AppendUvarint(append(b, 0), uint64(n))
	}
	for f := range numStringFields {
		if f != fieldID && !r.null[f] {
			key(fieldNames[f], len(r.vals[f]))
			b = append(b, r.vals[f]...)
		}
	}
	key("Types", len(r.types))
	for _, t := range r.types {
		b = append(b, byte(t))
	}
	if r.address != nil {
		key("Address", len(r.address))
		b = append(b, r.address...)
	}
	return sha256.Sum256(b)
}

// freezeField fills field f's folded values, cut out of one string of them
// all, in order: a scan of a field then reads its text straight through, not
// from strings spread over the heap (a contains over 100,000 took twice as
// long).
func (b *base) freezeField(f field) {
	var text []byte
	ends := make([]int, len(b.rows))
	for i := range b.rows {
		text = appendFold(text, b.rows[i].res.vals[f])
		ends[i] = len(text)
	}
	all, at := string(text), 0
	for i := range b.rows {
		b.rows[i].fold[f], at = all[at:ends[i]], ends[i]
	}
}
