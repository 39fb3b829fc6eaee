package rollup

import (
	"fmt"
	"math/bits"
	"strings"
	"sync"

	"handoff/internal/columns"
	"handoff/internal/domain"
)

// The columnar mode of a Buffer: rows taken with AddView are held column
// by column (internal/columns), their dimensions as dictionary codes, so
// a rollup key is the time and one code per dimension, hashed and
// compared without a look at a string. Columns hands them to the chunk's
// staging writer sorted (segment.RunWriter.WriteColumns), with no
// domain.Row made; Rows still makes rows of them for other callers. The
// estimate (Bytes) is
// the one the rows would have cost, so chunks end where they did.

// spare keeps the columns of written chunks for the next chunks: a few,
// about one per stream a worker runs at once. Unlike a sync.Pool it
// keeps them through garbage collections, which a worker under its
// memory limit runs several times a chunk; a chunk's columns are a fifth
// of the memory its rows take once made.
var spare struct {
	sync.Mutex
	chunks []*columns.Chunk // empty
}

const maxSpare = 2

func getColumns() *columns.Chunk {
	spare.Lock()
	defer spare.Unlock()
	if n := len(spare.chunks); n > 0 {
		c := spare.chunks[n-1]
		spare.chunks = spare.chunks[:n-1]
		return c
	}
	return new(columns.Chunk)
}

func putColumns(c *columns.Chunk) {
	c.Reset()
	spare.Lock()
	defer spare.Unlock()
	if len(spare.chunks) < maxSpare {
		spare.chunks = append(spare.chunks, c)
	}
}

// AddView takes one row as Add does, but does not keep r: its strings
// may be views into memory that changes once AddView returns (a parser's
// message), and its arrays may be reused; the buffer copies what it
// keeps. The first row fixes the number of dimension columns; later rows
// have at most as many (the rest are null). A buffer takes rows through
// Add or through AddView, not both.
func (b *Buffer) AddView(r *domain.Row) error {
	if len(r.Metrics) != len(b.metrics) {
		return fmt.Errorf("row has %d metrics, want %d", len(r.Metrics), len(b.metrics))
	}
	c := b.cols
	if c == nil {
		if len(b.rows) > 0 {
			return fmt.Errorf("a buffer holding rows from Add cannot take rows by AddView")
		}
		c = b.getColumns(len(r.Dims))
	}
	if len(r.Dims) > len(c.Dims) {
		return fmt.Errorf("row has %d dimensions, the chunk's columns %d", len(r.Dims), len(c.Dims))
	}
	b.codes = c.Codes(r, b.codes)
	if b.rollup {
		h := codeHash(r.Time, b.codes)
		g, at := b.findCodes(h, r.Time, b.codes)
		if g >= 0 {
			return b.combineColumns(g, r)
		}
		if c.Len() >= maxRows {
			return fmt.Errorf("more than %d rows", maxRows)
		}
		b.table.insert(at, h, c.Len())
		b.content += slotBytes
	}
	c.Append(r.Time, b.codes, r.Metrics)
	// What Add's rowContent counts for the row the parser would have
	// made: a cell per dimension and metric, and the strings.
	n := valueBytes * int64(len(r.Dims)+len(r.Metrics))
	for i := range r.Dims {
		n += int64(len(r.Dims[i].S))
	}
	for i := range r.Metrics {
		n += int64(len(r.Metrics[i].S))
	}
	b.content += n
	return nil
}

func (b *Buffer) getColumns(dims int) *columns.Chunk {
	c := getColumns()
	c.Reshape(dims, b.metrics)
	c.MayGoPlain = !b.rollup // rollup compares codes
	b.cols = c
	return c
}

// codeHash hashes a rollup key held as codes: the time, then each code,
// the running hash multiplied between them so that their order counts.
func codeHash(t int64, codes []uint32) uint32 {
	x := uint64(t) * mul0
	for _, c := range codes {
		x = bits.RotateLeft64((x^uint64(c))*mul0, 29)
	}
	x = (x ^ x>>30) * mul1
	x = (x ^ x>>27) * mul2
	x ^= x >> 31
	return uint32(x) & hashMask
}

// findCodes is find over the columns: the held row with key (t, codes),
// or -1 and the empty slot where the key goes.
func (b *Buffer) findCodes(h uint32, t int64, codes []uint32) (row, at int) {
	slots, c := b.table.slots, b.cols
	mask := uint32(len(slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := slots[i]
		if s.row == 0 {
			return -1, int(i)
		}
		if s.hash == h && sameCodes(c, int(s.row-1), t, codes) {
			return int(s.row - 1), int(i)
		}
	}
}

func sameCodes(c *columns.Chunk, g int, t int64, codes []uint32) bool {
	if c.Time[g] != t {
		return false
	}
	for d, code := range codes {
		if c.Dims[d].Codes[g] != code {
			return false
		}
	}
	return true
}

// combineColumns folds r's metrics into held row g, as combine does.
func (b *Buffer) combineColumns(g int, r *domain.Row) error {
	c := b.cols
	for j, m := range b.metrics {
		held := c.Metric(g, j)
		v := r.Metrics[j]
		if m.Type == domain.MetricHyperUnique {
			if held.Null && b.sketches[cell{g, j}] == nil {
				v.S = strings.Clone(v.S) // mergeSketch keeps it
			}
			if err := b.mergeSketch(&held, cell{g, j}, v); err != nil {
				return err
			}
		} else if err := combineInto(m, &held, v); err != nil {
			return err
		}
		c.SetMetric(g, j, held)
	}
	return nil
}

// columnRows is Rows for the columnar mode: the columns sorted (as
// sortRows would sort their rows) and made rows in that order in the
// rows slice, the columns kept for the next chunk.
func (b *Buffer) columnRows(dims []domain.Column) []domain.Row {
	c, order := b.sortColumns(dims)
	rows := c.RowsIn(order, b.rows)
	putColumns(c)
	b.cols = nil
	return rows
}

// sortColumns encodes the sketches back into their cells and sorts the
// columns as sortRows would sort their rows.
func (b *Buffer) sortColumns(dims []domain.Column) (*columns.Chunk, []int32) {
	c := b.cols
	for k, s := range b.sketches {
		c.SetMetric(k.row, k.metric, s.Value())
	}
	b.types = b.types[:0]
	for d := range c.Dims {
		t := domain.TypeString // a column past dims holds only nulls
		if d < len(dims) {
			t = dims[d].Type
		}
		b.types = append(b.types, t)
	}
	return c, c.Sort(b.types, !b.rollup)
}

// Columns is Rows without the rows, for a buffer holding columns (rows
// taken by AddView): it returns the columns, sketches encoded, and the
// order Rows would put their rows in (c.RowsIn(order) are Rows' rows),
// and empties the buffer. For a buffer holding rows (Add), or none, ok
// is false and nothing changes: Rows takes those. The columns are the
// caller's, order valid with them, until it hands them back to
// RecycleColumns.
func (b *Buffer) Columns(dims []domain.Column) (c *columns.Chunk, order []int32, ok bool) {
	if b.cols == nil {
		return nil, nil, false
	}
	c, order = b.sortColumns(dims)
	b.cols = nil
	if b.table != nil {
		putTable(b.table)
		b.table = nil
	}
	if b.rows != nil {
		Recycle(b.rows) // empty: the columns held the rows
	}
	b.reset()
	return c, order, true
}

// RecycleColumns hands back columns Columns returned, once nothing reads
// them.
func RecycleColumns(c *columns.Chunk) { putColumns(c) }
