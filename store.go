package resourcedir

import (
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
)

// The store: a namespace's directory, a layer of its own changes on a
// frozen base that every namespace shares (the -seed file, indexed once). A
// new namespace, or a reset, is a new empty layer on the same base: it costs
// the same whatever the seed's size, and its memory grows with its writes.
//
// Positions: the base's resources take 0..len(base)-1 and the layer's own
// creations follow, so a position is a resource's place in the default
// (creation) order; an update keeps it.

// generation numbers every change of every store in the process, never
// twice: a store made in place of a removed one never repeats a value the
// snapshot saw, so the snapshot cannot mistake its changes for none.
var generation atomic.Uint64

func nextGeneration() uint64 { return generation.Add(1) }

// store is one directory: a layer of changes over a shared base.
type store struct {
	mu   sync.RWMutex
	seed *base // what Reset goes back to
	base *base // what the layer is on: seed, or empty once cleared

	// The layer: base positions written over, resources created here (at
	// positions from len(base.rows) on), their Ids, and the index of both.
	replaced map[int32]*entry
	own      []*entry
	ownByID  map[string]int32
	index    fieldIndexes

	// changes is the generation of the store's last mutation, so a
	// snapshot can tell whether it is stale.
	changes uint64
	idSeed  *uint64
	ids     io.Reader // nil: GUIDs from crypto/rand
}

// newStore returns an empty store; an idSeed makes its GUIDs the same every run.
func newStore(idSeed *uint64) *store { return newLayer(emptyBase, idSeed) }

// newLayer returns a store that starts from seed and goes back to it on Reset.
func newLayer(seed *base, idSeed *uint64) *store {
	s := &store{seed: seed, idSeed: idSeed}
	s.startLocked(seed)
	return s
}

// startLocked drops the layer and puts it on b.
func (s *store) startLocked(b *base) {
	s.base = b
	s.replaced, s.own, s.ownByID, s.index = nil, nil, map[string]int32{}, fieldIndexes{}
	s.restartIDsLocked(0)
	s.changes = nextGeneration()
}

// setSeed makes b what Reset goes back to, and puts an empty store on it.
func (s *store) setSeed(b *base) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seed = b
	if s.lenLocked() == 0 {
		s.startLocked(b)
	}
}

// restartIDsLocked restarts the reproducible GUID stream (-id-seed), keyed
// by n: 0 for an empty layer, which so creates the same Ids every time; the
// resources a restored layer holds, so that it does not replay their Ids.
func (s *store) restartIDsLocked(n int) {
	s.ids = nil // crypto/rand
	if s.idSeed != nil {
		var key [32]byte
		binary.LittleEndian.PutUint64(key[:8], *s.idSeed)
		binary.LittleEndian.PutUint64(key[8:16], uint64(n))
		s.ids = rand.NewChaCha8(key)
	}
}

// resetTo goes back to seed, which a reset goes back to from now on.
func (s *store) resetTo(seed *base) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seed = seed
	s.startLocked(seed)
}

// pinnedBase is the base the layer is on: the seed it was made or last
// reset from, or empty once cleared.
func (s *store) pinnedBase() *base {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.base
}

// clear removes every resource, the seed's included (until the next Reset).
func (s *store) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startLocked(emptyBase)
}

// count returns the number of resources.
func (s *store) count() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lenLocked()
}

func (s *store) lenLocked() int { return len(s.base.rows) + len(s.own) }

// generation returns the generation of the store's last change.
func (s *store) generation() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.changes
}

// at returns the resource at position pos.
func (s *store) at(pos int32) *entry {
	if n := int32(len(s.base.rows)); pos >= n {
		return s.own[pos-n]
	}
	if e, ok := s.replaced[pos]; ok {
		return e
	}
	return &s.base.rows[pos]
}

// eachMatchLocked calls visit, in position order, with each resource that
// filter (nil: any) matches, among an index's candidates when it allows.
func (s *store) eachMatchLocked(filter filterNode, visit func(pos int32, e *entry)) {
	if candidates, indexed := s.candidatesLocked(filter); indexed {
		for _, pos := range candidates {
			if e := s.at(pos); filter.match(e) {
				visit(pos, e)
			}
		}
		return
	}
	try := func(pos int32, e *entry) {
		if filter == nil || filter.match(e) {
			visit(pos, e)
		}
	}
	// The layer's replacements, in order, are walked beside the base rather
	// than looked up in their map at every row.
	over := slices.Sorted(maps.Keys(s.replaced))
	for i := range s.base.rows {
		e := &s.base.rows[i]
		if len(over) > 0 && over[0] == int32(i) {
			e, over = s.replaced[over[0]], over[1:]
		}
		try(int32(i), e)
	}
	for i, e := range s.own {
		try(int32(len(s.base.rows)+i), e)
	}
}

// find returns the position of the resource with Id id.
func (s *store) find(id string) (int32, bool) {
	if pos, ok := s.ownByID[id]; ok {
		return pos, true
	}
	pos, ok := s.base.byID[id]
	return pos, ok
}

// all returns every resource in creation order and the change counter they
// reflect. Resources are immutable, so the caller may read them unlocked.
func (s *store) all() ([]*resource, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*resource, s.lenLocked())
	for i := range out {
		out[i] = s.at(int32(i)).res
	}
	return out, s.changes
}

// newIDLocked generates a version-4 GUID that neither also, the layer, its
// base nor its seed holds: the seed's after a clear too, so that a PUT to an
// Id a client was given is never a write to a seed resource once reset.
func (s *store) newIDLocked(also map[string]bool) (string, error) {
	for {
		// Not NewRandomFromReader(crypto/rand.Reader): NewRandom does not
		// allocate, and a create counts its allocations.
		var u uuid.UUID
		var err error
		if s.ids == nil {
			u, err = uuid.NewRandom()
		} else {
			u, err = uuid.NewRandomFromReader(s.ids)
		}
		if err != nil {
			return "", fmt.Errorf("generate resource id: %w", err)
		}
		id := u.String() // once: each call makes a string
		_, inOwn := s.ownByID[id]
		_, inBase := s.base.byID[id]
		_, inSeed := s.seed.byID[id]
		if !inOwn && !inBase && !inSeed && !also[id] {
			return id, nil
		}
	}
}

// create stores r under a newly generated Id and returns it.
func (s *store) create(r *resource) (*resource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := s.newIDLocked(nil)
	if err != nil {
		return nil, err
	}
	r.set(fieldID, id, true)
	s.appendLocked(r)
	return r, nil
}

func (s *store) appendLocked(r *resource) {
	pos := int32(s.lenLocked())
	e := newEntry(r)
	s.own = append(s.own, e)
	s.ownByID[r.id()] = pos
	s.index.add(e, pos)
	s.changes = nextGeneration()
}

// errDuplicateID reports a seeded Id that is already taken.
type errDuplicateID struct {
	Index int
	ID    string
}

func (e *errDuplicateID) Error() string {
	return fmt.Sprintf("resource %d: Id %s is already in use", e.Index, e.ID)
}

// insert stores rs in order, all or nothing. A resource with an Id keeps it
// (it must not be in use, in the store or earlier in rs), in the canonical
// lower-case form; one without gets a generated Id.
func (s *store) insert(rs []*resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	given := make(map[string]bool)
	for i, r := range rs {
		id := r.id()
		if r.isNull(fieldID) || id == "" {
			continue
		}
		// Ids are keyed by the canonical form: an upper-case Id would
		// otherwise be a second key for the same GUID, which PUT never finds.
		if canonical, ok := parseGUID(id); ok && canonical != id {
			id = canonical
			r.set(fieldID, id, true)
		}
		if _, taken := s.find(id); taken || given[id] {
			return &errDuplicateID{Index: i, ID: id}
		}
		given[id] = true
	}
	for _, r := range rs {
		if r.isNull(fieldID) || r.id() == "" {
			id, err := s.newIDLocked(given)
			if err != nil {
				return err
			}
			given[id] = true // not to be generated again for a later item
			r.set(fieldID, id, true)
		}
	}
	for _, r := range rs {
		s.appendLocked(r)
	}
	return nil
}

// update replaces the resource with r's Id by r, keeping the stored Address
// (it is accepted on create only). It returns false when the Id is unknown.
func (s *store) update(r *resource) (*resource, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pos, ok := s.find(r.id())
	if !ok {
		return nil, false
	}
	old := s.at(pos)
	r.address = old.res.address
	e := newEntry(r)
	s.index.remove(old, pos) // nothing for a base row: the layer's index holds the layer's positions only
	if nb := int32(len(s.base.rows)); pos >= nb {
		s.own[pos-nb] = e
	} else {
		if s.replaced == nil {
			s.replaced = map[int32]*entry{}
		}
		s.replaced[pos] = e
	}
	s.index.add(e, pos)
	s.changes = nextGeneration()
	return r, true
}

// listQuery is what a list request asks for. Page is 1-based.
type listQuery struct {
	Filter   filterNode // nil matches everything
	Sorts    []sortKey
	Page     int
	PageSize int
}

// list returns the number of matching resources and the requested page:
// the matches in creation order (eachMatchLocked), one sort, one window.
func (s *store) list(q listQuery) (total int, page []*resource) {
	s.mu.RLock()
	defer s.mu.RUnlock()

	if q.Filter == nil && q.Sorts == nil {
		total = s.lenLocked()
		return total, pageOf(total, q, func(i int) *resource { return s.at(int32(i)).res })
	}
	if q.Sorts == nil {
		return s.filteredPageLocked(q)
	}
	var matches []match
	first, rest := q.Sorts[0], q.Sorts[1:]
	s.eachMatchLocked(q.Filter, func(pos int32, e *entry) {
		m := match{pos: pos, e: e}
		m.key, m.keySet = e.folded(first.Field)
		matches = append(matches, m)
	})
	slices.SortFunc(matches, func(a, b match) int {
		c := compareFolded(a.key, a.keySet, b.key, b.keySet, first.Desc)
		if c == 0 {
			c = compareEntries(a.e, b.e, rest)
		}
		if c == 0 {
			c = int(a.pos - b.pos) // creation order breaks ties, so the order is total
		}
		return c
	})
	return len(matches), pageOf(len(matches), q, func(i int) *resource { return matches[i].e.res })
}

// filteredPageLocked is list for a filter without a sort: the matches come
// in creation order, so only the page's are kept.
func (s *store) filteredPageLocked(q listQuery) (total int, page []*resource) {
	first, end := pageWindow(math.MaxInt, q) // the total is not known yet
	s.eachMatchLocked(q.Filter, func(_ int32, e *entry) {
		if total >= first && total < end {
			page = append(page, e.res)
		}
		total++
	})
	if page == nil {
		page = []*resource{}
	}
	return total, page
}

// match is a resource a filter matched, at its position, with the value of
// the first sort key beside it: sorting 100,000 reads the matches, not the
// resources spread over memory.
type match struct {
	pos    int32
	keySet bool
	key    string
	e      *entry
}

// pageWindow is where q's page starts and ends among total matches.
func pageWindow(total int, q listQuery) (start, end int) {
	start = total // past the end: only the totals are asked for
	if q.PageSize >= 1 && q.Page >= 1 && q.Page-1 <= total/q.PageSize {
		start = (q.Page - 1) * q.PageSize
	}
	return start, start + min(max(q.PageSize, 0), total-start) // no overflow
}

// pageOf is q's page of total matches, the ith of which is at(i).
func pageOf(total int, q listQuery, at func(i int) *resource) []*resource {
	start, end := pageWindow(total, q)
	page := make([]*resource, 0, end-start)
	for i := start; i < end; i++ {
		page = append(page, at(i))
	}
	return page
}

// candidatesLocked returns, in ascending order, positions that include
// every match of n, or indexed=false when n needs a scan: an eq on an
// indexed field or Id, alone, in an and (the shortest list) or in an or of
// such terms (the union).
func (s *store) candidatesLocked(n filterNode) (positions []int32, indexed bool) {
	switch n := n.(type) {
	case *filterCond:
		if n.Op != opEq || (n.Kind != valueString && n.Kind != valueInt) || n.Field >= numStringFields {
			return nil, false
		}
		if n.Field == fieldID {
			if pos, found := s.find(n.Fold); found {
				return []int32{pos}, true
			}
			return []int32{}, true
		}
		if !slices.Contains(indexedFields, n.Field) {
			return nil, false
		}
		return s.lookupLocked(n.Field, n.Fold), true
	case *filterLogic:
		found := false
		for _, t := range n.Terms {
			c, ok := s.candidatesLocked(t)
			switch {
			case n.Or && !ok:
				return nil, false
			case n.Or:
				positions, found = mergePositions(positions, c), true
			case ok && (!found || len(c) < len(positions)):
				positions, found = c, true
			}
		}
		return positions, found
	}
	return nil, false
}

// lookupLocked returns the positions whose field f folds to key: the base's,
// less those the layer wrote over, merged with the layer's.
func (s *store) lookupLocked(f field, key string) []int32 {
	fromBase := s.base.index[f][key]
	if len(s.replaced) > 0 {
		fromBase = slices.DeleteFunc(slices.Clone(fromBase), func(pos int32) bool {
			_, over := s.replaced[pos]
			return over
		})
	}
	return mergePositions(fromBase, s.index[f][key])
}

// mergePositions returns the sorted union of two sorted lists; the lists
// are only read, so one of them comes back as it is when the other is empty.
func mergePositions(a, b []int32) []int32 {
	switch {
	case len(b) == 0:
		return a
	case len(a) == 0:
		return b
	}
	out := make([]int32, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] < b[0]:
			out, a = append(out, a[0]), a[1:]
		case a[0] > b[0]:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// compareEntries orders by the sort keys: strings lower-cased, by code
// point, null first; StatusId numerically (its text is one digit).
func compareEntries(a, b *entry, keys []sortKey) int {
	for _, k := range keys {
		va, aSet := a.folded(k.Field)
		vb, bSet := b.folded(k.Field)
		if c := compareFolded(va, aSet, vb, bSet, k.Desc); c != 0 {
			return c
		}
	}
	return 0
}

// compareFolded orders two folded values of a field, null first.
func compareFolded(va string, aSet bool, vb string, bSet bool, desc bool) int {
	var c int
	switch {
	case aSet && bSet:
		c = strings.Compare(va, vb)
	case aSet:
		c = 1
	case bSet:
		c = -1
	}
	if desc {
		return -c
	}
	return c
}

// layerState is a store as the snapshot keeps it: its base and its layer.
type layerState struct {
	base     *base
	replaced []replacedResource
	own      []*resource
}

type replacedResource struct {
	pos int32
	res *resource
}

// state returns what the snapshot writes of the store; the layer is copied
// (its size is the namespace's writes), the base shared.
func (s *store) state() layerState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := layerState{base: s.base}
	for _, pos := range slices.Sorted(maps.Keys(s.replaced)) {
		st.replaced = append(st.replaced, replacedResource{pos, s.replaced[pos].res})
	}
	st.own = make([]*resource, len(s.own))
	for i, e := range s.own {
		st.own[i] = e.res
	}
	return st
}

// restore puts the store on b with a layer of replaced (resources of b)
// and own; it fails, leaving the store as it was, when an own Id is taken.
func (s *store) restore(b *base, replaced []replacedResource, own []*resource) error {
	// The new layer, built unlocked, then moved in.
	t := &store{base: b, replaced: make(map[int32]*entry, len(replaced)), ownByID: make(map[string]int32, len(own))}
	for _, rr := range replaced { // decodeV4 checked that each is in b
		e := newEntry(rr.res)
		t.replaced[rr.pos] = e
		t.index.add(e, rr.pos)
	}
	for i, r := range own {
		if _, taken := t.find(r.id()); taken {
			return &errDuplicateID{Index: i, ID: r.id()}
		}
		t.appendLocked(r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.base, s.replaced, s.own, s.ownByID, s.index = t.base, t.replaced, t.own, t.ownByID, t.index
	// The stream must not replay the Ids the layer already holds.
	s.restartIDsLocked(t.lenLocked())
	s.changes = nextGeneration()
	return nil
}
