// Package rollup holds the rows of one consume chunk in memory: with rollup
// on, rows of the same time and dimension values combine into one (each
// metric through internal/aggregate), and the chunk leaves sorted, ready
// for a segment file.
//
// Layout: rows is the held rows in the order their keys first came, each
// row's Dims and Metrics the arrays Add was given (metrics combine into
// them in place). With rollup on, table (table.go) maps a key to its row:
// open addressing over slots of a 32-bit key hash and a row index, the key
// hashed from the row's Time and Dims (hash.go) and compared with the held
// row's on a hash match, so no key is built or kept per row. A
// hyperUnique cell that rows merged into is decoded once into sketches and
// encoded back by Rows. Rows sorts rows in place (sort.go, order.go), with
// rollup on through 24-byte sort keys. The table and the sort keys go back
// to pools when Rows returns, the rows slice when the caller Recycles it,
// so a steady stream of chunks allocates none of them.
//
// Rows taken by AddView (columnar.go) are held instead as columns
// (internal/columns): time, a dictionary code per dimension, the metric
// cells. The table's slots then index the columns, keys hash and compare
// as codes, the sort orders row indexes on the codes, and Rows makes the
// rows, in order, only then.
package rollup

import (
	"fmt"
	"sync"
	"unsafe"

	"handoff/internal/aggregate"
	"handoff/internal/columns"
	"handoff/internal/domain"
)

// Buffer is the in-memory rows of one chunk. It is not safe for concurrent
// use.
type Buffer struct {
	merger // combine.go: metrics, decoded sketches, heap estimate
	rollup bool
	rows   []domain.Row
	// table maps a rollup key to its row in rows, or in cols (rollup
	// only).
	table *table
	// cols holds the rows taken by AddView (columnar.go), nil until the
	// first; codes is the scratch of one row's dimension codes.
	cols  *columns.Chunk
	codes []uint32
	types []domain.ColumnType // the columns' types, for their sort
}

type cell struct{ row, metric int }

// Estimated heap costs, for maxBytesInMemory: a Row header in the rows
// slice, a Value in a Dims or Metrics array, and a decoded sketch's entry
// (a key in the table is slotBytes).
const (
	rowBytes    = int64(unsafe.Sizeof(domain.Row{}))
	valueBytes  = int64(unsafe.Sizeof(domain.Value{}))
	sketchBytes = 48
)

// New returns an empty buffer for rows of the given metrics, combining rows
// of equal time and dimensions when rollup is on.
func New(metrics []domain.MetricSpec, rollup bool) *Buffer {
	b := &Buffer{merger: merger{metrics: metrics}, rollup: rollup}
	b.reset()
	return b
}

// rowSlices keeps the rows slices of written chunks for the next chunks:
// growing a fresh one to 150,000 rows costs more than filling it.
var rowSlices sync.Pool // *[]domain.Row, empty

// Recycle hands back a slice Rows returned, once nothing reads its rows.
func Recycle(rows []domain.Row) {
	clear(rows) // drop the references to the rows' arrays and strings
	rows = rows[:0]
	rowSlices.Put(&rows)
}

func (b *Buffer) reset() {
	b.rows, b.content = nil, 0
	if p, ok := rowSlices.Get().(*[]domain.Row); ok {
		b.rows = *p
	}
	if b.rollup {
		b.table = getTable()
		b.sketches = map[cell]*aggregate.Sketch{}
	}
}

// Add takes one row; the buffer owns its Dims and Metrics from now on (it
// combines into Metrics in place). Dims may be shorter than other rows'
// (the rest are null). With rollup on, a row whose Time and Dims equal a
// held row's combines into it. An error, only for a sketch that does not
// decode, may leave the held row partly combined.
func (b *Buffer) Add(r domain.Row) error {
	if len(r.Metrics) != len(b.metrics) {
		return fmt.Errorf("row has %d metrics, want %d", len(r.Metrics), len(b.metrics))
	}
	if b.cols != nil {
		return fmt.Errorf("a buffer holding rows from AddView cannot take rows by Add")
	}
	if b.rollup {
		h, n := keyHash(r)
		i, at := b.find(&r, h, n)
		if i >= 0 {
			return b.combine(b.rows, i, r)
		}
		if len(b.rows) >= maxRows {
			return fmt.Errorf("more than %d rows", maxRows)
		}
		b.table.insert(at, h, len(b.rows))
		b.content += slotBytes
	}
	b.rows = append(b.rows, r)
	b.content += rowContent(r)
	return nil
}

// rowContent is the heap a row's arrays and strings hold.
func rowContent(r domain.Row) int64 {
	n := valueBytes * int64(cap(r.Dims)+cap(r.Metrics))
	for _, v := range r.Dims {
		n += int64(len(v.S))
	}
	for _, v := range r.Metrics {
		n += int64(len(v.S))
	}
	return n
}

// Len is the number of rows held (after rollup).
func (b *Buffer) Len() int {
	if b.cols != nil {
		return b.cols.Len()
	}
	return len(b.rows)
}

// Bytes estimates the heap the buffer holds: rows, their arrays and
// strings, the rollup table and decoded sketches. It is for maxBytesInMemory,
// not exact accounting. Row headers count by length, not capacity: a
// recycled slice (see Recycle) is already as large as earlier chunks made
// it, and that is the worker's memory, not this chunk's.
func (b *Buffer) Bytes() int64 {
	return rowBytes*int64(b.Len()) + b.content
}

// Rows returns the held rows sorted by domain.CompareRows over dims (the
// chunk's final dimension columns; rows may have fewer Dims, the rest being
// null) and empties the buffer. Rows that compare equal (rollup off) keep
// the order they were added in.
func (b *Buffer) Rows(dims []domain.Column) []domain.Row {
	var rows []domain.Row
	if b.cols != nil {
		rows = b.columnRows(dims) // sorted on the columns
	} else {
		for c, s := range b.sketches {
			b.rows[c.row].Metrics[c.metric] = s.Value()
		}
		rows = b.rows
		// Keys are unique with rollup on: no ties to keep in order but
		// those CompareRows makes (-0 and 0, NaN), which stay as they
		// always were.
		sortRows(rows, dims, !b.rollup)
	}
	if b.table != nil {
		putTable(b.table)
		b.table = nil
	}
	b.reset()
	return rows
}
