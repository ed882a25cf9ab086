package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
	"unsafe"

	"github.com/google/uuid"
)

// check verifies the store's invariants under its lock: rows, byID and the
// eq indexes describe the same resources, exactly once each. Tests call it
// after every kind of mutation.
func (s *Store) check() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var errs []error
	fail := func(format string, args ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}

	// Slots: every one holds a distinct, well-formed resource whose Id maps
	// back to it.
	seen := make(map[*Resource]int, len(s.rows))
	for slot, r := range s.rows {
		if r == nil {
			fail("slot %d is empty", slot)
			continue
		}
		if prev, dup := seen[r]; dup {
			fail("slots %d and %d hold the same resource", prev, slot)
		}
		seen[r] = slot
		if r.nulls>>numStringFields != 0 {
			fail("slot %d: null bits %b beyond the string fields", slot, r.nulls)
		}
		for f := field(0); f < numStringFields; f++ {
			if slot >= s.cols[f].len() {
				continue // reported below
			}
			fold, ok := s.cols[f].get(int32(slot))
			if r.isNull(f) {
				if r.str(f) != "" || ok || fold != "" {
					fail("slot %d: %s is null but holds %q, column %q (non-null %v)", slot, f, r.str(f), fold, ok)
				}
				continue
			}
			if !ok || fold != strings.ToLower(r.str(f)) {
				fail("slot %d: %s column holds %q (non-null %v), not the lower case of %q", slot, f, fold, ok, r.str(f))
			}
		}
		id := r.ID()
		if r.isNull(fieldID) {
			fail("slot %d: Id is null", slot)
		} else if u, err := uuid.Parse(id); err != nil || u.String() != id {
			fail("slot %d: Id %q is not a canonical lower-case GUID", slot, id)
		}
		if st, ok := r.value(fieldStatus); !ok || (st != statusActive && st != statusInactive) {
			fail("slot %d: Status %q (non-null %v) is not canonical", slot, st, ok)
		}
		if got, ok := s.byID.find(id, s.rowIDs()); !ok {
			fail("slot %d: Id %s is not in byID", slot, id)
		} else if int(got) != slot {
			fail("slot %d: byID[%s] = %d", slot, id, got)
		}
	}
	if s.byID.len() != len(s.rows) {
		fail("byID has %d entries for %d resources", s.byID.len(), len(s.rows))
	}
	inByID := make([]int, len(s.rows))
	for slot := range s.byID.all {
		if slot < 0 || int(slot) >= len(s.rows) {
			fail("byID holds slot %d, outside the %d slots", slot, len(s.rows))
		} else if inByID[slot]++; inByID[slot] > 1 {
			fail("byID holds slot %d twice", slot)
		}
	}
	if err := s.byID.check(s.rowIDs()); err != nil {
		fail("byID: %v", err)
	}

	// Columns: one entry per slot, and text that holds exactly the live
	// entries plus the garbage it counts.
	if c := &s.cols[fieldID]; c.len() != 0 || len(c.text) != 0 {
		fail("the Id column holds %d slots, %d bytes; the Ids are read from the resources", c.len(), len(c.text))
	}
	for f := fieldID + 1; f < numStringFields; f++ {
		c := &s.cols[f]
		if c.len() != len(s.rows) {
			fail("%s column has %d slots for %d resources", f, c.len(), len(s.rows))
			continue
		}
		if (c.at == nil) == (c.wide == nil) && len(s.rows) > 0 {
			fail("%s column has both or neither narrow and wide offsets", f)
		}
		live := 0
		starts := make(map[int]bool, len(s.rows))
		for slot := range int32(c.len()) {
			off := c.offset(slot)
			if off < 0 || off >= len(c.text) {
				fail("%s column: slot %d starts at %d, outside its %d bytes", f, slot, off, len(c.text))
				continue
			}
			if starts[off] {
				fail("%s column: two slots start at %d", f, off)
			}
			starts[off] = true
			if n := c.entryLen(off); off+n > len(c.text) {
				fail("%s column: slot %d runs past the text", f, slot)
			} else {
				live += n
			}
		}
		if live+c.garbage != len(c.text) {
			fail("%s column: %d live bytes and %d garbage in %d bytes of text", f, live, c.garbage, len(c.text))
		}
		if c.garbage > len(c.text)/2 && c.garbage > 1<<16 {
			fail("%s column: %d bytes of garbage in %d were not compacted", f, c.garbage, len(c.text))
		}
	}
	inColumn := func(key string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(key)))
		for f := range s.cols {
			t := s.cols[f].text
			if len(key) > 0 && cap(t) > 0 && p >= uintptr(unsafe.Pointer(&t[:1][0])) && p < uintptr(unsafe.Pointer(&t[:1][0]))+uintptr(cap(t)) {
				return true
			}
		}
		return false
	}

	// Indexes: exactly the fields of indexedFields have one; every posting
	// list is non-empty and strictly ascending and points at resources with
	// that folded, non-null value; every non-null value is indexed once.
	var indexed [numStringFields]bool
	for _, f := range indexedFields {
		indexed[f] = true
	}
	for f := field(0); f < numStringFields; f++ {
		if indexed[f] && s.index[f] == nil {
			fail("%s has no index", f)
		}
		if !indexed[f] && s.index[f] != nil {
			fail("%s is not an indexed field but has an index of %d keys", f, s.index[f].one.len()+len(s.index[f].many))
		}
	}
	count := make([]int, len(s.rows))
	for _, f := range indexedFields {
		clear(count)
		entries, want := 0, 0
		for key, p := range s.index[f].many {
			if p.n < 2 {
				fail("%s index: %q has %d slots; lone slots belong in one", f, key, p.n)
			}
			if _, twice := s.index[f].one.find(key, &s.cols[f]); twice {
				fail("%s index: %q is in both one and many", f, key)
			}
			if err := p.check(); err != nil {
				fail("%s index: %q: %v", f, key, err)
			}
		}
		if err := s.index[f].one.check(&s.cols[f]); err != nil {
			fail("%s index: %v", f, err)
		}
		for key, p := range s.index[f].all(&s.cols[f]) {
			if inColumn(key) {
				fail("%s index: the key %q points into a column, which it would pin", f, key)
			}
			list := p.flat()
			if len(list) == 0 {
				fail("%s index: empty posting list for %q", f, key)
			}
			for i, slot := range list {
				entries++
				if i > 0 && list[i-1] >= slot {
					fail("%s index: posting list for %q is not strictly ascending: %v", f, key, list)
				}
				if slot < 0 || int(slot) >= len(s.rows) {
					fail("%s index: %q points at slot %d, outside the %d slots", f, key, slot, len(s.rows))
					continue
				}
				count[slot]++
				r := s.rows[slot]
				switch {
				case r == nil:
				case r.isNull(f):
					fail("%s index: %q points at slot %d, whose %s is null", f, key, slot, f)
				case strings.ToLower(r.str(f)) != key:
					fail("%s index: %q points at slot %d, whose %s is %q", f, key, slot, f, r.str(f))
				}
			}
		}
		for slot, r := range s.rows {
			if r == nil || r.isNull(f) {
				continue
			}
			want++
			if count[slot] != 1 {
				fail("%s index: slot %d (%q) is indexed %d times", f, slot, r.str(f), count[slot])
			}
		}
		if entries != want {
			fail("%s index: %d entries for %d non-null values", f, entries, want)
		}
	}
	return errors.Join(errs...)
}

// check verifies the shape of a posting list: its count, and blocks of 1
// to 2*postingBlock slots ascending across the whole list.
func (p postings) check() error {
	n := 0
	for i, b := range p.blocks {
		n += len(b)
		if len(b) == 0 || len(b) > 2*postingBlock {
			return fmt.Errorf("block %d holds %d slots, want 1 to %d", i, len(b), 2*postingBlock)
		}
		for k := range b {
			prev := int32(-1)
			switch {
			case k > 0:
				prev = b[k-1]
			case i > 0:
				prev = p.blocks[i-1][len(p.blocks[i-1])-1]
			}
			if b[k] <= prev {
				return fmt.Errorf("block %d: slot %d follows %d", i, b[k], prev)
			}
		}
	}
	if n != p.n {
		return fmt.Errorf("counts %d slots but its blocks hold %d", p.n, n)
	}
	return nil
}

// folded gives a resource alone to a filter or a sort, as the store's
// columns give a stored one: the tests evaluate filters on resources that
// are in no store.
func (r *Resource) folded(f field) (string, bool) {
	if f == fieldStatusID {
		return statusIDText(strings.ToLower(r.str(fieldStatus))), true
	}
	if r.isNull(f) {
		return "", false
	}
	return strings.ToLower(r.str(f)), true
}

// all yields every value of the index with its slots.
// The keys of one are copied out of the column, as a map's key would be.
func (ix *fieldIndex) all(keys *column) func(yield func(key string, slots postings) bool) {
	return func(yield func(key string, slots postings) bool) {
		for slot := range ix.one.all {
			if !yield(strings.Clone(keys.slotKey(slot)), onePosting(slot)) {
				return
			}
		}
		for key, v := range ix.many {
			if !yield(key, *v) {
				return
			}
		}
	}
}

// indexContents returns what byID and the indexes hold, as plain maps
// that compare equal whatever the layout of their tables.
func (s *Store) indexContents() (byID map[string]int32, index [numStringFields]map[string][]int32) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	byID = make(map[string]int32, s.byID.len())
	for slot := range s.byID.all {
		byID[s.rows[slot].ID()] = slot
	}
	for _, f := range indexedFields {
		index[f] = make(map[string][]int32)
		for key, p := range s.index[f].all(&s.cols[f]) {
			index[f][key] = slices.Clone(p.flat())
		}
	}
	return byID, index
}

// Get returns the resource with the given lower-case Id.
func (s *Store) Get(id string) (*Resource, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	slot, ok := s.byID.find(id, s.rowIDs())
	if !ok {
		return nil, false
	}
	return s.rows[slot], true
}

// TestPostings adds and removes slots at random in lists long enough to
// split and merge blocks, against a plain sorted slice.
func TestPostings(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(7, 14))
	for _, span := range []int32{10, 3 * postingBlock, 20 * postingBlock} {
		var p postings
		var want []int32
		for step := range 40 * postingBlock {
			slot := rng.Int32N(span)
			// Appends at the end, as creates do, and removals that empty lists.
			if step%5 == 0 {
				slot = span + int32(step)
			}
			i, found := slices.BinarySearch(want, slot)
			if found && rng.IntN(3) > 0 {
				want = slices.Delete(want, i, i+1)
				if !p.remove(slot) {
					t.Fatalf("span %d step %d: remove(%d) = false for a held slot", span, step, slot)
				}
			} else if !found {
				want = slices.Insert(want, i, slot)
				p.add(slot)
			}
			if p.remove(-1) || p.remove(span+int32(40*postingBlock)) {
				t.Fatalf("span %d step %d: removed a slot never added", span, step)
			}
			if step%97 == 0 || step == 40*postingBlock-1 {
				if err := p.check(); err != nil {
					t.Fatalf("span %d step %d: %v", span, step, err)
				}
				if got := p.flat(); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("span %d step %d: holds %v, want %v", span, step, got, want)
				}
				off, size := rng.IntN(len(want)+2), 1+rng.IntN(3*postingBlock)
				wantPage := want[min(off, len(want)):min(off+size, len(want))]
				if got := p.page(off, size); !slices.Equal(got, wantPage) {
					t.Fatalf("span %d step %d: page(%d, %d) = %v, want %v", span, step, off, size, got, wantPage)
				}
			}
		}
		if len(p.blocks) < 2 && span > postingBlock {
			t.Errorf("span %d: the list never spread over blocks", span)
		}
	}
}

// TestAppendFold holds the one folding rule to strings.ToLower.
func TestAppendFold(t *testing.T) {
	for _, s := range []string{
		"", "a", "Ada LOVELACE", "EMP-00000042", "@[`{", "Émile", "ZOË", "İstanbul", "ΣΑΣ", "\u212Aelvin",
		"\xff\xfeAB", "mixed ascii then Ñ", strings.Repeat("Ab", 200),
		"@AZ[`az{", "ABCDEFGH", "ABCDEFGHÉ", "abcdefgh\x7f\x00AZ", "EMP-00000042@EXAMPLE.ORG", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f",
	} {
		got := appendFold([]byte("prefix"), s)
		if want := "prefix" + strings.ToLower(s); string(got) != want {
			t.Errorf("appendFold(%q) = %q, want %q", s, got, want)
		}
	}
	// Every byte value, and every rune below 256, at every place of an
	// eight-byte word.
	for c := range 256 {
		for at := range 9 {
			for _, mid := range []string{string([]byte{byte(c)}), string(rune(c))} {
				in := strings.Repeat("Q", at) + mid + "qQ"
				if got, want := string(appendFold(nil, in)), strings.ToLower(in); got != want {
					t.Fatalf("appendFold(%q) = %q, want %q", in, got, want)
				}
			}
		}
	}
}

func TestIndexNeedle(t *testing.T) {
	for _, tc := range []struct {
		text, needle string
	}{
		{"", "a"}, {"", "ab"}, {"a", "a"}, {"a", "ab"}, {"ab", "ab"}, {"xab", "ab"},
		{"aaaaaaaaab", "ab"}, {"aaaaaaaab", "ab"}, {"aaaaaaaa" + "b", "ab"}, {"1234567a" + "b", "ab"},
		{"12345678ab", "ab"}, {"ababababab", "bab"}, {"abcdefghijklmnopqrstuvwxyz", "xyz"},
		{"abcdefghijklmnopqrstuvwxyz", "yz"}, {"abcdefghijklmnopqrstuvwxyz", "z"}, {"\x00\x00\x01\x00", "\x01\x00"},
		{"\xff\xfe\xff\xff", "\xff\xff"}, {"\x80\x81\x80\x81\x80\x81\x80\x81\x80\x80", "\x80\x80"},
		{"ann hannah joanne", "ann"}, {"an an an an an an", "ann"}, {"qzqzqzqzqzqzqzqzqzq", "zqz"},
		{"eeeeeeeeeeeeeeeeeeeeeeeeq", "eeeq"}, {"qeeeeeeeeeeeeeeeeeeeeeeee", "qeee"}, {"Ann", "ann"},
	} {
		if got, want := indexNeedle([]byte(tc.text), tc.needle, rarestPair(tc.needle)), strings.Index(tc.text, tc.needle); got != want {
			t.Errorf("indexNeedle(%q, %q) = %d, want %d", tc.text, tc.needle, got, want)
		}
	}
	for needle, want := range map[string]int{"x": 0, "ab": 0, "ann": 1, "the": 0, "a.q": 1, "ée": 0, "eeqe": 1} {
		if got := rarestPair(needle); got != want {
			t.Errorf("rarestPair(%q) = %d, want %d", needle, got, want)
		}
	}
	// Few distinct bytes, so that needles occur; the rarest pair of a
	// needle is anywhere in it.
	rng := mrand.New(mrand.NewPCG(5, 5))
	for range 50_000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = "aeq\x00\xff"[rng.IntN(5)]
		}
		needle := make([]byte, 1+rng.IntN(5))
		for i := range needle {
			needle[i] = "aeq\x00\xff"[rng.IntN(5)]
		}
		if got, want := indexNeedle(b, string(needle), rarestPair(string(needle))), bytes.Index(b, needle); got != want {
			t.Fatalf("indexNeedle(%q, %q) = %d, want %d", b, needle, got, want)
		}
	}
}

// TestColumnEachContaining checks the search of contains over runs of a
// column's text against a search per value, where a match could run
// across the length prefix of an entry or into the next entry.
func TestColumnEachContaining(t *testing.T) {
	long := strings.Repeat("ab", 100) // a two-byte length prefix
	for _, tc := range []struct {
		name   string
		values []any // string, or nil for null
		needle string
		want   []int32
	}{
		{"none", []any{"abc", "def"}, "x", nil},
		{"every slot", []any{"xa", "ax", "x"}, "x", []int32{0, 1, 2}},
		{"twice in one value counts once", []any{"xx", "y", "axxa"}, "x", []int32{0, 2}},
		{"not across two values", []any{"ab", "cd", "abcd"}, "bc", []int32{2}},
		{"not across a null", []any{"ab", nil, "cd"}, "bc", nil},
		{"not into a length prefix", []any{"a", "b"}, "a\x02", nil},
		{"a length byte inside a value", []any{"a\x02b", "b"}, "\x02b", []int32{0}},
		{"the empty value", []any{"", "a", ""}, "a", []int32{1}},
		{"a two-byte prefix", []any{"z", long, "b" + long}, "ba", []int32{1, 2}},
		{"the whole value", []any{"abc", "abcd"}, "abcd", []int32{1}},
		{"longer than any value", []any{"ab", "ab"}, "abab", nil},
	} {
		for _, wide := range []bool{false, true} {
			var c column
			if wide {
				c.at = []uint32{}
				c.widen()
			}
			for _, v := range tc.values {
				s, ok := v.(string)
				c.push(s, ok)
			}
			var got []int32
			c.eachContaining(tc.needle, func(slot int32) { got = append(got, slot) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s (wide %v): slots %v, want %v", tc.name, wide, got, tc.want)
			}
		}
	}

	// Random values against strings.Contains per value, then with updates,
	// which move values to the end of the text and leave garbage behind.
	rng := mrand.New(mrand.NewPCG(3, 9))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab\x01\x03"[rng.IntN(4)]
		}
		return string(b)
	}
	var c column
	var values []string
	var nulls []bool
	for range 3000 {
		v, ok := word(rng.IntN(6)), rng.IntN(8) > 0
		if rng.IntN(50) == 0 {
			v = word(130 + rng.IntN(100))
		}
		if !ok {
			v = ""
		}
		c.push(v, ok)
		values, nulls = append(values, v), append(nulls, !ok)
	}
	for round := range 300 {
		if round >= 100 {
			for range 1 + rng.IntN(100) {
				slot, v, ok := rng.IntN(len(values)), word(rng.IntN(6)), rng.IntN(8) > 0
				if !ok {
					v = ""
				}
				c.set(int32(slot), v, ok)
				values[slot], nulls[slot] = v, !ok
			}
		}
		needle := word(1 + rng.IntN(4))
		var want, got []int32
		for slot, v := range values {
			if !nulls[slot] && strings.Contains(v, needle) {
				want = append(want, int32(slot))
			}
		}
		c.eachContaining(needle, func(slot int32) { got = append(got, slot) })
		if !slices.Equal(got, want) {
			t.Fatalf("round %d, needle %q: %d slots, want %d", round, needle, len(got), len(want))
		}
	}
	if c.garbage == 0 {
		t.Error("the updates left no garbage")
	}
}

// TestColumnWide switches the columns to the wide offsets that a column
// takes past 4 GiB of text, then checks that appends, reads, updates and
// compaction agree with the resources.
func TestColumnWide(t *testing.T) {
	s := NewStore(nil)
	var rows []*Resource
	for i := range 50 {
		if i == 10 {
			s.mu.Lock()
			for f := range s.cols {
				s.cols[f].widen()
			}
			s.mu.Unlock()
		}
		r, err := s.Create(mkRes(fieldSurname, "Name"+strconv.Itoa(i), fieldCompany, strings.Repeat("Ç", 100+i)))
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	mustCheck(t, s)
	compacted := false
	for round := range 40 {
		for i, r := range rows {
			before := len(s.cols[fieldCompany].text)
			rows[i], _ = s.Update(withVal(r, fieldCompany, strings.Repeat("x", round+i), fieldSurname, nil))
			compacted = compacted || len(s.cols[fieldCompany].text) < before
		}
	}
	mustCheck(t, s)
	if !compacted {
		t.Error("2,000 updates never compacted the Company column")
	}
	if s.cols[fieldCompany].wide == nil || s.cols[fieldCompany].at != nil {
		t.Error("the Company column went back to 32-bit offsets")
	}
	total, page := s.List(Query{Filter: mustFilter(t, "Company~startswith~'xxxxxxxxxx'~and~Surname~isnull"), Page: 1, PageSize: 100})
	if total != 50 || len(page) != 50 {
		t.Fatalf("%d matches, page of %d; want 50", total, len(page))
	}
}

func mustCheck(t testing.TB, s *Store) {
	t.Helper()
	if err := s.check(); err != nil {
		t.Fatalf("store invariants broken:\n%v", err)
	}
}

// mkRes builds a resource as the handlers would store it: pairs of field and
// value (a string, or nil for null). Fields not given are null; Status is
// Active unless given.
func mkRes(pairs ...any) *Resource {
	r := &Resource{types: []requestorType{}}
	for f := field(0); f < numStringFields; f++ {
		r.set(f, "", false)
	}
	r.set(fieldStatus, statusActive, true)
	for i := 0; i < len(pairs); i += 2 {
		f := pairs[i].(field)
		switch v := pairs[i+1].(type) {
		case nil:
			r.set(f, "", false)
		case string:
			r.set(f, v, true)
		default:
			panic(fmt.Sprintf("mkRes: value %#v", v))
		}
	}
	return r
}

// withVal returns a copy of r with field f changed (nil: null), as an update
// would carry it.
func withVal(r *Resource, pairs ...any) *Resource {
	c := *r
	for i := 0; i < len(pairs); i += 2 {
		f := pairs[i].(field)
		if v, ok := pairs[i+1].(string); ok {
			c.set(f, v, true)
		} else {
			c.set(f, "", false)
		}
	}
	return &c
}

func mustFilter(t testing.TB, s string) filterNode {
	t.Helper()
	n, err := parseFilter(s, dialectKendo)
	if err != nil {
		t.Fatalf("parseFilter(%q): %v", s, err)
	}
	return n
}

func mustSorts(t testing.TB, s string) []sortKey {
	t.Helper()
	k, err := parseSorts(s)
	if err != nil {
		t.Fatalf("parseSorts(%q): %v", s, err)
	}
	return k
}

func ids(rs []*Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID()
	}
	return out
}

func TestStoreCreate(t *testing.T) {
	s := NewStore(nil)
	mustCheck(t, s)
	c0 := s.Changes()
	var created []*Resource
	for i := range 5 {
		r, err := s.Create(mkRes(fieldFirstName, fmt.Sprintf("F%d", i), fieldEmail, "same@example.org"))
		if err != nil {
			t.Fatal(err)
		}
		id, err := uuid.Parse(r.ID())
		if err != nil || id.String() != r.ID() || id.Version() != 4 || id.Variant() != uuid.RFC4122 {
			t.Fatalf("generated Id %q is not a lower-case RFC 4122 v4 GUID", r.ID())
		}
		if got, ok := s.Get(r.ID()); !ok || got != r {
			t.Fatalf("Get(%s) = %v, %v", r.ID(), got, ok)
		}
		created = append(created, r)
		mustCheck(t, s)
	}
	if s.Len() != 5 {
		t.Fatalf("Len = %d", s.Len())
	}
	if s.Changes() == c0 {
		t.Fatal("Changes did not move")
	}
	all, _ := s.All()
	if !slices.Equal(ids(all), ids(created)) {
		t.Fatalf("All is not in creation order")
	}
	if _, ok := s.Get(uuid.NewString()); ok {
		t.Fatal("Get of an unknown id found something")
	}
}

func TestStoreCreateReproducibleIDs(t *testing.T) {
	seed := uint64(42)
	a, b := NewStore(&seed), NewStore(&seed)
	for range 3 {
		ra, err1 := a.Create(mkRes(fieldCompany, "C"))
		rb, err2 := b.Create(mkRes(fieldCompany, "C"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if ra.ID() != rb.ID() {
			t.Fatalf("same seed, different ids: %s %s", ra.ID(), rb.ID())
		}
	}
	mustCheck(t, a)
}

func TestStoreCreateRandomnessFails(t *testing.T) {
	s := NewStore(nil)
	s.ids = iotest.ErrReader(errors.New("no entropy"))
	if _, err := s.Create(mkRes(fieldCompany, "C")); err == nil {
		t.Fatal("Create succeeded without randomness")
	}
	if s.Len() != 0 {
		t.Fatalf("Len = %d after a failed Create", s.Len())
	}
	mustCheck(t, s)
}

// uuidBytes returns the 16 random bytes that make uuid.NewRandomFromReader
// produce id.
func uuidBytes(t *testing.T, id string) []byte {
	u := uuid.MustParse(id)
	return u[:]
}

func TestStoreInsert(t *testing.T) {
	s := NewStore(nil)
	first, _ := s.Create(mkRes(fieldCompany, "Existing", fieldEmail, "x@example.org"))
	given := uuid.NewString()
	batch := []*Resource{
		mkRes(fieldCompany, "A", fieldEmail, "x@example.org"),
		mkRes(fieldID, given, fieldCompany, "B"),
		mkRes(fieldID, "", fieldCompany, "C"), // "" counts as not given
	}
	if err := s.Insert(batch); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	all, _ := s.All()
	if len(all) != 4 || all[0] != first || all[1] != batch[0] || all[2] != batch[1] || all[3] != batch[2] {
		t.Fatalf("Insert did not append in order: %v", ids(all))
	}
	if batch[1].ID() != given {
		t.Fatalf("given Id %s became %s", given, batch[1].ID())
	}
	for _, r := range batch {
		if _, err := uuid.Parse(r.ID()); err != nil {
			t.Fatalf("Id %q", r.ID())
		}
	}
	total, page := s.List(Query{Filter: mustFilter(t, "Email~eq~'X@EXAMPLE.ORG'"), Page: 1, PageSize: 10})
	if total != 2 || page[0] != first || page[1] != batch[0] {
		t.Fatalf("index after Insert: %d %v", total, ids(page))
	}
	if err := s.Insert(nil); err != nil {
		t.Fatal(err)
	}
}

func TestStoreInsertDuplicateAppliesNothing(t *testing.T) {
	s := NewStore(nil)
	existing, _ := s.Create(mkRes(fieldCompany, "Existing"))
	fresh := uuid.NewString()
	cases := []struct {
		name  string
		batch func() []*Resource
		index int
	}{
		{"taken in the store", func() []*Resource {
			return []*Resource{mkRes(fieldCompany, "A"), mkRes(fieldID, existing.ID(), fieldCompany, "B")}
		}, 1},
		{"twice in the batch", func() []*Resource {
			return []*Resource{mkRes(fieldID, fresh, fieldCompany, "A"), mkRes(fieldCompany, "B"), mkRes(fieldID, fresh, fieldCompany, "C")}
		}, 2},
		{"twice in the batch, cases differ", func() []*Resource {
			return []*Resource{mkRes(fieldID, strings.ToUpper(fresh), fieldCompany, "A"), mkRes(fieldID, fresh, fieldCompany, "C")}
		}, 1},
		{"taken in the store, upper case", func() []*Resource {
			return []*Resource{mkRes(fieldID, strings.ToUpper(existing.ID()), fieldCompany, "A")}
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			changes := s.Changes()
			batch := c.batch()
			wasNull := make([]bool, len(batch))
			for i, r := range batch {
				wasNull[i] = r.isNull(fieldID)
			}
			err := s.Insert(batch)
			var dup *errDuplicateID
			if !errors.As(err, &dup) || dup.Index != c.index {
				t.Fatalf("Insert = %v, want a duplicate at %d", err, c.index)
			}
			if s.Len() != 1 || s.Changes() != changes {
				t.Fatalf("a refused Insert changed the store: Len %d", s.Len())
			}
			if _, ok := s.Get(fresh); ok {
				t.Fatal("a refused Insert stored a resource")
			}
			for i, r := range batch {
				if wasNull[i] && !r.isNull(fieldID) {
					t.Fatalf("resource %d was given the Id %s by a refused Insert", i, r.ID())
				}
			}
			mustCheck(t, s)
		})
	}
}

// A seeded Id in any case is stored in the canonical lower case, so that
// PUT (which canonicalises its GUID) and Id filters find it.
func TestStoreInsertCanonicalisesIDs(t *testing.T) {
	s := NewStore(nil)
	id := uuid.NewString()
	r := mkRes(fieldID, strings.ToUpper(id), fieldCompany, "A")
	if err := s.Insert([]*Resource{r}); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	if got, ok := s.Get(id); !ok || got != r || r.ID() != id {
		t.Fatalf("Get(%s) = %v, %v; Id %q", id, got, ok, r.ID())
	}
	if _, ok := s.Update(withVal(r, fieldCompany, "B")); !ok {
		t.Fatal("Update cannot find the seeded resource")
	}
	mustCheck(t, s)
}

// Two generated Ids in one batch must differ even when the randomness
// repeats itself; so must a generated Id and one given later in the batch.
func TestStoreInsertGeneratedIDsAreUnique(t *testing.T) {
	a, b := "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	s := NewStore(nil)
	s.ids = bytes.NewReader(slices.Concat(uuidBytes(t, a), uuidBytes(t, a), uuidBytes(t, b)))
	batch := []*Resource{mkRes(fieldCompany, "1"), mkRes(fieldCompany, "2")}
	if err := s.Insert(batch); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	if batch[0].ID() != a || batch[1].ID() != b {
		t.Fatalf("ids %s %s, want %s %s", batch[0].ID(), batch[1].ID(), a, b)
	}

	s = NewStore(nil)
	s.ids = bytes.NewReader(slices.Concat(uuidBytes(t, a), uuidBytes(t, b)))
	batch = []*Resource{mkRes(fieldCompany, "1"), mkRes(fieldID, a, fieldCompany, "2")}
	if err := s.Insert(batch); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	if batch[0].ID() != b || batch[1].ID() != a {
		t.Fatalf("ids %s %s, want %s %s", batch[0].ID(), batch[1].ID(), b, a)
	}
}

func TestStoreInsertRandomnessFails(t *testing.T) {
	s := NewStore(nil)
	s.ids = iotest.ErrReader(errors.New("no entropy"))
	if err := s.Insert([]*Resource{mkRes(fieldID, uuid.NewString(), fieldCompany, "A"), mkRes(fieldCompany, "B")}); err == nil {
		t.Fatal("Insert succeeded without randomness")
	}
	if s.Len() != 0 {
		t.Fatalf("Len = %d after a failed Insert", s.Len())
	}
	mustCheck(t, s)
}

func TestStoreUpdate(t *testing.T) {
	s := NewStore(nil)
	var rs []*Resource
	for i := range 6 {
		r := mkRes(fieldFirstName, "Ada", fieldSurname, fmt.Sprintf("S%d", i), fieldEmail, "a@x.org", fieldExternalID, "")
		r.address = []byte(fmt.Sprintf(`{"n":%d}`, i))
		r, _ = s.Create(r)
		rs = append(rs, r)
	}
	eq := func(filter string) []string {
		t.Helper()
		total, page := s.List(Query{Filter: mustFilter(t, filter), Page: 1, PageSize: 100})
		if total != len(page) {
			t.Fatalf("%s: total %d, page %d", filter, total, len(page))
		}
		return ids(page)
	}
	old := rs[3]
	oldVals := old.vals()

	// Move Email and FirstName to new values, ExternalID from "" to null,
	// Company from null to a value, Status to Inactive.
	upd := withVal(old, fieldEmail, "B@X.org", fieldFirstName, "Grace", fieldExternalID, nil,
		fieldCompany, "Acme", fieldStatus, statusInactive)
	upd.address = []byte(`{"changed":true}`)
	got, ok := s.Update(upd)
	if !ok {
		t.Fatal("Update: not found")
	}
	mustCheck(t, s)
	if string(got.address) != `{"n":3}` {
		t.Fatalf("Address after update = %s, want the created one", got.address)
	}
	if old.vals() != oldVals || string(old.address) != `{"n":3}` {
		t.Fatal("Update changed the stored resource in place")
	}
	if r, _ := s.Get(old.ID()); r != got {
		t.Fatal("Get does not return the updated resource")
	}
	all, _ := s.All()
	if all[3] != got {
		t.Fatal("the updated resource left its slot")
	}
	if want := []string{rs[0].ID(), rs[1].ID(), rs[2].ID(), rs[4].ID(), rs[5].ID()}; !slices.Equal(eq("Email~eq~'a@x.org'"), want) {
		t.Fatalf("old Email still finds the updated resource")
	}
	if want := []string{old.ID()}; !slices.Equal(eq("Email~eq~'b@x.ORG'"), want) ||
		!slices.Equal(eq("FirstName~eq~'grace'"), want) || !slices.Equal(eq("Company~eq~'acme'"), want) ||
		!slices.Equal(eq("Status~eq~'inactive'"), want) {
		t.Fatal("new values do not find the updated resource")
	}
	if n := len(eq("ExternalID~eq~''")); n != 5 {
		t.Fatalf("ExternalID eq '' finds %d, want 5", n)
	}

	// And back: the slot must return to the middle of the posting lists.
	back := withVal(got, fieldEmail, "a@x.org", fieldFirstName, "Ada", fieldExternalID, "", fieldCompany, nil,
		fieldStatus, statusActive)
	if _, ok := s.Update(back); !ok {
		t.Fatal("Update: not found")
	}
	mustCheck(t, s)
	if !slices.Equal(eq("Email~eq~'a@x.org'"), ids(rs)) || !slices.Equal(eq("FirstName~eq~'ADA'"), ids(rs)) {
		t.Fatal("posting lists are not back in creation order")
	}
	if len(eq("Company~eq~'acme'")) != 0 || len(eq("Status~eq~'Inactive'")) != 0 {
		t.Fatal("stale index entries")
	}

	// A change of case only moves nothing in the index but is stored.
	cased := withVal(back, fieldEmail, "A@X.ORG")
	s.Update(cased)
	mustCheck(t, s)
	if r, _ := s.Get(old.ID()); r.str(fieldEmail) != "A@X.ORG" {
		t.Fatalf("Email = %q", r.str(fieldEmail))
	}

	// An unknown Id changes nothing.
	changes := s.Changes()
	if _, ok := s.Update(mkRes(fieldID, uuid.NewString(), fieldCompany, "X")); ok {
		t.Fatal("Update of an unknown Id succeeded")
	}
	if s.Changes() != changes || s.Len() != 6 {
		t.Fatal("a failed Update changed the store")
	}
	mustCheck(t, s)
}

func TestStoreLoad(t *testing.T) {
	s := NewStore(nil)
	s.Create(mkRes(fieldCompany, "Before", fieldEmail, "before@x.org"))
	loaded := []*Resource{
		mkRes(fieldID, uuid.NewString(), fieldCompany, "A", fieldEmail, "e@x.org"),
		mkRes(fieldID, uuid.NewString(), fieldCompany, "B", fieldEmail, "E@X.org", fieldStatus, statusInactive),
		mkRes(fieldID, uuid.NewString(), fieldCompany, "C"),
	}
	changes := s.Changes()
	if err := s.Load(loaded); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	if s.Changes() == changes {
		t.Fatal("Load did not move Changes")
	}
	all, _ := s.All()
	if !slices.Equal(ids(all), ids(loaded)) {
		t.Fatal("Load did not replace the contents in order")
	}
	if total, _ := s.List(Query{Filter: mustFilter(t, "Company~eq~'before'"), Page: 1, PageSize: 5}); total != 0 {
		t.Fatal("the index still holds a resource from before Load")
	}
	if total, page := s.List(Query{Filter: mustFilter(t, "Email~eq~'e@x.org'"), Page: 1, PageSize: 5}); total != 2 || page[1] != loaded[1] {
		t.Fatalf("index after Load: %d", total)
	}

	// A snapshot with a duplicate Id is refused and the store is left as it
	// was.
	dupID := uuid.NewString()
	bad := []*Resource{mkRes(fieldID, dupID, fieldCompany, "X"), mkRes(fieldID, uuid.NewString(), fieldCompany, "Y"), mkRes(fieldID, dupID, fieldCompany, "Z")}
	err := s.Load(bad)
	var dup *errDuplicateID
	if !errors.As(err, &dup) || dup.Index != 2 || dup.ID != dupID {
		t.Fatalf("Load = %v, want a duplicate at 2", err)
	}
	mustCheck(t, s)
	if all, _ := s.All(); !slices.Equal(ids(all), ids(loaded)) {
		t.Fatalf("a refused Load changed the store: %d resources", len(all))
	}

	if err := s.Load(nil); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 0 {
		t.Fatal("Load(nil) kept resources")
	}
	mustCheck(t, s)
	if _, err := s.Create(mkRes(fieldCompany, "After")); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
}

func TestStoreReset(t *testing.T) {
	seed := uint64(7)
	s := NewStore(&seed)
	var first []string
	for i := range 4 {
		r, _ := s.Create(mkRes(fieldCompany, fmt.Sprint(i), fieldEmail, "same@x.org"))
		first = append(first, r.ID())
	}
	changes := s.Changes()
	s.Reset()
	mustCheck(t, s)
	if s.Len() != 0 || s.Changes() == changes {
		t.Fatalf("Reset: Len %d", s.Len())
	}
	if _, ok := s.Get(first[0]); ok {
		t.Fatal("Get finds a resource after Reset")
	}
	if total, page := s.List(Query{Filter: mustFilter(t, "Email~eq~'same@x.org'"), Page: 1, PageSize: 10}); total != 0 || len(page) != 0 {
		t.Fatal("the index survived Reset")
	}
	if total, _ := s.List(Query{Page: 1, PageSize: 10}); total != 0 {
		t.Fatal("List after Reset is not empty")
	}
	r, err := s.Create(mkRes(fieldCompany, "again", fieldEmail, "same@x.org"))
	if err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	if total, page := s.List(Query{Filter: mustFilter(t, "Email~eq~'same@x.org'"), Page: 1, PageSize: 10}); total != 1 || page[0] != r {
		t.Fatal("index after Reset and Create")
	}
	// With an id seed, a reset store hands out the same ids again.
	if r.ID() != first[0] {
		t.Fatalf("after Reset the seeded ids restart: got %s, want %s", r.ID(), first[0])
	}
}

// listFixture returns a store whose resources cover nulls, empty strings,
// case variants, non-ASCII text and both statuses, in a known order.
func listFixture(t *testing.T) (*Store, []*Resource) {
	t.Helper()
	s := NewStore(nil)
	rows := []*Resource{
		mkRes(fieldFirstName, "Zola", fieldSurname, "b", fieldEmail, "z@x.org", fieldCompany, "Acme"),
		mkRes(fieldFirstName, "Émile", fieldSurname, nil, fieldEmail, "e@x.org", fieldStatus, statusInactive),
		mkRes(fieldFirstName, "ada", fieldSurname, "a", fieldEmail, "a@x.org", fieldCompany, "acme"),
		mkRes(fieldFirstName, nil, fieldSurname, "B", fieldEmail, nil, fieldCompany, "ACME", fieldStatus, statusInactive),
		mkRes(fieldFirstName, "", fieldSurname, "a", fieldEmail, "", fieldCompany, "Globex"),
		mkRes(fieldFirstName, "Ada", fieldSurname, "c", fieldEmail, "A@X.ORG", fieldCompany, nil),
		mkRes(fieldFirstName, "zola", fieldSurname, nil, fieldEmail, "z@x.org", fieldCompany, "Acme", fieldStatus, statusInactive),
	}
	for _, r := range rows {
		if _, err := s.Create(r); err != nil {
			t.Fatal(err)
		}
	}
	mustCheck(t, s)
	return s, rows
}

func TestStoreListSorts(t *testing.T) {
	s, rows := listFixture(t)
	cases := []struct {
		sorts string
		want  []int
	}{
		// Lower-cased, by code point: É after z; null first; ties by creation.
		{"FirstName", []int{3, 4, 2, 5, 0, 6, 1}},
		{"firstname-ASC", []int{3, 4, 2, 5, 0, 6, 1}},
		// Descending reverses the order, nulls last, but ties stay oldest first.
		{"FirstName-desc", []int{1, 0, 6, 2, 5, 4, 3}},
		{"Surname-asc~FirstName-desc", []int{1, 6, 2, 4, 0, 3, 5}},
		{"StatusId-desc~Email", []int{3, 1, 6, 4, 2, 5, 0}},
		{"Company", []int{1, 5, 0, 2, 3, 6, 4}},
		{"Company~Status-desc", []int{1, 5, 3, 6, 0, 2, 4}},
	}
	for _, c := range cases {
		for _, filter := range []string{"", "Status~isnotnull"} {
			for _, size := range []int{1, 2, 3, 7, 8, 500} {
				var got []string
				var n int
				for page := 1; page <= 9; page++ {
					q := Query{Sorts: mustSorts(t, c.sorts), Page: page, PageSize: size}
					if filter != "" {
						q.Filter = mustFilter(t, filter)
					}
					total, p := s.List(q)
					if total != len(rows) {
						t.Fatalf("%s: total %d", c.sorts, total)
					}
					if len(p) > size {
						t.Fatalf("%s: page of %d for size %d", c.sorts, len(p), size)
					}
					n += len(p)
					got = append(got, ids(p)...)
				}
				want := make([]string, len(c.want))
				for i, w := range c.want {
					want[i] = rows[w].ID()
				}
				if n != len(rows) || !slices.Equal(got, want) {
					t.Errorf("sorts %q filter %q size %d:\n got %v\nwant %v", c.sorts, filter, size, got, want)
				}
			}
		}
	}
	mustCheck(t, s)
}

// TestStoreListPlans compares List, which answers eq filters from the
// indexes, with a scan of every resource, for every page of every size.
func TestStoreListPlans(t *testing.T) {
	s, rows := listFixture(t)
	filters := []string{
		"",
		"Email~eq~'z@x.org'",      // exact index
		"Email~eq~'nobody@x.org'", // exact index, no match
		"Email~eq~''",             // "" is indexed, null is not
		"Status~eq~'INACTIVE'",    // exact index
		"Id~eq~'" + strings.ToUpper(rows[2].ID()) + "'", // byID
		"Id~eq~'" + uuid.NewString() + "'",              // byID, no match
		"Email~eq~'z@x.org'~and~Status~eq~'Inactive'",   // smallest index
		"Email~eq~'z@x.org'~and~Surname~isnull",         // index and check
		"Email~eq~'a@x.org'~or~Company~eq~'globex'",     // union
		"Email~eq~'a@x.org'~or~Surname~contains~'b'",    // scan
		"(Email~eq~'a@x.org'~or~Email~eq~'e@x.org')~and~Status~eq~'active'",
		"(Email~eq~'a@x.org'~or~Surname~eq~'b')~and~(FirstName~eq~'zola'~or~Company~eq~'acme')",
		"FirstName~neq~'ada'",
		"StatusId~eq~2",
		"Phone~eq~'x'~and~Email~eq~'z@x.org'",
		"FirstName~contains~'a'~and~Email~eq~'a@x.org'",
	}
	sorts := []string{"", "FirstName-desc", "Email~Id"}
	for _, fs := range filters {
		var filter filterNode
		if fs != "" {
			filter = mustFilter(t, fs)
		}
		var match []*Resource
		for _, r := range rows {
			if filter == nil || filter.match(r) {
				match = append(match, r)
			}
		}
		for _, ss := range sorts {
			keys := mustSorts(t, ss)
			want := slices.Clone(match)
			slices.SortStableFunc(want, func(a, b *Resource) int { return naiveCompare(a, b, keys) })
			for size := 1; size <= len(rows)+1; size++ {
				for page := 1; page <= len(rows)+2; page++ {
					checkPage(t, s, Query{Filter: filter, Sorts: keys, Page: page, PageSize: size}, want, fs+" / "+ss)
				}
				checkPage(t, s, Query{Filter: filter, Sorts: keys, Page: math.MaxInt, PageSize: size}, want, fs+" / "+ss)
				checkPage(t, s, Query{Filter: filter, Sorts: keys, Page: math.MaxInt32, PageSize: math.MaxInt32}, want, fs+" / "+ss)
			}
			// Sorting the answer of an index must not reorder the index.
			mustCheck(t, s)
		}
	}
}

func checkPage(t *testing.T, s *Store, q Query, all []*Resource, what string) {
	t.Helper()
	total, page := s.List(q)
	var want []*Resource
	if start := (q.Page - 1) * q.PageSize; q.Page-1 < len(all) && start/q.PageSize == q.Page-1 && start < len(all) {
		want = all[start:min(start+q.PageSize, len(all))]
	}
	if total != len(all) || !slices.Equal(ids(page), ids(want)) {
		t.Fatalf("%s page %d size %d: total %d (want %d), page %v (want %v)", what, q.Page, q.PageSize, total, len(all), ids(page), ids(want))
	}
}

// naiveCompare orders two resources by sort keys, written apart from
// compareResources: lower case, code points, null first, StatusId by number.
func naiveCompare(a, b *Resource, keys []sortKey) int {
	for _, k := range keys {
		var c int
		if k.Field == fieldStatusID {
			sa, sb := 1, 1
			if a.str(fieldStatus) == statusInactive {
				sa = 2
			}
			if b.str(fieldStatus) == statusInactive {
				sb = 2
			}
			c = sa - sb
		} else {
			va, oka := a.value(k.Field)
			vb, okb := b.value(k.Field)
			switch {
			case !oka && !okb:
			case !oka:
				c = -1
			case !okb:
				c = 1
			default:
				c = slices.Compare([]rune(strings.ToLower(va)), []rune(strings.ToLower(vb)))
			}
		}
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func TestStoreListEmpty(t *testing.T) {
	s := NewStore(nil)
	for _, q := range []Query{
		{Page: 1, PageSize: 20},
		{Page: 3, PageSize: 1},
		{Filter: mustFilter(t, "Email~eq~'x'"), Page: 1, PageSize: 20},
		{Filter: mustFilter(t, "Email~contains~'x'"), Page: 1, PageSize: 20},
		{Sorts: mustSorts(t, "Surname"), Page: 1, PageSize: 20},
	} {
		total, page := s.List(q)
		if total != 0 || len(page) != 0 {
			t.Fatalf("%+v: %d %v", q, total, page)
		}
	}
}

// TestConcurrentServer mixes creates, updates, lists, seeds, snapshots and
// invariant checks from many goroutines on one server (run it with -race).
// Each worker updates only the resources it created, so it knows what every
// one of them must hold at any time: its own lists must see its last write,
// and at the end the store must hold each resource's last written value.
func TestConcurrentServer(t *testing.T) {
	workers, ops := 8, 120
	if longTests() {
		ops = 600
	}
	if testing.Short() {
		ops = 40
	}
	store := NewStore(nil)
	ts := httptest.NewServer(NewServer(kendoConfig(), store, nil))
	defer ts.Close()
	client := ts.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = workers + 2
	snapPath := filepath.Join(t.TempDir(), "concurrent.gob")
	snap := newSnapshotter(snapPath, storeDir{store}, slog.New(slog.DiscardHandler))

	type state struct {
		id, company, email, position, status string
	}
	call := func(method, path string, body any, out any) (int, error) {
		var rd io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			if err != nil {
				return 0, err
			}
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, ts.URL+path, rd)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode == http.StatusOK && out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				return 0, fmt.Errorf("%s %s: %v in %s", method, path, err, data)
			}
		}
		if resp.StatusCode != http.StatusOK {
			return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
		return resp.StatusCode, nil
	}
	type listResp struct {
		TotalResults int
		ResourceList []struct{ Id, Email, Position, Status string }
	}
	list := func(filter, sorts string, pageSize int) (listResp, error) {
		v := url.Values{}
		if filter != "" {
			v.Set("requestParams.filters", filter)
		}
		if sorts != "" {
			v.Set("requestParams.sorts", sorts)
		}
		v.Set("requestParams.pageSize", strconv.Itoa(pageSize))
		var out listResp
		_, err := call(http.MethodGet, "/api/v2/resource?"+v.Encode(), nil, &out)
		return out, err
	}

	var (
		wg       sync.WaitGroup
		done     = make(chan struct{})
		finals   = make([][]*state, workers)
		inserted atomic.Int64
		snaps    atomic.Int64
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := mrand.New(mrand.NewPCG(uint64(w), 99))
			var mine []*state
			lastTotal := 0
			fail := func(err error) bool {
				if err != nil {
					t.Errorf("worker %d: %v", w, err)
					return true
				}
				return false
			}
			for i := range ops {
				switch x := r.IntN(100); {
				case x < 35 || len(mine) == 0:
					st := &state{company: fmt.Sprintf("w%d", w), email: fmt.Sprintf("w%d-r%d-v0@x.org", w, len(mine)),
						position: "v0", status: "Active"}
					var out struct{ Data []struct{ Id string } }
					if fail(func() error {
						_, err := call(http.MethodPost, "/api/v2/resource", map[string]any{
							"Company": st.company, "Email": st.email, "Position": st.position, "Surname": fmt.Sprint(i % 7),
						}, &out)
						return err
					}()) {
						return
					}
					st.id = out.Data[0].Id
					mine = append(mine, st)
				case x < 70:
					k := r.IntN(len(mine))
					st := *mine[k]
					st.position = fmt.Sprintf("v%d", i)
					st.email = fmt.Sprintf("w%d-r%d-v%d@x.org", w, k, i)
					if r.IntN(2) == 0 {
						st.email = strings.ToUpper(st.email) // same index key
					}
					st.status = []string{"Active", "Inactive"}[r.IntN(2)]
					body := map[string]any{
						"Id": st.id, "DisplayName": nil, "FirstName": nil, "Surname": fmt.Sprint(i % 5), "Company": st.company,
						"Position": st.position, "Phone": nil, "Mobile": nil, "Fax": nil, "Email": st.email,
						"AddressComment": nil, "ExternalID": fmt.Sprint(i), "Status": st.status, "Types": []any{},
					}
					var out struct{ Id, Email, Position string }
					if fail(func() error { _, err := call(http.MethodPut, "/api/v2/resource/"+st.id, body, &out); return err }()) {
						return
					}
					if out.Id != st.id || out.Email != st.email || out.Position != st.position {
						t.Errorf("worker %d: update answered %+v, want %+v", w, out, st)
						return
					}
					*mine[k] = st
				case x < 80:
					// My resource by its current Email: exactly my last write.
					st := mine[r.IntN(len(mine))]
					got, err := list("Email~eq~'"+strings.ToLower(st.email)+"'", "", 10)
					if fail(err) {
						return
					}
					if got.TotalResults != 1 || len(got.ResourceList) != 1 || got.ResourceList[0].Id != st.id ||
						got.ResourceList[0].Position != st.position || got.ResourceList[0].Status != st.status {
						t.Errorf("worker %d: list by Email %s gave %+v, want %+v", w, st.email, got, st)
						return
					}
				case x < 90:
					// All of mine, and only mine, newest Position first.
					got, err := list(fmt.Sprintf("Company~eq~'W%d'~and~Status~isnotnull", w), "Position-desc", 500)
					if fail(err) {
						return
					}
					if got.TotalResults != len(mine) || len(got.ResourceList) != min(len(mine), 500) {
						t.Errorf("worker %d: %d of mine listed, want %d", w, got.TotalResults, len(mine))
						return
					}
				default:
					// The total never goes down.
					got, err := list("", "Surname-desc~Email", 5)
					if fail(err) {
						return
					}
					if got.TotalResults < lastTotal || got.TotalResults < len(mine) {
						t.Errorf("worker %d: total %d after %d (%d of mine)", w, got.TotalResults, lastTotal, len(mine))
						return
					}
					lastTotal = got.TotalResults
				}
			}
			finals[w] = mine
		}()
	}
	var bg sync.WaitGroup
	bg.Add(3)
	go func() { // snapshots
		defer bg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := snap.write(); err != nil {
				t.Errorf("snapshot: %v", err)
				return
			}
			snaps.Add(1)
			time.Sleep(time.Millisecond)
		}
	}()
	go func() { // seeding
		defer bg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			batch := []*Resource{mkRes(fieldCompany, "seeded", fieldEmail, "seed@x.org"), mkRes(fieldID, uuid.NewString(), fieldCompany, "seeded")}
			if err := store.Insert(batch); err != nil {
				t.Errorf("Insert: %v", err)
				return
			}
			inserted.Add(int64(len(batch)))
			time.Sleep(2 * time.Millisecond)
		}
	}()
	go func() { // invariants, checked mid-flight
		defer bg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := store.check(); err != nil {
				t.Errorf("mid-flight: %v", err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()
	close(done)
	bg.Wait()
	if t.Failed() {
		return
	}

	created := 0
	for _, mine := range finals {
		created += len(mine)
	}
	if want := created + int(inserted.Load()); store.Len() != want {
		t.Fatalf("store holds %d resources, want %d created and %d seeded", store.Len(), created, inserted.Load())
	}
	mustCheck(t, store)
	for _, mine := range finals {
		for _, st := range mine {
			r, ok := store.Get(st.id)
			if !ok {
				t.Fatalf("%s is gone", st.id)
			}
			if email, _ := r.value(fieldEmail); email != st.email || r.str(fieldPosition) != st.position || r.str(fieldStatus) != st.status {
				t.Fatalf("%s holds %q %q %q, want the last write %+v", st.id, email, r.str(fieldPosition), r.str(fieldStatus), st)
			}
		}
	}

	// The last snapshot, written after everything, loads into a store that
	// answers the same.
	if _, err := snap.write(); err != nil {
		t.Fatal(err)
	}
	resources, err := readSnapshotFile(snapPath)
	if err != nil {
		t.Fatal(err)
	}
	loaded := NewStore(nil)
	if err := loaded.Load(resources); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, loaded)
	want, _ := store.All()
	got, _ := loaded.All()
	if len(got) != len(want) {
		t.Fatalf("snapshot holds %d resources, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].vals() != want[i].vals() || got[i].nulls != want[i].nulls {
			t.Fatalf("snapshot resource %d differs: %v / %v", i, got[i].vals(), want[i].vals())
		}
	}
	t.Logf("%d created, %d seeded, %d snapshots written", created, inserted.Load(), snaps.Load())
}

// smallestSorted must give exactly the head of a full sort, ties included.
func TestSmallestSortedMatchesFullSort(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	for trial := range 200 {
		n := rng.IntN(300)
		keys := make([]int, n)
		slots := make([]int32, n)
		for i := range slots {
			slots[i] = int32(i)
			keys[i] = rng.IntN(20) // many ties
		}
		order := func(a, b int32) int {
			if c := keys[a] - keys[b]; c != 0 {
				return c
			}
			return int(a - b)
		}
		full := slices.SortedFunc(slices.Values(slots), order)
		k := rng.IntN(n + 1)
		if got := smallestSorted(slices.Clone(slots), k, order); !slices.Equal(got, full[:k]) {
			t.Fatalf("trial %d: n=%d k=%d: got %v, want %v", trial, n, k, got, full[:k])
		}
	}
}

// A large batch fills the indexes on several goroutines; the store must end
// exactly as if it had been appended one resource at a time.
func TestStoreInsertLargeBatch(t *testing.T) {
	s := NewStore(nil)
	s.Create(mkRes(fieldCompany, "Acme", fieldEmail, "first@acme.test"))
	batch := make([]*Resource, 10_000) // columns filled in parts, one per CPU
	for i := range batch {
		batch[i] = mkRes(fieldCompany, fmt.Sprintf("Co %d", i%7), fieldEmail, fmt.Sprintf("P%d@acme.test", i),
			fieldFirstName, []any{nil, "Ada", "ADA"}[i%3])
	}
	if err := s.Insert(batch); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	for _, tc := range []struct {
		filter string
		want   int
	}{
		{"Company~eq~'co 3'", 1429},
		{"FirstName~eq~'ada'", 6666},
		{"Email~eq~'p9999@acme.test'", 1},
		{"Email~eq~'p5000@acme.test'", 1},
		{"Company~eq~'acme'", 1},
	} {
		if total, _ := s.List(Query{Filter: mustFilter(t, tc.filter), Page: 1, PageSize: 10}); total != tc.want {
			t.Errorf("%s: %d matches, want %d", tc.filter, total, tc.want)
		}
	}
	if got := s.Changes(); got < 10_002 {
		t.Errorf("Changes() = %d after 10,001 resources", got)
	}
}

// vals returns every string field's text, "" for null, to compare two
// resources' fields at once.
func (r *Resource) vals() (vals [numStringFields]string) {
	for f := range numStringFields {
		vals[f] = r.str(f)
	}
	return vals
}
