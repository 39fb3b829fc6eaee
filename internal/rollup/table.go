package rollup

import (
	"sync"

	"handoff/internal/domain"
)

// table is an open-addressing hash table (linear probing, at most half
// full) from a rollup key to the row holding it. A slot holds the key's
// 32-bit hash and the row's index plus one, 0 marking an empty slot: the
// keys themselves are the rows' Time and Dims, compared on a hash match.
type table struct {
	slots []slot // len is a power of two
	used  int
}

type slot struct{ hash, row uint32 }

const (
	minSlots = 1 << 10
	// slotBytes is the estimated heap of one key in the table: two slots,
	// the table being at most half full.
	slotBytes = 2 * 8
	// maxRows keeps row+1 within a slot's uint32.
	maxRows = 1<<32 - 2
)

// tables keeps the tables of written chunks for the next chunks, as
// rowSlices keeps their rows slices.
var tables sync.Pool // *table, empty

func getTable() *table {
	if t, ok := tables.Get().(*table); ok {
		return t
	}
	return &table{slots: make([]slot, minSlots)}
}

func putTable(t *table) {
	clear(t.slots)
	t.used = 0
	tables.Put(t)
}

// find returns the held row with r's key (of hash h and keyLen n), or -1
// and the empty slot where the key goes.
func (b *Buffer) find(r *domain.Row, h uint32, n int) (row, at int) {
	slots := b.table.slots
	mask := uint32(len(slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := slots[i]
		if s.row == 0 {
			return -1, int(i)
		}
		if s.hash == h && sameKey(&b.rows[s.row-1], r, n) {
			return int(s.row - 1), int(i)
		}
	}
}

// insert puts row in empty slot at (from find) and grows the table once
// it is half full.
func (t *table) insert(at int, h uint32, row int) {
	t.slots[at] = slot{hash: h, row: uint32(row + 1)}
	t.used++
	if 2*t.used > len(t.slots) {
		t.grow()
	}
}

func (t *table) grow() {
	old := t.slots
	t.slots = make([]slot, 2*len(old))
	mask := uint32(len(t.slots) - 1)
	for _, s := range old {
		if s.row == 0 {
			continue
		}
		i := s.hash & mask
		for t.slots[i].row != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}
