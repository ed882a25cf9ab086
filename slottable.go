package main

import (
	"hash/maphash"
	"math/bits"
	"slices"
)

// slotKeys gives the key a slot is filed under in a slotTable: a column's
// folded value, or a resource's Id.
type slotKeys interface {
	slotKey(slot int32) string
}

// slotTable maps string keys to slots, each key to one slot, without
// storing the keys: the caller's slotKeys reads a slot's key back when a
// lookup needs to compare it. A map[string]int32 of a million near-unique
// values costs 55 to 70 bytes a key (its entries, the key strings, and the
// slack of its growth); this costs 5 bytes per place, 7 to 13 a key
// (places are 4/3 to 8/3 of the keys).
//
// It is open addressing with linear probing over a power-of-two number of
// places. tags holds a byte of each place's hash (tagEmpty and tagDeleted
// are the free places), so that a probe reads a key back only when its tag
// matches: one in 254 of the places passed is read for nothing.
type slotTable struct {
	seed    maphash.Seed
	tags    []uint8
	slots   []int32
	live    int // places holding a slot
	deleted int // places freed by remove, which probes must walk past
}

const (
	tagEmpty   = 0
	tagDeleted = 1
	// The table grows, or is rebuilt without its deleted places, when live
	// and deleted places pass 3/4 of it: linear probing slows down fast
	// beyond that.
	slotTableLoadNum, slotTableLoadDen = 3, 4
	minSlotTablePlaces                 = 8
)

// newSlotTable returns a table with room for n keys before it grows.
func newSlotTable(n int) slotTable {
	var t slotTable
	t.resize(slotTablePlaces(n))
	return t
}

// slotTablePlaces is the number of places that hold n keys below the load
// limit.
func slotTablePlaces(n int) int {
	need := (n*slotTableLoadDen + slotTableLoadNum - 1) / slotTableLoadNum
	if need <= minSlotTablePlaces {
		return minSlotTablePlaces
	}
	return 1 << bits.Len(uint(need-1))
}

func (t *slotTable) len() int { return t.live }

// hash returns where key's probe starts and its tag.
func (t *slotTable) hash(key string) (place int, tag uint8) {
	h := maphash.String(t.seed, key)
	tag = uint8(h >> 56)
	if tag <= tagDeleted {
		tag += 2
	}
	return int(h) & (len(t.tags) - 1), tag
}

// find returns the slot filed under key.
func (t *slotTable) find(key string, keys slotKeys) (int32, bool) {
	if t.live == 0 {
		return 0, false
	}
	mask := len(t.tags) - 1
	for i, tag := t.hash(key); ; i = (i + 1) & mask {
		switch t.tags[i] {
		case tagEmpty:
			return 0, false
		case tag:
			if slot := t.slots[i]; keys.slotKey(slot) == key {
				return slot, true
			}
		}
	}
}

// insert files slot under key, which must not be in the table. keys must
// give every slot already in the table its key, which a resize rehashes.
func (t *slotTable) insert(key string, slot int32, keys slotKeys) {
	if (t.live+t.deleted+1)*slotTableLoadDen > len(t.tags)*slotTableLoadNum {
		t.rehash(slotTablePlaces(t.live+1), keys)
	}
	mask := len(t.tags) - 1
	i, tag := t.hash(key)
	for t.tags[i] > tagDeleted {
		i = (i + 1) & mask
	}
	if t.tags[i] == tagDeleted {
		t.deleted--
	}
	t.tags[i], t.slots[i] = tag, slot
	t.live++
}

// insertNew files slot under key unless key is in the table already; then
// it returns the slot filed under it and found. It is find and insert in
// one probe: loading a million keys, each probe is a cache miss.
func (t *slotTable) insertNew(key string, slot int32, keys slotKeys) (existing int32, found bool) {
	if (t.live+t.deleted+1)*slotTableLoadDen > len(t.tags)*slotTableLoadNum {
		t.rehash(slotTablePlaces(t.live+1), keys)
	}
	mask := len(t.tags) - 1
	free := -1 // the first deleted place passed, where slot goes
	i, tag := t.hash(key)
	for ; t.tags[i] != tagEmpty; i = (i + 1) & mask {
		switch {
		case t.tags[i] == tag && keys.slotKey(t.slots[i]) == key:
			return t.slots[i], true
		case t.tags[i] == tagDeleted && free < 0:
			free = i
		}
	}
	if free >= 0 {
		i = free
		t.deleted--
	}
	t.tags[i], t.slots[i] = tag, slot
	t.live++
	return 0, false
}

// reserve makes room for n more keys, so that a batch does not rehash the
// table several times on its way.
func (t *slotTable) reserve(n int, keys slotKeys) {
	if places := slotTablePlaces(t.live + n); places > len(t.tags) {
		t.rehash(places, keys)
	}
}

// remove takes slot, filed under key, out of the table and reports whether
// it was there. It compares slots, not keys: nothing is read back.
func (t *slotTable) remove(key string, slot int32) bool {
	if t.live == 0 {
		return false
	}
	mask := len(t.tags) - 1
	for i, tag := t.hash(key); ; i = (i + 1) & mask {
		switch t.tags[i] {
		case tagEmpty:
			return false
		case tag:
			if t.slots[i] != slot {
				continue
			}
			// A place that ends a run can be empty again: no probe
			// needs to walk past it.
			if t.tags[(i+1)&mask] == tagEmpty {
				t.tags[i] = tagEmpty
			} else {
				t.tags[i] = tagDeleted
				t.deleted++
			}
			t.live--
			return true
		}
	}
}

// all yields every slot in the table, in no particular order.
func (t *slotTable) all(yield func(slot int32) bool) {
	for i, tag := range t.tags {
		if tag > tagDeleted && !yield(t.slots[i]) {
			return
		}
	}
}

func (t *slotTable) resize(places int) {
	if t.seed == (maphash.Seed{}) {
		t.seed = maphash.MakeSeed()
	}
	t.tags = make([]uint8, places)
	t.slots = make([]int32, places)
	t.live, t.deleted = 0, 0
}

// rehash files every slot again in a table of at least places places.
func (t *slotTable) rehash(places int, keys slotKeys) {
	// The keys are read back in slot order, which reads a column's text
	// or the resources front to back: in the table's order, each read was
	// a cache miss, and rehashing took a quarter of seeding a million.
	live := make([]int32, 0, t.live)
	for k, tag := range t.tags {
		if tag > tagDeleted {
			live = append(live, t.slots[k])
		}
	}
	slices.Sort(live)
	t.resize(max(places, minSlotTablePlaces))
	mask := len(t.tags) - 1
	for _, slot := range live {
		i, tag := t.hash(keys.slotKey(slot))
		for t.tags[i] != tagEmpty {
			i = (i + 1) & mask
		}
		t.tags[i], t.slots[i] = tag, slot
		t.live++
	}
}
