package segment

import (
	"encoding/binary"
	"errors"
	"fmt"

	"handoff/internal/columns"
	"handoff/internal/domain"
)

// WriteColumns appends the rows of a chunk held as columns, in the given
// order (the chunk's Sort, so sorted by domain.CompareRows), writing the
// bytes Write writes for the rows c.RowsIn(order, nil) would make, without
// making them: a run's reader and the publish merge cannot tell the two
// apart.
//
// A dimension's cells are encoded once per dictionary entry (its tag,
// then its value as the column's type wants it) and copied per row, so a
// row costs its time's varint, a copy per dimension and an encoding per
// metric. order holds each row's index in c at most once.
func (w *RunWriter) WriteColumns(c *columns.Chunk, order []int32) error {
	if w.closed {
		return errors.New("write to a closed run writer")
	}
	if len(order) == 0 {
		return nil
	}
	nd, nm := len(w.schema.Dims), len(w.schema.Metrics)
	if len(c.Dims) > nd || len(c.Metrics) != nm {
		return fmt.Errorf("row %d has %d dimension and %d metric values, want at most %d and %d",
			w.info.Rows, len(c.Dims), len(c.Metrics), nd, nm)
	}
	w.encodeDicts(c)
	for _, i := range order {
		if i < 0 || int(i) >= c.Len() {
			return fmt.Errorf("row %d: index %d outside the chunk's %d rows", w.info.Rows, i, c.Len())
		}
		t := c.Time[i]
		b := binary.AppendVarint(w.raw, t-w.prev)
		for d := range c.Dims {
			e := &w.dicts[d]
			code := c.Dims[d].Codes[i]
			b = append(b, e.cells[e.at[code]:e.at[code+1]]...)
		}
		for range nd - len(c.Dims) {
			b = append(b, 0) // past the chunk's columns: null, as Row.Dim says
		}
		for m := range c.Metrics {
			col := &c.Metrics[m]
			if col.Null[i] {
				b = append(b, 0)
				continue
			}
			v := domain.Value{N: col.N[i]}
			if col.S != nil {
				v.S = col.S[i]
			}
			b = appendCell(b, v, w.types[nd+m])
		}
		w.raw, w.prev = b, t
		if w.info.Rows == 0 || t < w.info.MinTime {
			w.info.MinTime = t
		}
		if w.info.Rows == 0 || t > w.info.MaxTime {
			w.info.MaxTime = t
		}
		w.info.Rows++
		if len(w.raw) >= runBlockBytes {
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// encodedDict is one dimension's dictionary as run cells: code k's cell is
// cells[at[k]:at[k+1]], code 0's the null tag.
type encodedDict struct {
	cells []byte
	at    []uint32
}

// encodeDicts encodes every dictionary entry of c's dimensions as a cell
// of its column's type, reusing the writer's scratch.
func (w *RunWriter) encodeDicts(c *columns.Chunk) {
	if cap(w.dicts) < len(c.Dims) {
		w.dicts = make([]encodedDict, len(c.Dims))
	}
	w.dicts = w.dicts[:len(c.Dims)]
	for d := range c.Dims {
		dict, e := &c.Dims[d].Dict, &w.dicts[d]
		e.cells = append(e.cells[:0], 0)
		e.at = append(e.at[:0], 0, 1)
		for code := 1; code <= dict.Len(); code++ {
			e.cells = appendCell(e.cells, dict.Value(uint32(code)), w.types[d])
			e.at = append(e.at, uint32(len(e.cells)))
		}
	}
}
