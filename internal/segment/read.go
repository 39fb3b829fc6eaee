package segment

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/parquet-go/parquet-go"

	"handoff/internal/domain"
)

// Reader streams a file's rows back, in file order, a batch at a time.
type Reader struct {
	path    string
	f       *os.File
	schema  domain.Schema
	pr      *parquet.Reader
	numRows int64
	read    int64

	// Each row comes out with outDims dimensions: file dimension i lands at
	// dimPos[i], and the positions in absent (dimensions of a wider schema
	// the file lacks) are null.
	dimPos  []int
	outDims int
	absent  []int

	timeScale int64 // divides a __time value into Unix milliseconds

	types  []domain.ColumnType // file columns after __time
	intern []interner          // one per file column after __time

	batch []parquet.Row
	run   *runDecoder  // set instead of pr for a run file
	ring  *cellRing    // with run, reuses the rows' cells (the merge's cursors set it)
	rows  []domain.Row // decoded batch; rows[next:] are still to return
	next  int
	eof   bool
}

// Open opens a file written by Writer and reads its footer.
func Open(path string) (*Reader, error) {
	r, err := open(path, nil)
	if err != nil {
		return nil, fmt.Errorf("open segment %s: %w", path, err)
	}
	return r, nil
}

// open opens path; with into, its rows come out in into's layout: into's
// dimensions are the file's plus perhaps others (null here), and its
// metrics are the file's.
func open(path string, into *domain.Schema) (_ *Reader, err error) {
	if run, err := isRun(path); err != nil {
		return nil, err
	} else if run {
		return openRun(path, into)
	}
	pf, f, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
		}
	}()
	schema, err := fileSchemaOf(pf)
	if err != nil {
		return nil, err
	}
	if err := checkLayout(pf.Schema(), schema); err != nil {
		return nil, err
	}
	r := &Reader{
		path:    path,
		f:       f,
		schema:  schema,
		numRows: pf.NumRows(),
		batch:   make([]parquet.Row, batchRows),
		rows:    make([]domain.Row, 0, batchRows),
	}
	if r.dimPos, r.absent, err = mapDims(schema, into); err != nil {
		return nil, err
	}
	r.outDims = len(r.dimPos) + len(r.absent)
	for _, c := range schema.Columns() {
		r.types = append(r.types, c.Type)
	}
	r.intern = make([]interner, len(r.types))
	for i := range schema.Dims {
		if schema.Dims[i].Type == domain.TypeString {
			r.intern[i].m = make(map[string]string)
		}
	}
	r.timeScale = timeScale(pf.Schema())
	r.pr = parquet.NewReader(pf)
	return r, nil
}

// openParquet opens path and reads its footer (not its page index or bloom
// filters, which a full scan does not use).
func openParquet(path string) (*parquet.File, *os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return pf, f, nil
}

func fileSchemaOf(pf *parquet.File) (domain.Schema, error) {
	js, ok := pf.Lookup(SchemaKey)
	if !ok {
		return domain.Schema{}, fmt.Errorf("no %s metadata: not a segment file", SchemaKey)
	}
	return decodeSchema(js)
}

// mapDims places the file's dimensions in into's; nil into keeps them.
func mapDims(file domain.Schema, into *domain.Schema) (pos, absent []int, err error) {
	pos = make([]int, len(file.Dims))
	if into == nil {
		for i := range pos {
			pos[i] = i
		}
		return pos, nil, nil
	}
	if !slices.Equal(file.Metrics, into.Metrics) {
		return nil, nil, fmt.Errorf("metrics %v differ from %v", file.Metrics, into.Metrics)
	}
	at := make(map[string]int, len(into.Dims))
	for j, d := range into.Dims {
		at[d.Name] = j
	}
	filled := make([]bool, len(into.Dims))
	for i, d := range file.Dims {
		j, ok := at[d.Name]
		if !ok {
			return nil, nil, fmt.Errorf("dimension %q is not in the target schema", d.Name)
		}
		if into.Dims[j].Type != d.Type {
			return nil, nil, fmt.Errorf("dimension %q is %s here, %s in the target schema", d.Name, d.Type, into.Dims[j].Type)
		}
		pos[i], filled[j] = j, true
	}
	for j, ok := range filled {
		if !ok {
			absent = append(absent, j)
		}
	}
	return pos, absent, nil
}

// Schema is the file's schema, as written.
func (r *Reader) Schema() domain.Schema { return r.schema }

// Next returns the next row, or false past the last one. A returned row
// stays valid after later calls.
func (r *Reader) Next() (domain.Row, bool, error) {
	if r.next == len(r.rows) {
		if err := r.fill(); err != nil {
			return domain.Row{}, false, fmt.Errorf("read segment %s: %w", r.path, err)
		}
		if len(r.rows) == 0 {
			return domain.Row{}, false, nil
		}
	}
	row := r.rows[r.next]
	r.next++
	return row, true, nil
}

// fill decodes the next batch into r.rows, leaving it empty at the end.
func (r *Reader) fill() error {
	r.rows, r.next = r.rows[:0], 0
	if r.run != nil {
		return r.fillRun()
	}
	for len(r.rows) == 0 && !r.eof {
		n, err := r.pr.ReadRows(r.batch)
		if n > 0 {
			if err := r.decode(r.batch[:n]); err != nil {
				return err
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			r.eof = true
			if r.read != r.numRows {
				return fmt.Errorf("read %d rows, footer says %d", r.read, r.numRows)
			}
		case err != nil:
			return fmt.Errorf("read rows: %w", err)
		case n == 0:
			return fmt.Errorf("reader stalled at row %d", r.read)
		}
	}
	return nil
}

// decode converts a batch. Its rows share one fresh backing array, so
// allocations are per batch, and rows returned earlier stay untouched.
func (r *Reader) decode(batch []parquet.Row) error {
	nfd, nm := len(r.schema.Dims), len(r.schema.Metrics)
	width := r.outDims + nm
	vals := make([]domain.Value, len(batch)*width)
	for b, pr := range batch {
		if len(pr) != len(r.types)+1 {
			return fmt.Errorf("row %d has %d values, want %d", r.read, len(pr), len(r.types)+1)
		}
		cells := vals[b*width : (b+1)*width : (b+1)*width]
		row := domain.Row{Time: pr[0].Int64() / r.timeScale}
		if r.outDims > 0 {
			row.Dims = cells[:r.outDims:r.outDims]
		}
		if nm > 0 {
			row.Metrics = cells[r.outDims:]
		}
		for c, v := range pr[1:] {
			var out *domain.Value
			if c < nfd {
				out = &row.Dims[r.dimPos[c]]
			} else {
				out = &row.Metrics[c-nfd]
			}
			*out = r.value(c, v)
		}
		for _, j := range r.absent {
			row.Dims[j] = domain.NullValue()
		}
		r.rows = append(r.rows, row)
		r.read++
	}
	return nil
}

func (r *Reader) value(c int, v parquet.Value) domain.Value {
	if v.IsNull() {
		return domain.NullValue()
	}
	switch r.types[c] {
	case domain.TypeLong:
		return domain.LongValue(v.Int64())
	case domain.TypeDouble:
		return domain.DoubleValue(v.Double())
	}
	return domain.StringValue(r.intern[c].get(v.ByteArray()))
}

// Close releases the file.
func (r *Reader) Close() error {
	if r.pr == nil { // a run
		return r.f.Close()
	}
	return errors.Join(r.pr.Close(), r.f.Close())
}

// ReadFile reads a whole file written by Writer: its schema and its rows,
// in file order. Each row has one value per dimension of the schema.
func ReadFile(path string) (domain.Schema, []domain.Row, error) {
	r, err := Open(path)
	if err != nil {
		return domain.Schema{}, nil, err
	}
	rows := make([]domain.Row, 0, r.numRows)
	for {
		row, ok, err := r.Next()
		if err != nil {
			_ = r.Close()
			return domain.Schema{}, nil, err
		}
		if !ok {
			break
		}
		rows = append(rows, row)
	}
	if err := r.Close(); err != nil {
		return domain.Schema{}, nil, fmt.Errorf("close segment %s: %w", path, err)
	}
	return r.schema, rows, nil
}

// interner shares the strings of a repetitive column: sorted dimensions
// repeat the previous value, and low-cardinality ones a few values, so
// most cells cost a comparison or a lookup instead of an allocation.
type interner struct {
	last string
	m    map[string]string // nil: no sharing (sketches)
}

// The table stops growing at internMax entries of internMaxLen bytes at
// most, so a high-cardinality column costs at most ~256 KiB.
const (
	internMax    = 1024
	internMaxLen = 256
)

func (in *interner) get(b []byte) string {
	if in.m == nil {
		return string(b)
	}
	if string(b) == in.last {
		return in.last
	}
	if s, ok := in.m[string(b)]; ok {
		in.last = s
		return s
	}
	s := string(b)
	if len(in.m) < internMax && len(s) <= internMaxLen {
		in.m[s] = s
	}
	in.last = s
	return s
}
