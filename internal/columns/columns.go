// Package columns holds the rows of one consume chunk column by column,
// as a vectorised engine holds a batch: the rollup buffer appends rows to
// it and combines into them, and the chunk is staged from the columns
// (segment.RunWriter.WriteColumns) without a domain.Row per row.
//
// Layout of a Chunk of n rows, d dimensions and m metrics:
//
//	Time            []int64      n times (Unix ms, truncated)
//	Dims[0..d)      Dim          n dictionary codes each; 0 is null,
//	                             c > 0 is the column's dictionary entry c-1
//	Metrics[0..m)   Metric       n cells each: N (a long, or a double's
//	                             bits) and Null; S only for metrics whose
//	                             cells are bytes (hyperUnique sketches)
//
// A dimension's dictionary (dict.go) holds each distinct non-null value
// of the column once, in the order values first came, so rows hold no
// strings and two rows' dimensions are equal exactly when their codes
// are: the rollup key is the time and d codes. The slices are reused from
// chunk to chunk (Reset), so a steady stream of chunks allocates only the
// dictionaries' new strings.
package columns

import (
	"strings"

	"handoff/internal/domain"
)

// Chunk is rows held column by column.
type Chunk struct {
	Time    []int64
	Dims    []Dim
	Metrics []Metric
	// MayGoPlain lets a dimension whose values barely repeat stop
	// deduplicating them (Codes): its codes then only index its values,
	// and do not tell equal values (rollup keys need them to). Reset
	// clears it.
	MayGoPlain bool
	order      []int32  // Sort's result
	keys       []uint64 // Sort's packed keys (sortPacked)
	shifts     []uint8  // and each dimension's width in them
}

// Dim is one dimension column: a code per row and the dictionary the
// codes index.
type Dim struct {
	Codes []uint32
	Dict  Dict
	// Sort's scratch: the codes in order of their values, and each
	// code's rank in that order (nil: compare the values), in rankBuf.
	byValue, ranks, rankBuf []uint32
}

// Metric is one metric column.
type Metric struct {
	N    []uint64
	Null []bool
	S    []string // bytes-valued metrics only; nil otherwise
}

// New returns an empty chunk of dims dimension and len(metrics) metric
// columns.
func New(dims int, metrics []domain.MetricSpec) *Chunk {
	c := &Chunk{}
	c.Reshape(dims, metrics)
	return c
}

// Reshape empties the chunk and gives it dims dimension and len(metrics)
// metric columns, keeping what memory it can: a metric whose column type
// is a sketch keeps bytes (S).
func (c *Chunk) Reshape(dims int, metrics []domain.MetricSpec) {
	c.Reset() // before shrinking: a column hidden past the end stays empty
	c.Dims = resize(c.Dims, dims)
	c.Metrics = resize(c.Metrics, len(metrics))
	for i, m := range metrics {
		col := &c.Metrics[i]
		switch sketch := m.ColumnType() == domain.TypeSketch; {
		case sketch && col.S == nil:
			col.S = []string{}
		case !sketch:
			col.S = nil
		}
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		s = append(s[:cap(s)], make([]T, n-cap(s))...)
	}
	return s[:n]
}

// Len is the number of rows.
func (c *Chunk) Len() int { return len(c.Time) }

// Codes looks up r's dimensions in their dictionaries, adding the new
// values (their strings copied: r's may be views into memory that changes
// after the call), and returns their codes in dst[:len(Dims)]: a
// dimension past r's end is null. r has at most len(Dims) dimensions.
func (c *Chunk) Codes(r *domain.Row, dst []uint32) []uint32 {
	if c.MayGoPlain && c.Len() == plainCheckRows {
		c.goPlain()
	}
	dst = dst[:0]
	for d := range c.Dims {
		var code uint32
		if d < len(r.Dims) {
			code = c.Dims[d].Dict.Code(&r.Dims[d])
		}
		dst = append(dst, code)
	}
	return dst
}

// plainCheckRows is when a chunk that may checks whether a dimension's
// values repeat: if more than half the rows so far had a value of their
// own (a unique id), a lookup per row costs a cache miss or two in a
// table that only grows, for nothing.
const plainCheckRows = 4096

func (c *Chunk) goPlain() {
	for d := range c.Dims {
		if dict := &c.Dims[d].Dict; 2*dict.Len() > plainCheckRows {
			dict.goPlain()
		}
	}
}

// Append adds a row of time t, dimension codes (from Codes) and metric
// values ms (exactly len(Metrics); a bytes-valued metric's string is
// copied).
func (c *Chunk) Append(t int64, codes []uint32, ms []domain.Value) {
	c.Time = append(c.Time, t)
	for d, code := range codes {
		c.Dims[d].Codes = append(c.Dims[d].Codes, code)
	}
	for i := range c.Metrics {
		col, v := &c.Metrics[i], &ms[i]
		col.N = append(col.N, v.N)
		col.Null = append(col.Null, v.Null)
		if col.S != nil {
			col.S = append(col.S, strings.Clone(v.S))
		}
	}
}

// Metric returns the cell of metric m in row i.
func (c *Chunk) Metric(i, m int) domain.Value {
	col := &c.Metrics[m]
	v := domain.Value{N: col.N[i], Null: col.Null[i]}
	if col.S != nil {
		v.S = col.S[i]
	}
	return v
}

// SetMetric sets the cell of metric m in row i; v's string must be owned.
func (c *Chunk) SetMetric(i, m int, v domain.Value) {
	col := &c.Metrics[m]
	col.N[i], col.Null[i] = v.N, v.Null
	if col.S != nil {
		col.S[i] = v.S
	}
}

// Reset empties the chunk, keeping its slices' memory.
func (c *Chunk) Reset() {
	c.Time, c.MayGoPlain = c.Time[:0], false
	for d := range c.Dims {
		c.Dims[d].Codes = c.Dims[d].Codes[:0]
		c.Dims[d].Dict.Reset()
	}
	for i := range c.Metrics {
		col := &c.Metrics[i]
		col.N, col.Null = col.N[:0], col.Null[:0]
		if col.S != nil {
			clear(col.S)
			col.S = col.S[:0]
		}
	}
}
