package main

import (
	"cmp"
	"slices"
	"strings"
)

// fieldIndex maps a folded value to the ascending slots that hold it. Most
// values of a near-unique field (Email, ExternalID, DisplayName) belong to
// one resource, so a lone slot is filed in one, a slotTable that reads its
// keys back from the field's column; only shared values get an entry in
// many. A map entry per value cost its key, its entry and its map's growth
// slack, 55 to 70 bytes a resource for each near-unique field.
type fieldIndex struct {
	one  slotTable
	many map[string]*postings
	// distinct is whether sizeFor's sample found the values mostly
	// distinct: 0 until it has looked, then 1 or -1.
	distinct int8
}

func newFieldIndex() *fieldIndex {
	return &fieldIndex{many: make(map[string]*postings)}
}

// sizeFor makes room in one for n more slots when a sample of the n values
// from first on shows most of them distinct (Email, ExternalID), so that it
// is not rehashed several times on the way to a million keys.
// The first large batch decides for the later ones: a seed in batches
// would otherwise sample every batch.
func (ix *fieldIndex) sizeFor(c *column, first int32, n int) {
	const sample = 4096
	if n < sample || ix.distinct < 0 {
		return
	}
	if ix.distinct == 0 {
		distinct := make(map[string]struct{}, sample)
		for i := range int32(sample) {
			fold, _ := c.get(first + i)
			distinct[fold] = struct{}{}
		}
		ix.distinct = -1
		if len(distinct)*2 > sample {
			ix.distinct = 1
		}
	}
	if ix.distinct > 0 {
		ix.one.reserve(n, c)
	}
}

// get returns the slots holding key; the caller must not modify them.
func (ix *fieldIndex) get(key string, keys *column) postings {
	if slot, ok := ix.one.find(key, keys); ok {
		return onePosting(slot)
	}
	if p := ix.many[key]; p != nil {
		return *p
	}
	return postings{}
}

// add records that slot holds fold, which keys (the field's column) holds
// at slot already.
func (ix *fieldIndex) add(fold string, slot int32, keys *column) {
	if len(ix.many) > 0 {
		if p := ix.many[fold]; p != nil {
			p.add(slot)
			return
		}
	}
	other, shared := ix.one.insertNew(fold, slot, keys)
	if !shared {
		return
	}
	ix.one.remove(fold, other)
	p := &postings{}
	p.add(min(other, slot))
	p.add(max(other, slot))
	// fold is the column's memory, which a key must not pin.
	ix.many[strings.Clone(fold)] = p
}

// remove records that slot no longer holds fold; keys must still give
// every other slot's current value.
func (ix *fieldIndex) remove(fold string, slot int32, keys *column) {
	if ix.one.remove(fold, slot) {
		return
	}
	p := ix.many[fold]
	if p == nil || !p.remove(slot) {
		return
	}
	if p.n == 1 {
		delete(ix.many, fold)
		ix.one.insert(fold, p.blocks[0][0], keys)
	}
}

// postingBlock is the size of a full block of a posting list: moving one
// Status among a million shifts at most twice this many slots instead of
// the 900,000 of a flat list, and a list of a few slots is one small block.
const postingBlock = 1024

// postings is an ascending list of slots, cut into blocks of 1 to
// 2*postingBlock slots, each block ascending and every slot of a block
// below every slot of the next.
type postings struct {
	n      int // slots in all blocks
	blocks [][]int32
}

func onePosting(slot int32) postings {
	return postings{n: 1, blocks: [][]int32{{slot}}}
}

// flatPostings wraps an ascending list; it must not be modified afterwards.
func flatPostings(slots []int32) postings {
	if len(slots) == 0 {
		return postings{}
	}
	return postings{n: len(slots), blocks: [][]int32{slots}}
}

// blockOf returns the first block whose last slot is at least slot
// (len(p.blocks) when slot is past the end).
func (p *postings) blockOf(slot int32) int {
	i, _ := slices.BinarySearchFunc(p.blocks, slot, func(b []int32, slot int32) int {
		return cmp.Compare(b[len(b)-1], slot)
	})
	return i
}

// add inserts slot, which must not be in p yet.
func (p *postings) add(slot int32) {
	p.n++
	last := len(p.blocks) - 1
	if last < 0 || slot > p.blocks[last][len(p.blocks[last])-1] {
		// Creates append the largest slot; only updates insert in the middle.
		if last < 0 || len(p.blocks[last]) >= postingBlock {
			p.blocks = append(p.blocks, []int32{slot})
		} else {
			p.blocks[last] = append(p.blocks[last], slot)
		}
		return
	}
	i := p.blockOf(slot)
	b := p.blocks[i]
	at, _ := slices.BinarySearch(b, slot)
	b = slices.Insert(b, at, slot)
	if len(b) <= 2*postingBlock {
		p.blocks[i] = b
		return
	}
	// Split a full block in two halves, each with room to grow.
	half := len(b) / 2
	p.blocks[i] = b[:half:half]
	p.blocks = slices.Insert(p.blocks, i+1, slices.Clone(b[half:]))
}

// remove deletes slot and reports whether it was there.
func (p *postings) remove(slot int32) bool {
	i := p.blockOf(slot)
	if i == len(p.blocks) {
		return false
	}
	b := p.blocks[i]
	at, found := slices.BinarySearch(b, slot)
	if !found {
		return false
	}
	p.n--
	b = slices.Delete(b, at, at+1)
	switch {
	case len(b) == 0:
		p.blocks = slices.Delete(p.blocks, i, i+1)
	case i+1 < len(p.blocks) && len(b)+len(p.blocks[i+1]) <= postingBlock:
		// Merge small neighbours, so that removals cannot leave a long
		// list of nearly empty blocks.
		p.blocks[i] = append(b, p.blocks[i+1]...)
		p.blocks = slices.Delete(p.blocks, i+1, i+2)
	default:
		p.blocks[i] = b
	}
	return true
}

// page returns the slots at positions offset to offset+size-1.
func (p postings) page(offset, size int) []int32 {
	if offset >= p.n {
		return nil
	}
	out := make([]int32, 0, min(size, p.n-offset))
	for _, b := range p.blocks {
		if offset >= len(b) {
			offset -= len(b)
			continue
		}
		take := b[offset:min(len(b), offset+size-len(out))]
		out = append(out, take...)
		offset = 0
		if len(out) == size {
			break
		}
	}
	return out
}

// flat returns every slot in one ascending list. It is the list itself when
// p has one block, so the caller must not modify it.
func (p postings) flat() []int32 {
	if len(p.blocks) == 1 {
		return p.blocks[0]
	}
	out := make([]int32, 0, p.n)
	for _, b := range p.blocks {
		out = append(out, b...)
	}
	return out
}
