package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"sort"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// column holds one field's folded (lower-case) values, laid out for scans:
// each slot's value sits in text behind a uvarint of its length plus one
// (0: null), and at gives where each slot's value starts. Creates append in
// slot order, so a scan reads text from front to back without touching a
// Resource. An update appends the new value and leaves the old bytes as
// garbage; once garbage is half the text, the column is rewritten.
//
// Offsets are 32-bit, which is 4 bytes per slot and field rather than 8;
// a column whose text outgrows 4 GiB switches to wide offsets.
type column struct {
	text    []byte
	at      []uint32
	wide    []uint64 // replaces at once text passes 4 GiB
	garbage int      // bytes of text no slot refers to
}

// appendFold appends the lower-case form of s to dst: strings.ToLower, with
// an allocation-free path for ASCII. It is the one folding rule of the
// directory; filters, sorts and indexes all compare what it produces.
func appendFold(dst []byte, s string) []byte {
	start := len(dst)
	dst = append(dst, s...)
	out := dst[start:]
	// Eight bytes at a time: with every byte below 0x80, adding 0x3f sets a
	// byte's top bit when it is 'A' or above and adding 0x25 when it is
	// above 'Z', without a carry into the next byte; the bytes between get
	// 0x20, the case bit. Loading and folding a million resources spent a
	// third of its time here a byte at a time.
	const high = 0x8080808080808080
	i := 0
	for ; i+8 <= len(out); i += 8 {
		w := binary.LittleEndian.Uint64(out[i:])
		if w&high != 0 {
			return append(dst[:start], strings.ToLower(s)...)
		}
		upper := (w + 0x3f3f3f3f3f3f3f3f) &^ (w + 0x2525252525252525) & high
		binary.LittleEndian.PutUint64(out[i:], w|upper>>2)
	}
	for ; i < len(out); i++ {
		c := out[i]
		if c >= utf8.RuneSelf {
			return append(dst[:start], strings.ToLower(s)...)
		}
		if c-'A' < 26 {
			out[i] = c + 'a' - 'A'
		}
	}
	return dst
}

func (c *column) len() int {
	if c.wide != nil {
		return len(c.wide)
	}
	return len(c.at)
}

func (c *column) offset(slot int32) int {
	if c.wide != nil {
		return int(c.wide[slot])
	}
	return int(c.at[slot])
}

func (c *column) setOffset(slot int32, off int) {
	if c.wide != nil {
		c.wide[slot] = uint64(off)
		return
	}
	c.at[slot] = uint32(off)
}

// get returns slot's folded value, ok=false for null. The string shares the
// column's memory: it stays valid, but must not be kept past the store's
// lock, or it would pin the whole text.
func (c *column) get(slot int32) (string, bool) {
	return c.valueAt(c.offset(slot))
}

func (c *column) valueAt(off int) (string, bool) {
	text := c.text[off:]
	n, w := uint64(text[0]), 1
	if n >= 0x80 {
		n, w = binary.Uvarint(text)
	}
	if n == 0 {
		return "", false
	}
	return unsafe.String(unsafe.SliceData(text[w:]), int(n-1)), true
}

// appendValue writes the fold of s (null when !ok) at the end of the text
// and returns where it starts.
func (c *column) appendValue(s string, ok bool) int {
	off := len(c.text)
	if !ok {
		c.text = append(c.text, 0)
	} else {
		// The length of a fold is known only after folding: reserve the
		// usual one byte, and move the value when its length needs more.
		c.text = append(c.text, 0)
		c.text = appendFold(c.text, s)
		n := uint64(len(c.text) - off - 1)
		if w := uvarintLen(n + 1); w == 1 {
			c.text[off] = byte(n + 1)
		} else {
			v := strings.Clone(unsafe.String(unsafe.SliceData(c.text[off+1:]), int(n)))
			c.text = binary.AppendUvarint(c.text[:off], n+1)
			c.text = append(c.text, v...)
		}
	}
	if c.wide == nil && len(c.text) > math.MaxUint32 {
		c.widen()
	}
	return off
}

// widen switches to 64-bit offsets.
func (c *column) widen() {
	c.wide = make([]uint64, len(c.at), cap(c.at))
	for i, o := range c.at {
		c.wide[i] = uint64(o)
	}
	c.at = nil
}

func uvarintLen(n uint64) int {
	w := 1
	for n >= 0x80 {
		n >>= 7
		w++
	}
	return w
}

// push appends a slot holding s.
func (c *column) push(s string, ok bool) {
	off := c.appendValue(s, ok)
	if c.wide != nil {
		c.wide = append(c.wide, uint64(off))
	} else {
		c.at = append(c.at, uint32(off))
	}
}

// appendColumn appends p's slots, which must hold no garbage.
func (c *column) appendColumn(p *column) {
	base := len(c.text)
	c.text = append(c.text, p.text...)
	if c.wide == nil && len(c.text) > math.MaxUint32 {
		c.widen()
	}
	for slot := range int32(p.len()) {
		off := base + p.offset(slot)
		if c.wide != nil {
			c.wide = append(c.wide, uint64(off))
		} else {
			c.at = append(c.at, uint32(off))
		}
	}
}

// entryLen is the size of the entry at off: its length prefix and value.
func (c *column) entryLen(off int) int {
	if b := c.text[off]; b < 0x80 {
		return max(int(b), 1) // a null's 0, or 1 + a short value's length
	}
	n, w := binary.Uvarint(c.text[off:])
	if n == 0 {
		return w
	}
	return w + int(n-1)
}

// set replaces slot's value.
func (c *column) set(slot int32, s string, ok bool) {
	c.garbage += c.entryLen(c.offset(slot))
	c.setOffset(slot, c.appendValue(s, ok))
	if c.garbage > len(c.text)/2 && c.garbage > 1<<16 {
		c.compact()
	}
}

// compact rewrites the text without its garbage, in slot order. It always
// allocates a new text: values handed out by get stay as they were.
func (c *column) compact() {
	text := make([]byte, 0, len(c.text)-c.garbage)
	for slot := range int32(c.len()) {
		off := c.offset(slot)
		c.setOffset(slot, len(text))
		text = append(text, c.text[off:off+c.entryLen(off)]...)
	}
	c.text, c.garbage = text, 0
}

// eachContaining calls yield, in slot order, with every slot whose value
// contains needle, which must not be empty. Rather than a search per value
// it searches runs of slots whose entries lie back to back in the text
// (all of them until an update moves one): a step per slot finds where a
// run ends, and one search over its text finds its matches.
func (c *column) eachContaining(needle string, yield func(slot int32)) {
	pair := rarestPair(needle)
	n := int32(c.len())
	for first := int32(0); first < n; {
		start := c.offset(first)
		end, last := start+c.entryLen(start), first+1
		for last < n && c.offset(last) == end {
			end += c.entryLen(end)
			last++
		}
		c.searchRun(needle, pair, first, last, start, end, yield)
		first = last
	}
}

// searchRun finds needle, whose rarest pair is at pair, in the entries of
// slots first to last-1, which lie back to back from start to end.
func (c *column) searchRun(needle string, pair int, first, last int32, start, end int, yield func(slot int32)) {
	text := c.text[:end]
	for slot, at := first, start; slot < last; {
		i := indexNeedle(text[at:], needle, pair)
		if i < 0 {
			return
		}
		at += i
		// The entry holding at is the last one that starts at or before it.
		slot += int32(sort.Search(int(last-slot), func(k int) bool { return c.offset(slot+int32(k)) > at })) - 1
		off := c.offset(slot)
		length, w := binary.Uvarint(text[off:])
		valueStart, valueEnd := off+w, off+w+int(length)-1
		if length == 0 || at < valueStart || at+len(needle) > valueEnd {
			at++ // a match across a length prefix or into the next entry
			continue
		}
		yield(slot)
		slot, at = slot+1, valueEnd
	}
}

// indexNeedle returns the index of the first needle in b, or -1; k is
// rarestPair(needle). strings.Index looks for needle's first byte and then
// compares, which over a column's text stops at every 'a' or 'e'. This
// looks for the rarest two adjacent bytes of needle at once, eight places
// at a time (a byte of x is zero where the word holds the first of them,
// of y where the next byte holds the second), and compares needle there.
func indexNeedle(b []byte, needle string, k int) int {
	if len(needle) == 1 {
		return bytes.IndexByte(b, needle[0])
	}
	const ones, lows, highs = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	first, second := ones*uint64(needle[k]), ones*uint64(needle[k+1])
	i := 0
	for ; i+9 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		x := w ^ first
		y := (w>>8 | uint64(b[i+8])<<56) ^ second
		// A byte's top bit is set in x|y, or by the add, unless both are zero.
		both := x | y
		for flags := ^((both&lows + lows) | both) & highs; flags != 0; flags &= flags - 1 {
			p := i + bits.TrailingZeros64(flags)/8 - k
			if p >= 0 && p+len(needle) <= len(b) && string(b[p:p+len(needle)]) == needle {
				return p
			}
		}
	}
	for p := max(i-k, 0); p+len(needle) <= len(b); p++ {
		if string(b[p:p+len(needle)]) == needle {
			return p
		}
	}
	return -1
}

// letterRank orders the letters from the most to the least frequent in
// names and English text; rarestPair takes any other byte to be rare.
const letterRank = "eainorsltdhcumgkybpfwvjzxq"

// rarestPair returns k such that needle[k:k+2] is its least frequent pair
// of adjacent bytes by letterRank, the first of equals.
func rarestPair(needle string) int {
	rarity := func(c byte) int {
		if i := strings.IndexByte(letterRank, c); i >= 0 {
			return i
		}
		if c == ' ' || c == '.' || c == '-' || c >= '0' && c <= '9' {
			return 5
		}
		return len(letterRank)
	}
	best, bestRarity := 0, -1
	for k := 0; k+1 < len(needle); k++ {
		if r := rarity(needle[k]) + rarity(needle[k+1]); r > bestRarity {
			best, bestRarity = k, r
		}
	}
	return best
}

// columnRow is one slot of the store's columns, as a filter reads it.
type columnRow struct {
	cols *[numStringFields]column
	rows []*Resource // for the Id, which has no column
	slot int32
}

func (r *columnRow) folded(f field) (string, bool) {
	switch f {
	case fieldID:
		return r.rows[r.slot].ID(), true
	case fieldStatusID:
		st, _ := r.cols[fieldStatus].get(r.slot)
		return statusIDText(st), true
	}
	return r.cols[f].get(r.slot)
}

// statusIDText is StatusId as text, from the folded Status.
func statusIDText(foldedStatus string) string {
	if foldedStatus == "inactive" {
		return "2"
	}
	return "1"
}

// slotKey is slot's folded value, as the field's index files it.
func (c *column) slotKey(slot int32) string {
	fold, _ := c.get(slot)
	return fold
}
