package columns

import (
	"hash/maphash"
	"strings"

	"handoff/internal/domain"
)

// Dict is one dimension column's dictionary: its distinct non-null values
// in the order they first came, entry c-1 for code c, and an
// open-addressing index (linear probing, at most half full) of slots
// holding a value's 32-bit hash and its code, 0 marking an empty slot.
// Two values are the same entry when their strings and numbers are equal:
// a string dimension's values differ in S, a long's or a double's in N
// (so -0 and 0, or two NaNs of different bits, are different entries, as
// they are different rollup keys).
type Dict struct {
	values []domain.Value
	slots  []slot
	// plain: values are no longer looked up, each gets a code of its own
	// (see Chunk.Codes); equal values may then have different codes.
	plain bool
}

type slot struct{ hash, code uint32 }

const minSlots = 64

// maxScanned: a dictionary of at most this many entries is looked up by
// comparing the value with each, lengths first, which beats hashing it;
// the index is still kept, for when it grows.
const maxScanned = 8

var seed = maphash.MakeSeed()

// Len is the number of entries.
func (d *Dict) Len() int { return len(d.values) }

// Value returns the value of code (null for 0).
func (d *Dict) Value(code uint32) domain.Value {
	if code == 0 {
		return domain.NullValue()
	}
	return d.values[code-1]
}

// Code returns v's code, adding it (its string copied) if it is new.
func (d *Dict) Code(v *domain.Value) uint32 {
	if v.Null {
		return 0
	}
	if d.plain {
		d.values = append(d.values, domain.Value{S: strings.Clone(v.S), N: v.N})
		return uint32(len(d.values))
	}
	if len(d.values) <= maxScanned {
		for i := range d.values {
			if e := &d.values[i]; e.N == v.N && e.S == v.S {
				return uint32(i + 1)
			}
		}
		// New: the index below gives it its slot.
	}
	if d.slots == nil {
		d.slots = make([]slot, minSlots)
	}
	h := hashValue(v)
	mask := uint32(len(d.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := d.slots[i]
		if s.code == 0 {
			return d.add(i, h, v)
		}
		if s.hash == h {
			e := &d.values[s.code-1]
			if e.N == v.N && e.S == v.S {
				return s.code
			}
		}
	}
}

func (d *Dict) add(at, h uint32, v *domain.Value) uint32 {
	d.values = append(d.values, domain.Value{S: strings.Clone(v.S), N: v.N})
	code := uint32(len(d.values))
	d.slots[at] = slot{hash: h, code: code}
	if 2*len(d.values) > len(d.slots) {
		d.grow()
	}
	return code
}

func (d *Dict) grow() {
	old := d.slots
	d.slots = make([]slot, 2*len(old))
	mask := uint32(len(d.slots) - 1)
	for _, s := range old {
		if s.code == 0 {
			continue
		}
		i := s.hash & mask
		for d.slots[i].code != 0 {
			i = (i + 1) & mask
		}
		d.slots[i] = s
	}
}

// Reset empties the dictionary, keeping its memory (the strings it handed
// out stay valid: they are never written again).
func (d *Dict) Reset() {
	clear(d.values)
	d.values = d.values[:0]
	clear(d.slots)
	d.plain = false
}

// Plain reports whether equal values may have different codes.
func (d *Dict) Plain() bool { return d.plain }

// goPlain stops looking values up: from now on each value is added.
func (d *Dict) goPlain() {
	d.plain = true
	d.slots = nil // a chunk of unique ids grew it large; the next starts small
}

func hashValue(v *domain.Value) uint32 {
	x := v.N
	if v.S != "" {
		x ^= maphash.String(seed, v.S)
	}
	// splitmix64's finalizer: the slot's low bits depend on every bit.
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return uint32(x ^ x>>31)
}
