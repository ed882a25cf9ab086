package resourcedir

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

	"github.com/google/uuid"
)

// checkStore verifies the store's invariants under its lock: the Id maps and
// the layer's eq indexes describe exactly the resources the store shows,
// the base's index its own rows. Tests call it after every kind of mutation.
func checkStore(s *store) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var errs []error
	fail := func(format string, args ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	nb := int32(len(s.base.rows))
	var wantBase, wantLayer fieldIndexes
	for pos := range s.base.rows {
		e := &s.base.rows[pos]
		wantBase.add(e, int32(pos))
		if got, ok := s.base.byID[e.res.id()]; !ok || got != int32(pos) {
			fail("base Id %s maps to %d, %v; want %d", e.res.id(), got, ok, pos)
		}
	}
	if len(s.base.byID) != len(s.base.rows) {
		fail("the base has %d Ids for %d rows", len(s.base.byID), len(s.base.rows))
	}
	for pos, e := range s.replaced {
		if pos < 0 || pos >= nb {
			fail("replaced position %d is outside the base of %d", pos, nb)
			continue
		}
		if e.res.id() != s.base.rows[pos].res.id() {
			fail("position %d: replaced by %s, the base has %s", pos, e.res.id(), s.base.rows[pos].res.id())
		}
		wantLayer.add(e, pos)
	}
	for i, e := range s.own {
		pos := nb + int32(i)
		wantLayer.add(e, pos)
		if got, ok := s.ownByID[e.res.id()]; !ok || got != pos {
			fail("own Id %s maps to %d, %v; want %d", e.res.id(), got, ok, pos)
		}
		if _, inBase := s.base.byID[e.res.id()]; inBase {
			fail("own Id %s is also in the base", e.res.id())
		}
	}
	if len(s.ownByID) != len(s.own) {
		fail("the layer has %d Ids for %d resources", len(s.ownByID), len(s.own))
	}
	for pos := range int32(s.lenLocked()) {
		e := s.at(pos)
		if want := newEntry(e.res); want.fold != e.fold {
			fail("position %d: folded values %q, want %q", pos, e.fold, want.fold)
		}
		if !isCanonicalGUID(e.res.id()) || e.res.isNull(fieldID) {
			fail("position %d: Id %q", pos, e.res.id())
		}
	}
	for _, f := range indexedFields {
		if !equalPostings(s.base.index[f], wantBase[f]) {
			fail("base index of %s: %v, want %v", f, s.base.index[f], wantBase[f])
		}
		if !equalPostings(s.index[f], wantLayer[f]) {
			fail("layer index of %s: %v, want %v", f, s.index[f], wantLayer[f])
		}
	}
	return errors.Join(errs...)
}

func equalPostings(a, b postings) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// storeGet returns the resource with the given lower-case Id.
func storeGet(s *store, id string) (*resource, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pos, ok := s.find(id)
	if !ok {
		return nil, false
	}
	return s.at(pos).res, true
}

func mustCheck(t testing.TB, s *store) {
	t.Helper()
	if err := checkStore(s); err != nil {
		t.Fatalf("store invariants broken:\n%v", err)
	}
}

// mkRes builds a resource as the handlers would store it: pairs of field and
// value (a string, or nil for null). Fields not given are null; Status is
// Active unless given.
func mkRes(pairs ...any) *resource {
	r := &resource{types: []requestorType{}}
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
func withVal(r *resource, pairs ...any) *resource {
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
	k, err := parseSorts(s, dialectKendo)
	if err != nil {
		t.Fatalf("parseSorts(%q): %v", s, err)
	}
	return k
}

func ids(rs []*resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.id()
	}
	return out
}

func TestStoreCreate(t *testing.T) {
	s := newStore(nil)
	mustCheck(t, s)
	c0 := s.generation()
	var created []*resource
	for i := range 5 {
		r, err := s.create(mkRes(fieldFirstName, fmt.Sprintf("F%d", i), fieldEmail, "same@example.org"))
		if err != nil {
			t.Fatal(err)
		}
		id, err := uuid.Parse(r.id())
		if err != nil || id.String() != r.id() || id.Version() != 4 || id.Variant() != uuid.RFC4122 {
			t.Fatalf("generated Id %q is not a lower-case RFC 4122 v4 GUID", r.id())
		}
		if got, ok := storeGet(s, r.id()); !ok || got != r {
			t.Fatalf("Get(%s) = %v, %v", r.id(), got, ok)
		}
		created = append(created, r)
		mustCheck(t, s)
	}
	if s.count() != 5 {
		t.Fatalf("Len = %d", s.count())
	}
	if s.generation() == c0 {
		t.Fatal("Changes did not move")
	}
	all, _ := s.all()
	if !slices.Equal(ids(all), ids(created)) {
		t.Fatalf("All is not in creation order")
	}
	if _, ok := storeGet(s, uuid.NewString()); ok {
		t.Fatal("Get of an unknown id found something")
	}
}

func TestStoreCreateReproducibleIDs(t *testing.T) {
	seed := uint64(42)
	a, b := newStore(&seed), newStore(&seed)
	for range 3 {
		ra, err1 := a.create(mkRes(fieldCompany, "C"))
		rb, err2 := b.create(mkRes(fieldCompany, "C"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if ra.id() != rb.id() {
			t.Fatalf("same seed, different ids: %s %s", ra.id(), rb.id())
		}
	}
	mustCheck(t, a)
}

func TestStoreCreateRandomnessFails(t *testing.T) {
	s := newStore(nil)
	s.ids = iotest.ErrReader(errors.New("no entropy"))
	if _, err := s.create(mkRes(fieldCompany, "C")); err == nil {
		t.Fatal("Create succeeded without randomness")
	}
	if s.count() != 0 {
		t.Fatalf("Len = %d after a failed Create", s.count())
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
	s := newStore(nil)
	first, _ := s.create(mkRes(fieldCompany, "Existing", fieldEmail, "x@example.org"))
	given := uuid.NewString()
	batch := []*resource{
		mkRes(fieldCompany, "A", fieldEmail, "x@example.org"),
		mkRes(fieldID, given, fieldCompany, "B"),
		mkRes(fieldID, "", fieldCompany, "C"), // "" counts as not given
	}
	if err := s.insert(batch); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	all, _ := s.all()
	if len(all) != 4 || all[0] != first || all[1] != batch[0] || all[2] != batch[1] || all[3] != batch[2] {
		t.Fatalf("Insert did not append in order: %v", ids(all))
	}
	if batch[1].id() != given {
		t.Fatalf("given Id %s became %s", given, batch[1].id())
	}
	for _, r := range batch {
		if _, err := uuid.Parse(r.id()); err != nil {
			t.Fatalf("Id %q", r.id())
		}
	}
	total, page := s.list(listQuery{Filter: mustFilter(t, "Email~eq~'X@EXAMPLE.ORG'"), Page: 1, PageSize: 10})
	if total != 2 || page[0] != first || page[1] != batch[0] {
		t.Fatalf("index after Insert: %d %v", total, ids(page))
	}
	if err := s.insert(nil); err != nil {
		t.Fatal(err)
	}
}

func TestStoreInsertDuplicateAppliesNothing(t *testing.T) {
	s := newStore(nil)
	existing, _ := s.create(mkRes(fieldCompany, "Existing"))
	fresh := uuid.NewString()
	cases := []struct {
		name  string
		batch func() []*resource
		index int
	}{
		{"taken in the store", func() []*resource {
			return []*resource{mkRes(fieldCompany, "A"), mkRes(fieldID, existing.id(), fieldCompany, "B")}
		}, 1},
		{"twice in the batch", func() []*resource {
			return []*resource{mkRes(fieldID, fresh, fieldCompany, "A"), mkRes(fieldCompany, "B"), mkRes(fieldID, fresh, fieldCompany, "C")}
		}, 2},
		{"twice in the batch, cases differ", func() []*resource {
			return []*resource{mkRes(fieldID, strings.ToUpper(fresh), fieldCompany, "A"), mkRes(fieldID, fresh, fieldCompany, "C")}
		}, 1},
		{"taken in the store, upper case", func() []*resource {
			return []*resource{mkRes(fieldID, strings.ToUpper(existing.id()), fieldCompany, "A")}
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			changes := s.generation()
			batch := c.batch()
			wasNull := make([]bool, len(batch))
			for i, r := range batch {
				wasNull[i] = r.isNull(fieldID)
			}
			err := s.insert(batch)
			var dup *errDuplicateID
			if !errors.As(err, &dup) || dup.Index != c.index {
				t.Fatalf("Insert = %v, want a duplicate at %d", err, c.index)
			}
			if s.count() != 1 || s.generation() != changes {
				t.Fatalf("a refused Insert changed the store: Len %d", s.count())
			}
			if _, ok := storeGet(s, fresh); ok {
				t.Fatal("a refused Insert stored a resource")
			}
			for i, r := range batch {
				if wasNull[i] && !r.isNull(fieldID) {
					t.Fatalf("resource %d was given the Id %s by a refused Insert", i, r.id())
				}
			}
			mustCheck(t, s)
		})
	}
}

// A seeded Id in any case is stored in the canonical lower case, so that
// PUT (which canonicalises its GUID) and Id filters find it.
func TestStoreInsertCanonicalisesIDs(t *testing.T) {
	s := newStore(nil)
	id := uuid.NewString()
	r := mkRes(fieldID, strings.ToUpper(id), fieldCompany, "A")
	if err := s.insert([]*resource{r}); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	if got, ok := storeGet(s, id); !ok || got != r || r.id() != id {
		t.Fatalf("Get(%s) = %v, %v; Id %q", id, got, ok, r.id())
	}
	if _, ok := s.update(withVal(r, fieldCompany, "B")); !ok {
		t.Fatal("Update cannot find the seeded resource")
	}
	mustCheck(t, s)
}

// Two generated Ids in one batch must differ even when the randomness
// repeats itself; so must a generated Id and one given later in the batch.
func TestStoreInsertGeneratedIDsAreUnique(t *testing.T) {
	a, b := "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	s := newStore(nil)
	s.ids = bytes.NewReader(slices.Concat(uuidBytes(t, a), uuidBytes(t, a), uuidBytes(t, b)))
	batch := []*resource{mkRes(fieldCompany, "1"), mkRes(fieldCompany, "2")}
	if err := s.insert(batch); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	if batch[0].id() != a || batch[1].id() != b {
		t.Fatalf("ids %s %s, want %s %s", batch[0].id(), batch[1].id(), a, b)
	}

	s = newStore(nil)
	s.ids = bytes.NewReader(slices.Concat(uuidBytes(t, a), uuidBytes(t, b)))
	batch = []*resource{mkRes(fieldCompany, "1"), mkRes(fieldID, a, fieldCompany, "2")}
	if err := s.insert(batch); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	if batch[0].id() != b || batch[1].id() != a {
		t.Fatalf("ids %s %s, want %s %s", batch[0].id(), batch[1].id(), b, a)
	}
}

func TestStoreInsertRandomnessFails(t *testing.T) {
	s := newStore(nil)
	s.ids = iotest.ErrReader(errors.New("no entropy"))
	if err := s.insert([]*resource{mkRes(fieldID, uuid.NewString(), fieldCompany, "A"), mkRes(fieldCompany, "B")}); err == nil {
		t.Fatal("Insert succeeded without randomness")
	}
	if s.count() != 0 {
		t.Fatalf("Len = %d after a failed Insert", s.count())
	}
	mustCheck(t, s)
}

func TestStoreUpdate(t *testing.T) {
	s := newStore(nil)
	var rs []*resource
	for i := range 6 {
		r := mkRes(fieldFirstName, "Ada", fieldSurname, fmt.Sprintf("S%d", i), fieldEmail, "a@x.org", fieldExternalID, "")
		r.address = []byte(fmt.Sprintf(`{"n":%d}`, i))
		r, _ = s.create(r)
		rs = append(rs, r)
	}
	eq := func(filter string) []string {
		t.Helper()
		total, page := s.list(listQuery{Filter: mustFilter(t, filter), Page: 1, PageSize: 100})
		if total != len(page) {
			t.Fatalf("%s: total %d, page %d", filter, total, len(page))
		}
		return ids(page)
	}
	old := rs[3]
	oldVals := old.vals

	// Move Email and FirstName to new values, ExternalID from "" to null,
	// Company from null to a value, Status to Inactive.
	upd := withVal(old, fieldEmail, "B@X.org", fieldFirstName, "Grace", fieldExternalID, nil,
		fieldCompany, "Acme", fieldStatus, statusInactive)
	upd.address = []byte(`{"changed":true}`)
	got, ok := s.update(upd)
	if !ok {
		t.Fatal("Update: not found")
	}
	mustCheck(t, s)
	if string(got.address) != `{"n":3}` {
		t.Fatalf("Address after update = %s, want the created one", got.address)
	}
	if old.vals != oldVals || string(old.address) != `{"n":3}` {
		t.Fatal("Update changed the stored resource in place")
	}
	if r, _ := storeGet(s, old.id()); r != got {
		t.Fatal("Get does not return the updated resource")
	}
	all, _ := s.all()
	if all[3] != got {
		t.Fatal("the updated resource left its slot")
	}
	if want := []string{rs[0].id(), rs[1].id(), rs[2].id(), rs[4].id(), rs[5].id()}; !slices.Equal(eq("Email~eq~'a@x.org'"), want) {
		t.Fatalf("old Email still finds the updated resource")
	}
	if want := []string{old.id()}; !slices.Equal(eq("Email~eq~'b@x.ORG'"), want) ||
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
	if _, ok := s.update(back); !ok {
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
	s.update(cased)
	mustCheck(t, s)
	if r, _ := storeGet(s, old.id()); r.str(fieldEmail) != "A@X.ORG" {
		t.Fatalf("Email = %q", r.str(fieldEmail))
	}

	// An unknown Id changes nothing.
	changes := s.generation()
	if _, ok := s.update(mkRes(fieldID, uuid.NewString(), fieldCompany, "X")); ok {
		t.Fatal("Update of an unknown Id succeeded")
	}
	if s.generation() != changes || s.count() != 6 {
		t.Fatal("a failed Update changed the store")
	}
	mustCheck(t, s)
}

func TestStoreLoad(t *testing.T) {
	s := newStore(nil)
	s.create(mkRes(fieldCompany, "Before", fieldEmail, "before@x.org"))
	loaded := []*resource{
		mkRes(fieldID, uuid.NewString(), fieldCompany, "A", fieldEmail, "e@x.org"),
		mkRes(fieldID, uuid.NewString(), fieldCompany, "B", fieldEmail, "E@X.org", fieldStatus, statusInactive),
		mkRes(fieldID, uuid.NewString(), fieldCompany, "C"),
	}
	changes := s.generation()
	if err := storeLoad(s, loaded); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	if s.generation() == changes {
		t.Fatal("Load did not move Changes")
	}
	all, _ := s.all()
	if !slices.Equal(ids(all), ids(loaded)) {
		t.Fatal("Load did not replace the contents in order")
	}
	if total, _ := s.list(listQuery{Filter: mustFilter(t, "Company~eq~'before'"), Page: 1, PageSize: 5}); total != 0 {
		t.Fatal("the index still holds a resource from before Load")
	}
	if total, page := s.list(listQuery{Filter: mustFilter(t, "Email~eq~'e@x.org'"), Page: 1, PageSize: 5}); total != 2 || page[1] != loaded[1] {
		t.Fatalf("index after Load: %d", total)
	}

	// A snapshot with a duplicate Id is refused and the store is left as it
	// was.
	dupID := uuid.NewString()
	bad := []*resource{mkRes(fieldID, dupID, fieldCompany, "X"), mkRes(fieldID, uuid.NewString(), fieldCompany, "Y"), mkRes(fieldID, dupID, fieldCompany, "Z")}
	err := storeLoad(s, bad)
	var dup *errDuplicateID
	if !errors.As(err, &dup) || dup.Index != 2 || dup.ID != dupID {
		t.Fatalf("Load = %v, want a duplicate at 2", err)
	}
	mustCheck(t, s)
	if all, _ := s.all(); !slices.Equal(ids(all), ids(loaded)) {
		t.Fatalf("a refused Load changed the store: %d resources", len(all))
	}

	if err := storeLoad(s, nil); err != nil {
		t.Fatal(err)
	}
	if s.count() != 0 {
		t.Fatal("Load(nil) kept resources")
	}
	mustCheck(t, s)
	if _, err := s.create(mkRes(fieldCompany, "After")); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
}

func TestStoreReset(t *testing.T) {
	seed := uint64(7)
	s := newStore(&seed)
	var first []string
	for i := range 4 {
		r, _ := s.create(mkRes(fieldCompany, fmt.Sprint(i), fieldEmail, "same@x.org"))
		first = append(first, r.id())
	}
	changes := s.generation()
	s.resetTo(s.seed)
	mustCheck(t, s)
	if s.count() != 0 || s.generation() == changes {
		t.Fatalf("Reset: Len %d", s.count())
	}
	if _, ok := storeGet(s, first[0]); ok {
		t.Fatal("Get finds a resource after Reset")
	}
	if total, page := s.list(listQuery{Filter: mustFilter(t, "Email~eq~'same@x.org'"), Page: 1, PageSize: 10}); total != 0 || len(page) != 0 {
		t.Fatal("the index survived Reset")
	}
	if total, _ := s.list(listQuery{Page: 1, PageSize: 10}); total != 0 {
		t.Fatal("List after Reset is not empty")
	}
	r, err := s.create(mkRes(fieldCompany, "again", fieldEmail, "same@x.org"))
	if err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	if total, page := s.list(listQuery{Filter: mustFilter(t, "Email~eq~'same@x.org'"), Page: 1, PageSize: 10}); total != 1 || page[0] != r {
		t.Fatal("index after Reset and Create")
	}
	// With an id seed, a reset store hands out the same ids again.
	if r.id() != first[0] {
		t.Fatalf("after Reset the seeded ids restart: got %s, want %s", r.id(), first[0])
	}
}

// listFixture returns a store whose resources cover nulls, empty strings,
// case variants, non-ASCII text and both statuses, in a known order.
func listFixture(t *testing.T) (*store, []*resource) {
	t.Helper()
	s := newStore(nil)
	rows := []*resource{
		mkRes(fieldFirstName, "Zola", fieldSurname, "b", fieldEmail, "z@x.org", fieldCompany, "Acme"),
		mkRes(fieldFirstName, "Émile", fieldSurname, nil, fieldEmail, "e@x.org", fieldStatus, statusInactive),
		mkRes(fieldFirstName, "ada", fieldSurname, "a", fieldEmail, "a@x.org", fieldCompany, "acme"),
		mkRes(fieldFirstName, nil, fieldSurname, "B", fieldEmail, nil, fieldCompany, "ACME", fieldStatus, statusInactive),
		mkRes(fieldFirstName, "", fieldSurname, "a", fieldEmail, "", fieldCompany, "Globex"),
		mkRes(fieldFirstName, "Ada", fieldSurname, "c", fieldEmail, "A@X.ORG", fieldCompany, nil),
		mkRes(fieldFirstName, "zola", fieldSurname, nil, fieldEmail, "z@x.org", fieldCompany, "Acme", fieldStatus, statusInactive),
	}
	for _, r := range rows {
		if _, err := s.create(r); err != nil {
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
					q := listQuery{Sorts: mustSorts(t, c.sorts), Page: page, PageSize: size}
					if filter != "" {
						q.Filter = mustFilter(t, filter)
					}
					total, p := s.list(q)
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
					want[i] = rows[w].id()
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
		"Id~eq~'" + strings.ToUpper(rows[2].id()) + "'", // byID
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
		var match []*resource
		for _, r := range rows {
			if filter == nil || filter.match(newEntry(r)) {
				match = append(match, r)
			}
		}
		for _, ss := range sorts {
			keys := mustSorts(t, ss)
			want := slices.Clone(match)
			slices.SortStableFunc(want, func(a, b *resource) int { return naiveCompare(a, b, keys) })
			for size := 1; size <= len(rows)+1; size++ {
				for page := 1; page <= len(rows)+2; page++ {
					checkPage(t, s, listQuery{Filter: filter, Sorts: keys, Page: page, PageSize: size}, want, fs+" / "+ss)
				}
				checkPage(t, s, listQuery{Filter: filter, Sorts: keys, Page: math.MaxInt, PageSize: size}, want, fs+" / "+ss)
				checkPage(t, s, listQuery{Filter: filter, Sorts: keys, Page: math.MaxInt32, PageSize: math.MaxInt32}, want, fs+" / "+ss)
			}
			// Sorting the answer of an index must not reorder the index.
			mustCheck(t, s)
		}
	}
}

func checkPage(t *testing.T, s *store, q listQuery, all []*resource, what string) {
	t.Helper()
	total, page := s.list(q)
	var want []*resource
	if start := (q.Page - 1) * q.PageSize; q.Page-1 < len(all) && start/q.PageSize == q.Page-1 && start < len(all) {
		want = all[start:min(start+q.PageSize, len(all))]
	}
	if total != len(all) || !slices.Equal(ids(page), ids(want)) {
		t.Fatalf("%s page %d size %d: total %d (want %d), page %v (want %v)", what, q.Page, q.PageSize, total, len(all), ids(page), ids(want))
	}
}

// naiveCompare orders two resources by sort keys, written apart from
// compareResources: lower case, code points, null first, StatusId by number.
func naiveCompare(a, b *resource, keys []sortKey) int {
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
	s := newStore(nil)
	for _, q := range []listQuery{
		{Page: 1, PageSize: 20},
		{Page: 3, PageSize: 1},
		{Filter: mustFilter(t, "Email~eq~'x'"), Page: 1, PageSize: 20},
		{Filter: mustFilter(t, "Email~contains~'x'"), Page: 1, PageSize: 20},
		{Sorts: mustSorts(t, "Surname"), Page: 1, PageSize: 20},
	} {
		total, page := s.list(q)
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
	store := newStore(nil)
	ts := httptest.NewServer(newServer(kendoConfig(), store, nil))
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
		if resp.StatusCode == success(method, path) && out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				return 0, fmt.Errorf("%s %s: %v in %s", method, path, err, data)
			}
		}
		if resp.StatusCode != success(method, path) {
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
			batch := []*resource{mkRes(fieldCompany, "seeded", fieldEmail, "seed@x.org"), mkRes(fieldID, uuid.NewString(), fieldCompany, "seeded")}
			if err := store.insert(batch); err != nil {
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
			if err := checkStore(store); err != nil {
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
	if want := created + int(inserted.Load()); store.count() != want {
		t.Fatalf("store holds %d resources, want %d created and %d seeded", store.count(), created, inserted.Load())
	}
	mustCheck(t, store)
	for _, mine := range finals {
		for _, st := range mine {
			r, ok := storeGet(store, st.id)
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
	loaded := newStore(nil)
	if err := storeLoad(loaded, resources); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, loaded)
	want, _ := store.all()
	got, _ := loaded.all()
	if len(got) != len(want) {
		t.Fatalf("snapshot holds %d resources, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].vals != want[i].vals || got[i].null != want[i].null {
			t.Fatalf("snapshot resource %d differs: %v / %v", i, got[i].vals, want[i].vals)
		}
	}
	t.Logf("%d created, %d seeded, %d snapshots written", created, inserted.Load(), snaps.Load())
}

// A large batch fills the indexes on several goroutines; the store must end
// exactly as if it had been appended one resource at a time.
func TestStoreInsertLargeBatch(t *testing.T) {
	s := newStore(nil)
	s.create(mkRes(fieldCompany, "Acme", fieldEmail, "first@acme.test"))
	batch := make([]*resource, 10_000) // columns filled in parts, one per CPU
	for i := range batch {
		batch[i] = mkRes(fieldCompany, fmt.Sprintf("Co %d", i%7), fieldEmail, fmt.Sprintf("P%d@acme.test", i),
			fieldFirstName, []any{nil, "Ada", "ADA"}[i%3])
	}
	if err := s.insert(batch); err != nil {
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
		if total, _ := s.list(listQuery{Filter: mustFilter(t, tc.filter), Page: 1, PageSize: 10}); total != tc.want {
			t.Errorf("%s: %d matches, want %d", tc.filter, total, tc.want)
		}
	}
	if got := s.generation(); got < 10_002 {
		t.Errorf("Changes() = %d after 10,001 resources", got)
	}
}

// storeLoad replaces the store's contents with resources that carry their Ids,
// as a format-3 snapshot restores a namespace.
func storeLoad(s *store, rs []*resource) error { return s.restore(emptyBase, nil, rs) }

// indexContents returns what the Id maps and the indexes hold, base and
// layer together, as plain maps from folded value to positions.
func indexContents(s *store) (byID map[string]int32, index [numStringFields]map[string][]int32) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	byID = map[string]int32{}
	for pos := range int32(s.lenLocked()) {
		byID[s.at(pos).res.id()] = pos
	}
	for _, f := range indexedFields {
		index[f] = map[string][]int32{}
		for pos := range int32(s.lenLocked()) {
			if e := s.at(pos); !e.res.null[f] {
				index[f][e.fold[f]] = s.lookupLocked(f, e.fold[f])
			}
		}
	}
	return byID, index
}

// TestAppendFold: the bulk form of fold is fold, byte for byte.
func TestAppendFold(t *testing.T) {
	for _, s := range []string{"", "ada", "ADA Lovelace", "O'Brien-Smith 42", "Émile", "İlkay", "ẞ", "Σίσυφος", "KELVIN K", "\xff\xfeA", "a\x00Z", "🙂Z"} {
		if got := string(appendFold([]byte("x"), s)); got != "x"+fold(s) {
			t.Errorf("appendFold(%q) = %q, want %q", s, got, "x"+fold(s))
		}
	}
}

// TestSeedIDsDerived: a seed resource without an Id gets one derived from
// what it holds: the same at every freeze, a v4 GUID, distinct for
// identical resources, never one the seed gives, and an edit of one
// resource changes that one's Id alone.
func TestSeedIDsDerived(t *testing.T) {
	t.Parallel()
	items := `[{"Company": "A"}, {"Company": "A"}, {"FirstName": "Ada", "Surname": "Lovelace"}, {"Company": "B", "Address": {"City": "X"}}]`
	ids := func(body string) []string {
		t.Helper()
		rs, err := decodeSeed([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		b, err := newBase(rs)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range b.rows {
			out = append(out, e.res.id())
		}
		return out
	}
	first := ids(items)
	if again := ids(items); !slices.Equal(first, again) {
		t.Fatalf("the same seed froze twice with other Ids:\n%v\n%v", first, again)
	}
	for _, id := range first {
		if !guidV4.MatchString(id) {
			t.Errorf("derived Id %q is not a lower-case v4 GUID", id)
		}
	}
	if first[0] == first[1] {
		t.Errorf("two identical resources have the same Id %s", first[0])
	}
	edited := ids(strings.Replace(items, `"Ada"`, `"Augusta Ada"`, 1))
	if edited[2] == first[2] || !slices.Equal(slices.Delete(slices.Clone(edited), 2, 3), slices.Delete(slices.Clone(first), 2, 3)) {
		t.Errorf("an edit of resource 2 changed other Ids:\n%v\n%v", first, edited)
	}
	// A seed that gives, to another resource, the Id one would be derived:
	// the derived one steps aside.
	given := ids(`[{"Id": "` + first[2] + `", "Company": "Z"}, {"FirstName": "Ada", "Surname": "Lovelace"}]`)
	if given[0] != first[2] || given[1] == first[2] {
		t.Errorf("a given Id and a derived one collide: %v", given)
	}
}
