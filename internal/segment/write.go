package segment

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"handoff/internal/domain"
)

// Info describes a written file.
type Info struct {
	Rows     int64
	Bytes    int64  // size of the file
	Checksum string // "sha256:<hex>" of the file bytes
	MinTime  int64  // Unix milliseconds; 0 when Rows is 0
	MaxTime  int64  // Unix milliseconds; 0 when Rows is 0
}

// Row groups are cut at whichever bound comes first. A writer holds its
// current row group's pages in memory until the group is complete (a
// column chunk must be contiguous in the file), so the bounds cap the
// memory of every writer, including each pass of a Merge; readers decode
// a page per column at a time.
//
//   - rowGroupRows: 128Ki rows is close to DuckDB's own 122,880-row groups,
//     the unit readers parallelise over and skip by statistics, and keeps
//     dictionaries of repetitive dimensions effective (a dictionary is per
//     row group).
//   - rowGroupBytes: 64 MiB of raw values stops wide rows (sketches grow to
//     16 KiB, long strings) from making a 128Ki-row group gigabytes.
const (
	rowGroupRows  = 128 << 10
	rowGroupBytes = 64 << 20
)

// batchRows is how many rows go to the Parquet writer per call: big enough
// to amortise the call, small enough to keep the value buffer in cache.
const batchRows = 1024

// maxDictBytes caps each column's dictionary per row group; a
// high-cardinality dimension falls back to plain pages past it.
const maxDictBytes = 8 << 20

// Writer streams rows, in the order given, into one Parquet file.
// Readers and Merge expect them sorted by domain.CompareRows.
type Writer struct {
	schema domain.Schema
	hw     *hashWriter
	pw     *parquet.Writer
	info   Info
	closed bool

	// Row group bounds; tests lower them.
	maxRows, maxBytes int64
	// Rows and raw bytes in the current row group.
	groupRows, groupBytes int64

	values []parquet.Value // backing array of batch
	batch  []parquet.Row   // rows not yet handed to pw
}

// NewWriter starts a file with schema on w. Nothing is written before the
// first row group is flushed or the Writer is closed.
func NewWriter(w io.Writer, schema domain.Schema) (*Writer, error) {
	return NewWriterWithFieldIDs(w, schema, nil)
}

// NewWriterWithFieldIDs is NewWriter for a file whose columns carry the
// Parquet field ids of an Iceberg table.
func NewWriterWithFieldIDs(w io.Writer, schema domain.Schema, ids FieldIDs) (*Writer, error) {
	return newWriter(w, schema, ids, codec)
}

// newWriter is NewWriterWithFieldIDs compressing pages with c.
func newWriter(w io.Writer, schema domain.Schema, ids FieldIDs, c compress.Codec) (*Writer, error) {
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	meta, err := encodeSchema(schema)
	if err != nil {
		return nil, err
	}
	hw := &hashWriter{w: w, h: sha256.New()}
	pw := parquet.NewWriter(hw, newParquetSchema(schema, ids),
		parquet.Compression(c),
		parquet.DictionaryMaxBytes(maxDictBytes),
		parquet.KeyValueMetadata(SchemaKey, meta),
	)
	width := len(schema.Dims) + len(schema.Metrics) + 1
	return &Writer{
		schema:   schema,
		hw:       hw,
		pw:       pw,
		maxRows:  rowGroupRows,
		maxBytes: rowGroupBytes,
		values:   make([]parquet.Value, batchRows*width),
		batch:    make([]parquet.Row, 0, batchRows),
	}, nil
}

// Write appends rows. A row with fewer dimension values than the schema has
// nulls for the rest; it must have one value per metric. After an error the
// file is incomplete: abandon it.
func (w *Writer) Write(rows ...domain.Row) error {
	if w.closed {
		return errors.New("write to a closed segment writer")
	}
	for _, r := range rows {
		if err := w.add(r); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) add(r domain.Row) error {
	nd, nm := len(w.schema.Dims), len(w.schema.Metrics)
	if len(r.Dims) > nd || len(r.Metrics) != nm {
		return fmt.Errorf("row %d has %d dimension and %d metric values, want at most %d and %d",
			w.info.Rows, len(r.Dims), len(r.Metrics), nd, nm)
	}
	if w.groupRows > 0 && (w.groupRows >= w.maxRows || w.groupBytes >= w.maxBytes) {
		if err := w.flushGroup(); err != nil {
			return err
		}
	}
	width := nd + nm + 1
	i := len(w.batch)
	row := w.values[i*width : (i+1)*width : (i+1)*width]
	// SetColumnIndex and SetDefinitionLevel inline where Level does not;
	// every column is flat, so repetition levels stay 0.
	row[0] = parquet.Int64Value(r.Time * 1000) // microseconds
	row[0].SetColumnIndex(0)
	size := int64(8)
	for d, c := range w.schema.Dims {
		size += setValue(&row[1+d], r.Dim(d), c.Type, 1+d)
	}
	for m, spec := range w.schema.Metrics {
		size += setValue(&row[1+nd+m], r.Metrics[m], spec.ColumnType(), 1+nd+m)
	}
	w.batch = append(w.batch, row)
	w.groupRows++
	w.groupBytes += size
	if w.info.Rows == 0 || r.Time < w.info.MinTime {
		w.info.MinTime = r.Time
	}
	if w.info.Rows == 0 || r.Time > w.info.MaxTime {
		w.info.MaxTime = r.Time
	}
	w.info.Rows++
	if len(w.batch) == batchRows {
		return w.flushBatch()
	}
	return nil
}

// setValue encodes v as column col's cell and returns its raw size.
func setValue(dst *parquet.Value, v domain.Value, t domain.ColumnType, col int) int64 {
	if v.Null {
		*dst = parquet.NullValue()
		dst.SetColumnIndex(col)
		return 1
	}
	var size int64 = 8
	switch t {
	case domain.TypeLong:
		*dst = parquet.Int64Value(v.Long())
	case domain.TypeDouble:
		*dst = parquet.DoubleValue(v.Double())
	default:
		*dst = parquet.ByteArrayValue(stringBytes(v.S))
		size = int64(len(v.S)) + 4
	}
	dst.SetDefinitionLevel(1)
	dst.SetColumnIndex(col)
	return size
}

func (w *Writer) flushBatch() error {
	if len(w.batch) == 0 {
		return nil
	}
	_, err := w.pw.WriteRows(w.batch)
	w.batch = w.batch[:0]
	if err != nil {
		return fmt.Errorf("write rows: %w", err)
	}
	return nil
}

func (w *Writer) flushGroup() error {
	if err := w.flushBatch(); err != nil {
		return err
	}
	if err := w.pw.Flush(); err != nil {
		return fmt.Errorf("flush row group: %w", err)
	}
	w.groupRows, w.groupBytes = 0, 0
	return nil
}

// Close writes the last row group and the footer. It does not close the
// underlying io.Writer.
func (w *Writer) Close() (Info, error) {
	if w.closed {
		return Info{}, errors.New("segment writer closed twice")
	}
	w.closed = true
	if err := w.flushBatch(); err != nil {
		return Info{}, err
	}
	if err := w.pw.Close(); err != nil {
		return Info{}, fmt.Errorf("close parquet writer: %w", err)
	}
	info := w.info
	info.Bytes = w.hw.n
	info.Checksum = "sha256:" + hex.EncodeToString(w.hw.h.Sum(nil))
	return info, nil
}

// stringBytes views s as bytes without copying. parquet-go copies values
// into its column buffers and never writes through the slice, and this
// saves an allocation per value on the hot path.
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// hashWriter counts and hashes what reaches the underlying writer.
type hashWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (hw *hashWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	hw.n += int64(n)
	return n, err
}
