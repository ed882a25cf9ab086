package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
)

// indexedFields are the fields with an exact-match index: the ones callers
// filter on to find a resource (spec 4.3) and Status. Id has its own map.
var indexedFields = []field{
	fieldDisplayName, fieldFirstName, fieldSurname, fieldCompany,
	fieldExternalID, fieldEmail, fieldStatus,
}

// Store holds the directory in memory. Resources live in a slice in creation
// order, so a resource's position (its slot) is also its place in the default
// order; nothing is ever removed except by Reset, so slots never move.
type Store struct {
	mu   sync.RWMutex
	rows []*Resource
	byID map[string]int32 // lower-case GUID to slot
	// index maps a field's folded value to the ascending slots holding it.
	// Null values are not indexed: eq never matches null.
	index [numStringFields]map[string][]int32
	// changes counts mutations, so a snapshot can tell whether it is stale.
	changes uint64
	// idSeed, when set, makes generated GUIDs reproducible: ids draws from
	// a PRNG seeded with it, restarted whenever the store is emptied so that
	// each test after a reset sees the same ids. Otherwise ids is nil and
	// GUIDs come from crypto/rand.
	idSeed *uint64
	ids    io.Reader
}

// NewStore returns an empty store. A non-nil idSeed makes the sequence of
// generated GUIDs the same on every run.
func NewStore(idSeed *uint64) *Store {
	s := &Store{idSeed: idSeed}
	s.resetLocked()
	return s
}

func (s *Store) resetLocked() {
	s.rows = nil
	s.byID = make(map[string]int32)
	for _, f := range indexedFields {
		s.index[f] = make(map[string][]int32)
	}
	if s.idSeed != nil {
		var key [32]byte
		binary.LittleEndian.PutUint64(key[:], *s.idSeed)
		s.ids = rand.NewChaCha8(key)
	}
	s.changes++
}

// Reset removes every resource.
func (s *Store) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
}

// Len returns the number of resources.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.rows)
}

// Changes returns a counter that moves whenever the store changes.
func (s *Store) Changes() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.changes
}

// All returns every resource in creation order and the change counter they
// reflect. Resources are immutable, so the caller may read them unlocked.
func (s *Store) All() ([]*Resource, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.rows), s.changes
}

func (s *Store) newIDLocked() (string, error) {
	for {
		var id uuid.UUID
		var err error
		if s.ids == nil {
			id, err = uuid.NewRandom()
		} else {
			id, err = uuid.NewRandomFromReader(s.ids)
		}
		if err != nil {
			return "", fmt.Errorf("generate resource id: %w", err)
		}
		str := id.String()
		if _, taken := s.byID[str]; !taken {
			return str, nil
		}
	}
}

// Create stores r under a newly generated Id and returns it.
func (s *Store) Create(r *Resource) (*Resource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := s.newIDLocked()
	if err != nil {
		return nil, err
	}
	r.set(fieldID, id, true)
	s.appendLocked(r)
	return r, nil
}

func (s *Store) appendLocked(r *Resource) {
	slot := int32(len(s.rows))
	s.rows = append(s.rows, r)
	s.byID[r.ID()] = slot
	for _, f := range indexedFields {
		if !r.isNull(f) {
			// The new slot is the largest, so appending keeps the list sorted.
			key := r.folds[f]
			s.index[f][key] = append(s.index[f][key], slot)
		}
	}
	s.changes++
}

// errDuplicateID reports a seeded Id that is already taken.
type errDuplicateID struct {
	Index int
	ID    string
}

func (e *errDuplicateID) Error() string {
	return fmt.Sprintf("resource %d: Id %s is already in use", e.Index, e.ID)
}

// Insert stores rs in order, all or nothing. A resource with an Id keeps it
// (it must not be in use, in the store or earlier in rs), in the canonical
// lower-case form; one without gets a generated Id.
func (s *Store) Insert(rs []*Resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	given := make(map[string]bool)
	for i, r := range rs {
		id := r.ID()
		if r.isNull(fieldID) || id == "" {
			continue
		}
		// byID is keyed by the canonical form: an upper-case Id would
		// otherwise be a second key for the same GUID, which PUT never finds.
		if u, err := uuid.Parse(id); err == nil && u.String() != id {
			id = u.String()
			r.set(fieldID, id, true)
		}
		if _, taken := s.byID[id]; taken || given[id] {
			return &errDuplicateID{Index: i, ID: id}
		}
		given[id] = true
	}
	for _, r := range rs {
		if r.isNull(fieldID) || r.ID() == "" {
			id, err := s.newIDLocked()
			for err == nil && given[id] {
				id, err = s.newIDLocked()
			}
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

// Load replaces the store's contents with resources, which already carry
// their Ids (a snapshot); indexes are rebuilt. On error the store is left as
// it was.
func (s *Store) Load(resources []*Resource) error {
	seen := make(map[string]struct{}, len(resources))
	for i, r := range resources {
		if _, dup := seen[r.ID()]; dup {
			return &errDuplicateID{Index: i, ID: r.ID()}
		}
		seen[r.ID()] = struct{}{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
	s.rows = make([]*Resource, 0, len(resources))
	for _, r := range resources {
		s.appendLocked(r)
	}
	return nil
}

// Update replaces the resource with r's Id by r, keeping the stored Address
// (it is accepted on create only). It returns false when the Id is unknown.
func (s *Store) Update(r *Resource) (*Resource, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot, ok := s.byID[r.ID()]
	if !ok {
		return nil, false
	}
	old := s.rows[slot]
	r.address = old.address
	for _, f := range indexedFields {
		oldNull, newNull := old.isNull(f), r.isNull(f)
		if oldNull == newNull && old.folds[f] == r.folds[f] {
			continue
		}
		if !oldNull {
			s.unindexLocked(f, old.folds[f], slot)
		}
		if !newNull {
			s.indexLocked(f, r.folds[f], slot)
		}
	}
	s.rows[slot] = r
	s.changes++
	return r, true
}

func (s *Store) indexLocked(f field, key string, slot int32) {
	list := s.index[f][key]
	i, _ := slices.BinarySearch(list, slot)
	s.index[f][key] = slices.Insert(list, i, slot)
}

func (s *Store) unindexLocked(f field, key string, slot int32) {
	list := s.index[f][key]
	i, found := slices.BinarySearch(list, slot)
	if !found {
		return
	}
	if len(list) == 1 {
		delete(s.index[f], key)
		return
	}
	s.index[f][key] = slices.Delete(list, i, i+1)
}

// Get returns the resource with the given lower-case Id.
func (s *Store) Get(id string) (*Resource, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	slot, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	return s.rows[slot], true
}

// Query is what a list request asks for. Page is 1-based.
type Query struct {
	Filter   filterNode // nil matches everything
	Sorts    []sortKey
	Page     int
	PageSize int
}

// List returns the number of matching resources and the requested page.
// Without sorts, the cost after matching is the page size; an eq on an
// indexed field (alone or in an and) is answered from its index.
func (s *Store) List(q Query) (total int, page []*Resource) {
	s.mu.RLock()
	defer s.mu.RUnlock()

	offset := len(s.rows) // past the end: only the totals are needed
	if q.PageSize >= 1 && q.Page >= 1 && q.Page-1 <= len(s.rows)/q.PageSize {
		offset = (q.Page - 1) * q.PageSize
	}
	pageOnly := q.Sorts == nil

	var slots []int32
	switch {
	case q.Filter == nil && pageOnly:
		total = len(s.rows)
		if offset >= total {
			return total, []*Resource{}
		}
		return total, slices.Clone(s.rows[offset:min(offset+q.PageSize, total)])
	case q.Filter == nil:
		slots = make([]int32, len(s.rows))
		for i := range slots {
			slots[i] = int32(i)
		}
	default:
		candidates, exact, indexed := s.candidatesLocked(q.Filter)
		if indexed && exact {
			slots = candidates
			if !pageOnly {
				slots = slices.Clone(slots) // sorted below; the index must not be
			}
			break
		}
		slots, total = s.filterLocked(q.Filter, candidates, !indexed, pageOnly, offset, q.PageSize)
		if pageOnly {
			return total, s.resourcesLocked(slots)
		}
	}

	total = len(slots)
	if !pageOnly {
		slices.SortFunc(slots, func(a, b int32) int {
			if c := compareResources(s.rows[a], s.rows[b], q.Sorts); c != 0 {
				return c
			}
			return int(a - b)
		})
	}
	if offset >= total {
		return total, []*Resource{}
	}
	return total, s.resourcesLocked(slots[offset:min(offset+q.PageSize, total)])
}

func (s *Store) resourcesLocked(slots []int32) []*Resource {
	page := make([]*Resource, len(slots))
	for i, slot := range slots {
		page[i] = s.rows[slot]
	}
	return page
}

// candidatesLocked returns ascending slots that hold every match of n, or
// indexed=false when n needs a full scan. exact means every candidate matches.
func (s *Store) candidatesLocked(n filterNode) (slots []int32, exact, indexed bool) {
	switch n := n.(type) {
	case *filterCond:
		if n.Op != opEq || (n.Kind != valueString && n.Kind != valueInt) || n.Field >= numStringFields {
			return nil, false, false
		}
		if n.Field == fieldID {
			if slot, found := s.byID[n.Fold]; found {
				return []int32{slot}, true, true
			}
			return nil, true, true
		}
		if s.index[n.Field] == nil {
			return nil, false, false
		}
		return s.index[n.Field][n.Fold], true, true
	case *filterLogic:
		if n.Or {
			var union []int32
			for _, t := range n.Terms {
				c, _, ok := s.candidatesLocked(t)
				if !ok {
					return nil, false, false
				}
				union = mergeSlots(union, c)
			}
			return union, false, true
		}
		// The smallest candidate list of the and's terms bounds the matches.
		found := false
		for _, t := range n.Terms {
			c, _, ok := s.candidatesLocked(t)
			if ok && (!found || len(c) < len(slots)) {
				slots, found = c, true
			}
		}
		return slots, false, found
	}
	return nil, false, false
}

// mergeSlots returns the sorted union of two sorted slot lists.
func mergeSlots(a, b []int32) []int32 {
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

// filterLocked evaluates n on the candidate slots, or on every slot with
// scanAll. With pageOnly it counts every match but keeps only the slots of
// the page at offset, so memory stays O(page size) whatever matches.
func (s *Store) filterLocked(n filterNode, candidates []int32, scanAll, pageOnly bool, offset, size int) (slots []int32, total int) {
	count := len(candidates)
	if scanAll {
		count = len(s.rows)
	}
	for i := 0; i < count; i++ {
		slot := int32(i)
		if !scanAll {
			slot = candidates[i]
		}
		if !n.match(s.rows[slot]) {
			continue
		}
		if !pageOnly || (total >= offset && total-offset < size) {
			slots = append(slots, slot)
		}
		total++
	}
	return slots, total
}

// compareResources orders by the sort keys: strings lower-cased, by code
// point, null first; StatusId numerically.
func compareResources(a, b *Resource, keys []sortKey) int {
	for _, k := range keys {
		var c int
		switch {
		case k.Field == fieldStatusID:
			c = a.statusID() - b.statusID()
		case a.isNull(k.Field) || b.isNull(k.Field):
			c = boolCompare(!a.isNull(k.Field), !b.isNull(k.Field))
		default:
			c = strings.Compare(a.folds[k.Field], b.folds[k.Field])
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

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
