package segment

import (
	"fmt"

	"handoff/internal/domain"
)

// cursor is an open file and its current row.
type cursor struct {
	r     *Reader
	index int // position among the merged paths: breaks ties
	row   domain.Row
	rows  int64 // rows read so far
}

// advance moves to the next row and checks that the file is sorted.
func (c *cursor) advance(dims []domain.Column) (bool, error) {
	row, ok, err := c.r.Next()
	if err != nil || !ok {
		return false, err
	}
	if c.rows > 0 && domain.CompareRows(c.row, row, dims) > 0 {
		return false, fmt.Errorf("segment %s is not sorted: row %d sorts before row %d", c.r.path, c.rows, c.rows-1)
	}
	c.row = row
	c.rows++
	return true, nil
}

// cursorHeap is a binary min-heap of cursors by current row, then index,
// so equal rows come out in the order of the paths.
type cursorHeap struct {
	dims    []domain.Column
	cursors []*cursor
}

func (h *cursorHeap) less(i, j int) bool {
	a, b := h.cursors[i], h.cursors[j]
	if d := domain.CompareRows(a.row, b.row, h.dims); d != 0 {
		return d < 0
	}
	return a.index < b.index
}

func (h *cursorHeap) init() {
	for i := len(h.cursors)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// fix restores the heap after the top cursor advanced.
func (h *cursorHeap) fix() { h.down(0) }

// pop drops the top cursor.
func (h *cursorHeap) pop() {
	last := len(h.cursors) - 1
	h.cursors[0] = h.cursors[last]
	h.cursors[last] = nil
	h.cursors = h.cursors[:last]
	h.down(0)
}

func (h *cursorHeap) down(i int) {
	n := len(h.cursors)
	for {
		least := i
		if l := 2*i + 1; l < n && h.less(l, least) {
			least = l
		}
		if r := 2*i + 2; r < n && h.less(r, least) {
			least = r
		}
		if least == i {
			return
		}
		h.cursors[i], h.cursors[least] = h.cursors[least], h.cursors[i]
		i = least
	}
}
