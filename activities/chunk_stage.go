package activities

import (
	"io"

	"handoff/internal/columns"
	"handoff/internal/domain"
	"handoff/internal/rollup"
	"handoff/internal/segment"
)

// staged is a chunk's content taken from its buffer for its staging
// file: the columns and their sorted order when the chunk was held as
// columns (declared dimensions), written without a domain.Row per row,
// or else the sorted rows. Both write the same run bytes.
type staged struct {
	schema domain.Schema
	rows   []domain.Row
	cols   *columns.Chunk
	order  []int32
}

// stage takes the chunk's rows or columns, sorted, and empties its buffer.
func (c *chunk) stage() staged {
	s := staged{schema: c.parser.Schema()}
	var ok bool
	if s.cols, s.order, ok = c.buf.Columns(s.schema.Dims); !ok {
		s.rows = c.buf.Rows(s.schema.Dims)
	}
	return s
}

// write writes the staged content as one run on w; it may be called
// again (a retried Put) until release.
func (s *staged) write(w io.Writer) (segment.Info, error) {
	rw, err := segment.NewRunWriter(w, s.schema)
	if err != nil {
		return segment.Info{}, err
	}
	if s.cols != nil {
		err = rw.WriteColumns(s.cols, s.order)
	} else {
		err = rw.Write(s.rows...)
	}
	if err != nil {
		return segment.Info{}, err
	}
	return rw.Close()
}

// release hands the rows or columns back for the next chunks.
func (s *staged) release() {
	if s.cols != nil {
		rollup.RecycleColumns(s.cols)
	} else {
		rollup.Recycle(s.rows)
	}
	*s = staged{}
}
