package main

import (
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"testing"
)

// check verifies a table's shape: its counts, a load within the limit,
// each slot once, and each slot reachable by a probe from its key's hash,
// which must not cross an empty place.
func (t *slotTable) check(keys slotKeys) error {
	if len(t.tags) != len(t.slots) || (len(t.tags) != 0 && len(t.tags)&(len(t.tags)-1) != 0) {
		return fmt.Errorf("%d tags and %d slots; want equal powers of two", len(t.tags), len(t.slots))
	}
	live, deleted := 0, 0
	seen := map[int32]bool{}
	for i, tag := range t.tags {
		switch tag {
		case tagEmpty:
			continue
		case tagDeleted:
			deleted++
			continue
		}
		live++
		slot := t.slots[i]
		if seen[slot] {
			return fmt.Errorf("slot %d is filed twice", slot)
		}
		seen[slot] = true
		at, want := t.hash(keys.slotKey(slot))
		if tag != want {
			return fmt.Errorf("slot %d has tag %d, its key's hash says %d", slot, tag, want)
		}
		for ; at != i; at = (at + 1) & (len(t.tags) - 1) {
			if t.tags[at] == tagEmpty {
				return fmt.Errorf("slot %d at place %d is past an empty place %d of its probe", slot, i, at)
			}
		}
	}
	if live != t.live || deleted != t.deleted {
		return fmt.Errorf("counts %d live and %d deleted places, holds %d and %d", t.live, t.deleted, live, deleted)
	}
	if len(t.tags) > 0 && (live+deleted)*slotTableLoadDen > len(t.tags)*slotTableLoadNum {
		return fmt.Errorf("%d live and %d deleted places of %d, past the load limit", live, deleted, len(t.tags))
	}
	return nil
}

// stringKeys gives slot i the key keys[i].
type stringKeys []string

func (k stringKeys) slotKey(slot int32) string { return k[slot] }

func TestSlotTablePlaces(t *testing.T) {
	for _, tc := range []struct{ keys, places int }{
		{0, 8}, {1, 8}, {5, 8}, {6, 8}, {7, 16}, {12, 16}, {13, 32},
		{768, 1024}, {769, 2048}, {1_000_000, 1 << 21},
	} {
		if got := slotTablePlaces(tc.keys); got != tc.places {
			t.Errorf("slotTablePlaces(%d) = %d, want %d", tc.keys, got, tc.places)
		}
	}
}

// TestSlotTable runs scripts of inserts and removes and checks what each
// key finds afterwards.
func TestSlotTable(t *testing.T) {
	keys := stringKeys{"a", "b", "c", "", "A", "ab", "ba", "x"}
	type op struct {
		remove, insertNew bool
		slot              int32
		ok                bool  // remove's result, or insertNew's found
		existing          int32 // insertNew's slot when found
	}
	for _, tc := range []struct {
		name  string
		start int // newSlotTable's room, -1 for the zero table
		ops   []op
		want  map[string]int32 // what find finds; every other key finds nothing
	}{
		{name: "zero table finds nothing", start: -1},
		{name: "zero table grows on insert", start: -1, ops: []op{{slot: 0}, {slot: 4}}, want: map[string]int32{"a": 0, "A": 4}},
		{name: "the empty key", start: 1, ops: []op{{slot: 3}}, want: map[string]int32{"": 3}},
		{name: "remove of an absent slot", start: 1, ops: []op{{slot: 0}, {remove: true, slot: 1}, {remove: true, slot: 5}},
			want: map[string]int32{"a": 0}},
		{name: "remove then insert again", start: 4, ops: []op{{slot: 0}, {slot: 1}, {remove: true, slot: 0, ok: true}, {slot: 0}},
			want: map[string]int32{"a": 0, "b": 1}},
		{name: "remove all", start: 4, ops: []op{{slot: 1}, {slot: 2}, {remove: true, slot: 1, ok: true}, {remove: true, slot: 2, ok: true},
			{remove: true, slot: 2}}},
		{name: "insertNew of a new key", start: 1, ops: []op{{insertNew: true, slot: 0}, {insertNew: true, slot: 1}},
			want: map[string]int32{"a": 0, "b": 1}},
		{name: "insertNew of a key in the table", start: 1,
			ops:  []op{{slot: 0}, {insertNew: true, slot: 0, ok: true, existing: 0}},
			want: map[string]int32{"a": 0}},
		{name: "insertNew after removes", start: 4,
			ops: []op{{slot: 0}, {slot: 1}, {slot: 2}, {remove: true, slot: 0, ok: true}, {remove: true, slot: 1, ok: true},
				{insertNew: true, slot: 1}, {insertNew: true, slot: 2, ok: true, existing: 2}},
			want: map[string]int32{"b": 1, "c": 2}},
		{name: "zero table grows on insertNew", start: -1, ops: []op{{insertNew: true, slot: 7}}, want: map[string]int32{"x": 7}},
		{name: "growth past the room asked for", start: 1,
			ops:  []op{{slot: 0}, {slot: 1}, {slot: 2}, {slot: 3}, {slot: 4}, {slot: 5}, {slot: 6}, {slot: 7}},
			want: map[string]int32{"a": 0, "b": 1, "c": 2, "": 3, "A": 4, "ab": 5, "ba": 6, "x": 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var table slotTable
			if tc.start >= 0 {
				table = newSlotTable(tc.start)
			}
			for _, o := range tc.ops {
				if o.insertNew {
					existing, found := table.insertNew(keys[o.slot], o.slot, keys)
					if found != o.ok || found && existing != o.existing {
						t.Fatalf("insertNew(%q, %d) = %d, %v; want %d, %v", keys[o.slot], o.slot, existing, found, o.existing, o.ok)
					}
					continue
				}
				if o.remove {
					if got := table.remove(keys[o.slot], o.slot); got != o.ok {
						t.Fatalf("remove(%q, %d) = %v, want %v", keys[o.slot], o.slot, got, o.ok)
					}
					continue
				}
				table.insert(keys[o.slot], o.slot, keys)
			}
			if err := table.check(keys); err != nil {
				t.Fatal(err)
			}
			if table.len() != len(tc.want) {
				t.Errorf("len = %d, want %d", table.len(), len(tc.want))
			}
			for _, key := range append(keys, "absent") {
				slot, ok := table.find(key, keys)
				want, wantOK := tc.want[key]
				if ok != wantOK || slot != want && ok {
					t.Errorf("find(%q) = %d, %v; want %d, %v", key, slot, ok, want, wantOK)
				}
			}
		})
	}
}

// TestSlotTableMatchesMap applies random inserts and removes, with growth,
// rebuilds and runs of deleted places, to a table and to a plain map, and
// compares every answer.
func TestSlotTableMatchesMap(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		rng := mrand.New(mrand.NewPCG(seed, 14))
		// Slot i's key; few distinct key lengths, so that hashes collide
		// in their low bits often enough to make long runs.
		var keys stringKeys
		want := map[string]int32{}
		var table slotTable
		if seed == 2 {
			table = newSlotTable(1000)
		}
		for step := range 20_000 {
			switch r := rng.IntN(10); {
			case r < 6 || len(want) == 0: // insert a key, by insert when it is new or by insertNew
				key := strconv.Itoa(rng.IntN(5000))
				slot := int32(len(keys))
				byInsertNew := rng.IntN(2) == 0
				if byInsertNew {
					keys = append(keys, key) // insertNew may read it back
					got, found := table.insertNew(key, slot, keys)
					if w, taken := want[key]; found != taken || taken && got != w {
						t.Fatalf("seed %d step %d: insertNew(%q) = %d, %v; want %d, %v", seed, step, key, got, found, w, taken)
					}
					if !found {
						want[key] = slot
					}
					continue
				}
				if _, taken := want[key]; taken {
					if got, ok := table.find(key, keys); !ok || got != want[key] {
						t.Fatalf("seed %d step %d: find(%q) = %d, %v; want %d", seed, step, key, got, ok, want[key])
					}
					continue
				}
				keys = append(keys, key)
				want[key] = slot
				table.insert(key, slot, keys)
			case r < 9: // remove a present key
				for key, slot := range want {
					if !table.remove(key, slot) {
						t.Fatalf("seed %d step %d: remove(%q, %d) = false", seed, step, key, slot)
					}
					delete(want, key)
					break
				}
			default: // remove with a wrong slot, or an absent key
				key := strconv.Itoa(rng.IntN(5000))
				slot, present := want[key]
				if table.remove(key, slot+1) {
					t.Fatalf("seed %d step %d: remove(%q, %d) removed a slot filed under another key", seed, step, key, slot+1)
				}
				if present {
					if got, ok := table.find(key, keys); !ok || got != slot {
						t.Fatalf("seed %d step %d: find(%q) after a wrong remove = %d, %v", seed, step, key, got, ok)
					}
				}
			}
			if step%1000 == 0 {
				if err := table.check(keys); err != nil {
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				}
			}
		}
		if err := table.check(keys); err != nil {
			t.Fatal(err)
		}
		if table.len() != len(want) {
			t.Fatalf("seed %d: len %d, want %d", seed, table.len(), len(want))
		}
		for i := range 5000 {
			key := strconv.Itoa(i)
			slot, ok := table.find(key, keys)
			if w, wok := want[key]; ok != wok || ok && slot != w {
				t.Fatalf("seed %d: find(%q) = %d, %v; want %d, %v", seed, key, slot, ok, w, wok)
			}
		}
		n := 0
		for slot := range table.all {
			if want[keys[slot]] != slot {
				t.Fatalf("seed %d: all yields slot %d, filed under %q, which holds %d", seed, slot, keys[slot], want[keys[slot]])
			}
			n++
		}
		if n != len(want) {
			t.Fatalf("seed %d: all yields %d slots, want %d", seed, n, len(want))
		}
	}
}
