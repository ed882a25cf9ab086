package main

import (
	"encoding/binary"
	"math"
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
