package segment

import (
	"fmt"

	"github.com/parquet-go/parquet-go"

	"handoff/internal/domain"
)

// columnBatch holds up to batchRows rows column by column; see Writer for
// the layout and why its cells are parquet.Values.
type columnBatch struct {
	dims  int               // dimension columns, after __time
	kinds []cellKind        // per column, __time first
	names []string          // per column, __time first, for errors
	cols  [][]parquet.Value // cols[c][:n] are column c's cells
	n     int               // rows held
}

// cellKind is how a column's domain values become Parquet cells.
type cellKind uint8

const (
	cellLong cellKind = iota
	cellDouble
	cellBytes
)

func kindOf(t domain.ColumnType) cellKind {
	switch t {
	case domain.TypeLong:
		return cellLong
	case domain.TypeDouble:
		return cellDouble
	}
	return cellBytes
}

func newColumnBatch(schema domain.Schema) *columnBatch {
	width := len(schema.Dims) + len(schema.Metrics) + 1
	b := &columnBatch{
		dims:  len(schema.Dims),
		kinds: []cellKind{cellLong},
		names: []string{TimeColumn},
		cols:  make([][]parquet.Value, width),
	}
	for _, c := range schema.Columns() {
		b.kinds = append(b.kinds, kindOf(c.Type))
		b.names = append(b.names, c.Name)
	}
	cells := make([]parquet.Value, width*batchRows)
	for c := range b.cols {
		b.cols[c] = cells[c*batchRows : (c+1)*batchRows : (c+1)*batchRows]
	}
	return b
}

// add appends r, which has at most one value per dimension and exactly one
// per metric, and returns its raw size: 8 bytes per number, 4 plus the
// length per byte array, 1 per null.
func (b *columnBatch) add(r *domain.Row) int64 {
	i := b.n
	b.n++
	// SetColumnIndex and SetDefinitionLevel inline where Level does not;
	// every column is flat, so repetition levels stay 0.
	t := &b.cols[0][i]
	*t = parquet.Int64Value(r.Time * 1000) // microseconds
	t.SetColumnIndex(0)
	size := int64(8)
	nd := b.dims
	for d := range r.Dims {
		size += b.set(1+d, i, &r.Dims[d])
	}
	for d := len(r.Dims); d < nd; d++ {
		size += b.setNull(1+d, i)
	}
	for m := range r.Metrics {
		size += b.set(1+nd+m, i, &r.Metrics[m])
	}
	return size
}

// set stores v as column c's cell of row i.
func (b *columnBatch) set(c, i int, v *domain.Value) int64 {
	if v.Null {
		return b.setNull(c, i)
	}
	dst := &b.cols[c][i]
	size := int64(8)
	switch b.kinds[c] {
	case cellLong:
		*dst = parquet.Int64Value(v.Long())
	case cellDouble:
		*dst = parquet.DoubleValue(v.Double())
	default:
		*dst = parquet.ByteArrayValue(stringBytes(v.S))
		size = int64(len(v.S)) + 4
	}
	dst.SetDefinitionLevel(1)
	dst.SetColumnIndex(c)
	return size
}

func (b *columnBatch) setNull(c, i int) int64 {
	dst := &b.cols[c][i]
	*dst = parquet.NullValue()
	dst.SetColumnIndex(c)
	return 1
}

// pageChunkRows is how many rows of a column go to its ColumnWriter per
// call. The writer cuts a page only between calls, so this bounds how far
// a page overshoots its buffer (64 sketches of 16 KiB are 1 MiB), and it is
// the chunk parquet-go's own row path uses, which keeps pages, and so the
// files, identical to writing the same batches as rows.
const pageChunkRows = 64

// writeTo hands the batch to pw column by column and empties it.
func (b *columnBatch) writeTo(pw *parquet.Writer) error {
	n := b.n
	b.n = 0
	if n == 0 {
		return nil
	}
	writers := pw.ColumnWriters()
	if len(writers) != len(b.cols) {
		return fmt.Errorf("parquet writer has %d columns, the batch %d", len(writers), len(b.cols))
	}
	for c, cw := range writers {
		col := b.cols[c][:n]
		for len(col) > 0 {
			k := min(len(col), pageChunkRows)
			if _, err := cw.WriteRowValues(col[:k]); err != nil {
				return fmt.Errorf("write column %q: %w", b.names[c], err)
			}
			col = col[k:]
		}
	}
	return nil
}
