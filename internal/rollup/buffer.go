// Package rollup holds the rows of one consume chunk in memory: with rollup
// on, rows of the same time and dimension values combine into one (each
// metric through internal/aggregate), and the chunk leaves sorted, ready
// for a segment file.
package rollup

import (
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

// Buffer is the in-memory rows of one chunk. It is not safe for concurrent
// use.
type Buffer struct {
	metrics []domain.MetricSpec
	rollup  bool
	rows    []domain.Row
	// index maps a rollup key to its row in rows (rollup only).
	index map[string]int
	// sketches are the decoded hyperUnique cells that rows merged into;
	// Rows encodes them back into their cells.
	sketches map[cell]*aggregate.Sketch
	key      []byte // scratch for the key of the row being added
	content  int64  // estimated heap of everything but the rows slice
}

type cell struct{ row, metric int }

// Estimated heap costs, for maxBytesInMemory: a Row header in the rows
// slice, a Value in a Dims or Metrics array, a map entry beside its key's
// bytes, and a decoded sketch's entry.
const (
	rowBytes    = int64(unsafe.Sizeof(domain.Row{}))
	valueBytes  = int64(unsafe.Sizeof(domain.Value{}))
	indexBytes  = 48
	sketchBytes = 48
)

// New returns an empty buffer for rows of the given metrics, combining rows
// of equal time and dimensions when rollup is on.
func New(metrics []domain.MetricSpec, rollup bool) *Buffer {
	b := &Buffer{metrics: metrics, rollup: rollup}
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
		b.index = map[string]int{}
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
	if b.rollup {
		b.key = appendKey(b.key[:0], r)
		if i, ok := b.index[string(b.key)]; ok {
			return b.combine(i, r)
		}
		b.index[string(b.key)] = len(b.rows) // the key's one allocation
		b.content += indexBytes + int64(len(b.key))
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

// combine folds r's metrics into held row i.
func (b *Buffer) combine(i int, r domain.Row) error {
	held := b.rows[i].Metrics
	for j, m := range b.metrics {
		if m.Type == domain.MetricHyperUnique {
			if err := b.mergeSketch(i, j, r.Metrics[j]); err != nil {
				return err
			}
			continue
		}
		v, err := aggregate.Combine(m, held[j], r.Metrics[j])
		if err != nil {
			return err
		}
		held[j] = v
	}
	return nil
}

// mergeSketch merges v into cell (i, j), decoding the cell once, on its
// first merge, rather than re-encoding a growing sketch per row.
func (b *Buffer) mergeSketch(i, j int, v domain.Value) error {
	if v.Null {
		return nil
	}
	held := &b.rows[i].Metrics[j]
	c := cell{i, j}
	s := b.sketches[c]
	if s == nil {
		if held.Null {
			*held = v
			b.content += int64(len(v.S))
			return nil
		}
		s = new(aggregate.Sketch)
		if err := s.Merge(*held); err != nil {
			return fmt.Errorf("metric %q: %w", b.metrics[j].Name, err)
		}
		b.sketches[c] = s
		b.content += sketchBytes + int64(s.Bytes())
	}
	before := s.Bytes()
	if err := s.Merge(v); err != nil {
		return fmt.Errorf("metric %q: %w", b.metrics[j].Name, err)
	}
	b.content += int64(s.Bytes() - before)
	return nil
}

// Len is the number of rows held (after rollup).
func (b *Buffer) Len() int { return len(b.rows) }

// Bytes estimates the heap the buffer holds: rows, their arrays and
// strings, rollup keys and decoded sketches. It is for maxBytesInMemory,
// not exact accounting. Row headers count by length, not capacity: a
// recycled slice (see Recycle) is already as large as earlier chunks made
// it, and that is the worker's memory, not this chunk's.
func (b *Buffer) Bytes() int64 {
	return rowBytes*int64(len(b.rows)) + b.content
}

// Rows returns the held rows sorted by domain.CompareRows over dims (the
// chunk's final dimension columns; rows may have fewer Dims, the rest being
// null) and empties the buffer. Rows that compare equal (rollup off) keep
// the order they were added in.
func (b *Buffer) Rows(dims []domain.Column) []domain.Row {
	for c, s := range b.sketches {
		b.rows[c.row].Metrics[c.metric] = s.Value()
	}
	rows := b.rows
	cmp := func(x, y domain.Row) int { return domain.CompareRows(x, y, dims) }
	if b.rollup {
		slices.SortFunc(rows, cmp) // keys are unique: no ties to keep in order
	} else {
		slices.SortStableFunc(rows, cmp)
	}
	b.reset()
	return rows
}
