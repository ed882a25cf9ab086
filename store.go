package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
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
	byID slotTable // lower-case GUID to slot, read back from rows
	// cols holds every string field's folded values, slot by slot: filters
	// and sorts read them and never the resources. The Id column stays
	// empty: an Id is a canonical lower-case GUID, its own folded value,
	// so the resource's Id is read instead of a copy of 46 bytes a slot.
	cols [numStringFields]column
	// index maps a field's folded value to the ascending slots holding it.
	// Null values are not indexed: eq never matches null.
	index [numStringFields]*fieldIndex
	// changes counts mutations, so a snapshot can tell whether it is stale.
	changes uint64
	// idSeed, when set, makes generated GUIDs reproducible: ids draws from
	// a PRNG seeded with it, restarted whenever the store is emptied so that
	// each test after a reset sees the same ids. Otherwise ids is nil and
	// GUIDs come from crypto/rand.
	idSeed *uint64
	ids    io.Reader
	fold   []byte // Update's scratch space
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
	s.byID = slotTable{}
	s.cols = [numStringFields]column{}
	for _, f := range indexedFields {
		s.index[f] = newFieldIndex()
	}
	s.restartIDsLocked()
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
		if _, taken := s.byID.find(str, s.rowIDs()); !taken {
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
	s.byID.insert(r.ID(), slot, s.rowIDs())
	for f := fieldID + 1; f < numStringFields; f++ {
		c := &s.cols[f]
		c.push(r.str(f), !r.isNull(f))
		if s.index[f] != nil && !r.isNull(f) {
			fold, _ := c.get(slot)
			s.index[f].add(fold, slot, c)
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
		if _, taken := s.byID.find(id, s.rowIDs()); taken || given[id] {
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
	s.appendAllLocked(rs)
	return nil
}

// appendAllLocked appends a batch, filling the indexes concurrently.
func (s *Store) appendAllLocked(rs []*Resource) {
	if len(rs) < 1024 {
		for _, r := range rs {
			s.appendLocked(r)
		}
		return
	}
	first := int32(len(s.rows))
	s.rows = append(s.rows, rs...)
	var wg sync.WaitGroup
	wg.Go(func() {
		keys := s.rowIDs()
		s.byID.reserve(len(rs), keys)
		for i, r := range rs {
			s.byID.insert(r.ID(), first+int32(i), keys)
		}
	})
	fillFields(&s.cols, &s.index, rs, first, &wg)
	wg.Wait()
	s.changes += uint64(len(rs))
}

// Load replaces the store's contents with resources, which already carry
// their Ids (a snapshot); indexes are rebuilt. On error the store is left as
// it was.
func (s *Store) Load(resources []*Resource) error {
	// The Id map and the indexes are built aside, each on its own goroutine
	// and outside the lock, then swapped in: a million resources load in
	// about half the time of appending them one by one.
	var byID slotTable
	var dup error
	var cols [numStringFields]column
	var index [numStringFields]*fieldIndex
	var wg sync.WaitGroup
	wg.Go(func() {
		byID = newSlotTable(len(resources))
		keys := (*resourceIDs)(&resources)
		for i, r := range resources {
			if _, taken := byID.insertNew(r.ID(), int32(i), keys); taken {
				dup = &errDuplicateID{Index: i, ID: r.ID()}
				return
			}
		}
	})
	for _, f := range indexedFields {
		index[f] = newFieldIndex()
	}
	fillFields(&cols, &index, resources, 0, &wg)
	wg.Wait()
	if dup != nil {
		return dup
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
	s.rows = slices.Clone(resources)
	s.byID = byID
	s.cols = cols
	s.index = index
	s.restartIDsLocked()
	return nil
}

// fillFields appends rs, which take the slots from first on, to every
// field's column and index; the indexes are filled on goroutines of wg.
//
// The columns are filled first, by ranges of rs, one per CPU, each reading
// a resource once for all its fields: a goroutine per field read every
// resource once per field, and a million resources do not fit in a cache.
// Then, a field per goroutine, the ranges' columns are appended in order
// and the field's index is filled from its column alone.
func fillFields(cols *[numStringFields]column, index *[numStringFields]*fieldIndex, rs []*Resource, first int32, wg *sync.WaitGroup) {
	workers := min(runtime.GOMAXPROCS(0), max(1, len(rs)/4096))
	parts := make([][numStringFields]column, workers)
	var filled sync.WaitGroup
	for w := range workers {
		filled.Go(func() {
			part, rs := &parts[w], rs[len(rs)*w/workers:len(rs)*(w+1)/workers]
			// Each column's text is sized from a sample, so that it is not
			// copied a dozen times on its way; a bad guess only costs that.
			sample := rs[:min(len(rs), 256)]
			for f := fieldID + 1; f < numStringFields; f++ {
				size := 0
				for _, r := range sample {
					size += len(r.str(f)) + 1
				}
				part[f].text = make([]byte, 0, size*len(rs)/max(len(sample), 1)*17/16)
				part[f].at = make([]uint32, 0, len(rs))
			}
			for _, r := range rs {
				for f := fieldID + 1; f < numStringFields; f++ {
					part[f].push(r.str(f), !r.isNull(f))
				}
			}
		})
	}
	filled.Wait()
	for f := fieldID + 1; f < numStringFields; f++ {
		wg.Go(func() {
			c := &cols[f]
			if c.len() == 0 { // sized exactly: a loaded column keeps no slack
				size := 0
				for w := range parts {
					size += len(parts[w][f].text)
				}
				c.text = make([]byte, 0, size)
				c.at = make([]uint32, 0, len(rs))
			}
			for w := range parts {
				c.appendColumn(&parts[w][f])
				parts[w][f] = column{}
			}
			ix := index[f]
			if ix == nil {
				return
			}
			ix.sizeFor(c, first, len(rs))
			for slot := first; slot < first+int32(len(rs)); slot++ {
				if fold, ok := c.get(slot); ok {
					ix.add(fold, slot, c)
				}
			}
		})
	}
}

// resourceIDs gives the byID table the Id of a slot: the store's rows, or
// resources not in the store yet. It is passed as a pointer: a slice would
// be copied into an allocation each time it is passed as a slotKeys.
type resourceIDs []*Resource

func (ids *resourceIDs) slotKey(slot int32) string { return (*ids)[slot].ID() }

// rowIDs is the store's rows as the byID table reads them; it follows appends.
func (s *Store) rowIDs() *resourceIDs { return (*resourceIDs)(&s.rows) }

// restartIDsLocked restarts the reproducible GUID stream, keyed by the seed
// and the number of resources held: after loading a snapshot the stream
// must not replay the ids the snapshot already holds, which would cost one
// rejected guess per loaded resource.
func (s *Store) restartIDsLocked() {
	if s.idSeed == nil {
		return
	}
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:8], *s.idSeed)
	binary.LittleEndian.PutUint64(key[8:16], uint64(len(s.rows)))
	s.ids = rand.NewChaCha8(key)
}

// Update replaces the resource with r's Id by r, keeping the stored Address
// (it is accepted on create only). It returns false when the Id is unknown.
func (s *Store) Update(r *Resource) (*Resource, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot, ok := s.byID.find(r.ID(), s.rowIDs())
	if !ok {
		return nil, false
	}
	old := s.rows[slot]
	r.address = old.address
	for f := fieldID + 1; f < numStringFields; f++ { // an update keeps the Id
		isSet := !r.isNull(f)
		if isSet == !old.isNull(f) && r.str(f) == old.str(f) {
			continue // unchanged: the column is not even read
		}
		col := &s.cols[f]
		before, wasSet := col.get(slot)
		if wasSet == isSet {
			if !isSet {
				continue
			}
			s.fold = appendFold(s.fold[:0], r.str(f))
			if string(s.fold) == before {
				continue
			}
		}
		// before stays readable after set: a column never overwrites text.
		ix := s.index[f]
		if ix != nil && wasSet {
			ix.remove(before, slot, col)
		}
		col.set(slot, r.str(f), isSet)
		if ix != nil && isSet {
			fold, _ := col.get(slot)
			ix.add(fold, slot, col)
		}
	}
	s.rows[slot] = r
	s.changes++
	return r, true
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
			if pageOnly {
				if offset >= candidates.n {
					return candidates.n, []*Resource{}
				}
				return candidates.n, s.resourcesLocked(candidates.page(offset, q.PageSize))
			}
			slots = slices.Clone(candidates.flat()) // sorted below; the index must not be
			break
		}
		slots, total = s.filterLocked(q.Filter, candidates, !indexed, pageOnly, offset, q.PageSize)
		if pageOnly {
			return total, s.resourcesLocked(slots)
		}
	}

	total = len(slots)
	if offset >= total {
		return total, []*Resource{}
	}
	end := min(offset+q.PageSize, total)
	if !pageOnly {
		ra, rb := &columnRow{cols: &s.cols, rows: s.rows}, &columnRow{cols: &s.cols, rows: s.rows}
		order := func(a, b int32) int {
			ra.slot, rb.slot = a, b
			if c := compareResources(ra, rb, q.Sorts); c != 0 {
				return c
			}
			return int(a - b) // creation order breaks ties, so the order is total
		}
		if end <= total/8 {
			slots = smallestSorted(slots, end, order)
		} else {
			slices.SortFunc(slots, order)
		}
	}
	return total, s.resourcesLocked(slots[offset:end])
}

// smallestSorted returns the k smallest slots in order: O(n log k) with a
// bounded max-heap, so that the first pages of a sorted list over a million
// matches do not sort all of them.
func smallestSorted(slots []int32, k int, order func(a, b int32) int) []int32 {
	heap := make([]int32, 0, k)
	if k == 0 {
		return heap
	}
	for _, slot := range slots {
		if len(heap) < k {
			heap = append(heap, slot)
			for i := len(heap) - 1; i > 0; {
				parent := (i - 1) / 2
				if order(heap[parent], heap[i]) >= 0 {
					break
				}
				heap[parent], heap[i] = heap[i], heap[parent]
				i = parent
			}
			continue
		}
		if order(slot, heap[0]) >= 0 {
			continue
		}
		heap[0] = slot
		for i := 0; ; {
			largest, left, right := i, 2*i+1, 2*i+2
			if left < k && order(heap[left], heap[largest]) > 0 {
				largest = left
			}
			if right < k && order(heap[right], heap[largest]) > 0 {
				largest = right
			}
			if largest == i {
				break
			}
			heap[i], heap[largest] = heap[largest], heap[i]
			i = largest
		}
	}
	slices.SortFunc(heap, order)
	return heap
}

func (s *Store) resourcesLocked(slots []int32) []*Resource {
	page := make([]*Resource, len(slots))
	for i, slot := range slots {
		page[i] = s.rows[slot]
	}
	return page
}

// candidatesLocked returns the slots that hold every match of n, or
// indexed=false when n needs a full scan. exact means every candidate matches.
func (s *Store) candidatesLocked(n filterNode) (slots postings, exact, indexed bool) {
	switch n := n.(type) {
	case *filterCond:
		if n.Op != opEq || (n.Kind != valueString && n.Kind != valueInt) || n.Field >= numStringFields {
			return postings{}, false, false
		}
		if n.Field == fieldID {
			if slot, found := s.byID.find(n.Fold, s.rowIDs()); found {
				return onePosting(slot), true, true
			}
			return postings{}, true, true
		}
		if s.index[n.Field] == nil {
			return postings{}, false, false
		}
		return s.index[n.Field].get(n.Fold, &s.cols[n.Field]), true, true
	case *filterLogic:
		if n.Or {
			var union []int32
			for _, t := range n.Terms {
				c, _, ok := s.candidatesLocked(t)
				if !ok {
					return postings{}, false, false
				}
				union = mergeSlots(union, c.flat())
			}
			return flatPostings(union), false, true
		}
		// The smallest candidate list of the and's terms bounds the matches.
		found := false
		for _, t := range n.Terms {
			c, _, ok := s.candidatesLocked(t)
			if ok && (!found || c.n < slots.n) {
				slots, found = c, true
			}
		}
		return slots, false, found
	}
	return postings{}, false, false
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
func (s *Store) filterLocked(n filterNode, candidates postings, scanAll, pageOnly bool, offset, size int) (slots []int32, total int) {
	record := func(slot int32) {
		if !pageOnly || (total >= offset && total-offset < size) {
			slots = append(slots, slot)
		}
		total++
	}
	if c, ok := n.(*filterCond); ok && scanAll && c.Field != fieldID && c.Field < numStringFields && c.Op < numFilterOps {
		// One condition over every slot, the common scan: read its column
		// straight through rather than through the row interface.
		col := &s.cols[c.Field]
		if c.Op == opContains && c.Fold != "" {
			col.eachContaining(c.Fold, record)
			return slots, total
		}
		for slot := range int32(len(s.rows)) {
			if c.matchValue(col.get(slot)) {
				record(slot)
			}
		}
		return slots, total
	}
	cur := &columnRow{cols: &s.cols, rows: s.rows}
	keep := func(slot int32) {
		cur.slot = slot
		if n.match(cur) {
			record(slot)
		}
	}
	if scanAll {
		for slot := range int32(len(s.rows)) {
			keep(slot)
		}
		return slots, total
	}
	for _, b := range candidates.blocks {
		for _, slot := range b {
			keep(slot)
		}
	}
	return slots, total
}

// compareResources orders by the sort keys: strings lower-cased, by code
// point, null first; StatusId numerically (its text is one digit).
func compareResources(a, b row, keys []sortKey) int {
	for _, k := range keys {
		va, aSet := a.folded(k.Field)
		vb, bSet := b.folded(k.Field)
		var c int
		if aSet && bSet {
			c = strings.Compare(va, vb)
		} else {
			c = boolCompare(aSet, bSet)
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
