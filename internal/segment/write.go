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

// batchRows is how many rows a Writer gathers before handing them to the
// Parquet writer: big enough to amortise the calls, small enough to keep
// the batch in cache.
const batchRows = 1024

// maxDictBytes caps each column's dictionary per row group; a
// high-cardinality dimension falls back to plain pages past it.
const maxDictBytes = 8 << 20

// Writer streams rows, in the order given, into one Parquet file.
// Readers and Merge expect them sorted by domain.CompareRows.
//
// Rows are written column-wise. A columnBatch holds up to batchRows rows
// as one slice of cells per column (__time, then the dimensions, then the
// metrics), all in one backing array that every batch reuses. A cell is a
// parquet.Value: an int64 (__time in microseconds, long columns), a float64
// (double columns) or a byte array viewing the row's string without a copy
// (string dimensions, sketches), with definition level 1, or a null with
// level 0. A full batch goes to each column's parquet.ColumnWriter in turn,
// pageChunkRows cells per call; the column writers keep the dictionaries,
// statistics and pages as the row path did. Cells are Values, not plain
// int64/float64/[]byte slices, because ColumnWriter takes only Values: the
// typed writers of parquet-go sit on column buffers it does not expose for
// optional columns.
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

	batch *columnBatch // rows not yet handed to pw
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
	return &Writer{
		schema:   schema,
		hw:       hw,
		pw:       pw,
		maxRows:  rowGroupRows,
		maxBytes: rowGroupBytes,
		batch:    newColumnBatch(schema),
	}, nil
}

// Write appends rows. A row with fewer dimension values than the schema has
// nulls for the rest; it must have one value per metric. After an error the
// file is incomplete: abandon it.
func (w *Writer) Write(rows ...domain.Row) error {
	if w.closed {
		return errors.New("write to a closed segment writer")
	}
	for i := range rows {
		if err := w.add(&rows[i]); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) add(r *domain.Row) error {
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
	w.groupBytes += w.batch.add(r)
	w.groupRows++
	if w.info.Rows == 0 || r.Time < w.info.MinTime {
		w.info.MinTime = r.Time
	}
	if w.info.Rows == 0 || r.Time > w.info.MaxTime {
		w.info.MaxTime = r.Time
	}
	w.info.Rows++
	if w.batch.n == batchRows {
		return w.flushBatch()
	}
	return nil
}

func (w *Writer) flushBatch() error {
	first := w.info.Rows - int64(w.batch.n)
	if err := w.batch.writeTo(w.pw); err != nil {
		return fmt.Errorf("rows %d to %d: %w", first, w.info.Rows-1, err)
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
