package segment

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

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

// batchRows is how many rows go to the Parquet writer per call: big enough
// to amortise the call, small enough to keep the value buffer in cache.
const batchRows = 1024

// maxDictBytes caps each column's dictionary per row group; a
// high-cardinality dimension falls back to plain pages past it.
const maxDictBytes = 8 << 20

// codec is shared so its pool of zstd encoders is reused across files.
var codec = &zstd.Codec{Level: zstd.SpeedDefault}

// Write encodes rows, in the order given, as one Parquet file on w. Every
// row must have exactly len(dims) values.
func Write(w io.Writer, dims []string, rows []domain.Row) (Info, error) {
	schema, err := newSchema(dims)
	if err != nil {
		return Info{}, err
	}
	// Check every row before writing a byte, so bad input leaves w untouched.
	info, err := summarize(len(dims), rows)
	if err != nil {
		return Info{}, err
	}
	hw := &hashWriter{w: w, h: sha256.New()}
	pw := parquet.NewWriter(hw, schema,
		parquet.Compression(codec),
		parquet.DictionaryMaxBytes(maxDictBytes),
	)
	width := len(dims) + 1
	values := make([]parquet.Value, batchRows*width)
	batch := make([]parquet.Row, batchRows)
	for start := 0; start < len(rows); start += batchRows {
		chunk := rows[start:min(start+batchRows, len(rows))]
		for i, r := range chunk {
			row := values[i*width : (i+1)*width : (i+1)*width]
			// SetColumnIndex inlines where Level does not; levels stay 0
			// because every column is required and flat.
			row[0] = parquet.Int64Value(r.Time)
			row[0].SetColumnIndex(0)
			for d, s := range r.Dims {
				row[d+1] = parquet.ByteArrayValue(stringBytes(s))
				row[d+1].SetColumnIndex(d + 1)
			}
			batch[i] = row
		}
		if _, err := pw.WriteRows(batch[:len(chunk)]); err != nil {
			return Info{}, fmt.Errorf("write rows: %w", err)
		}
	}
	if err := pw.Close(); err != nil {
		return Info{}, fmt.Errorf("close parquet writer: %w", err)
	}
	info.Bytes = hw.n
	info.Checksum = "sha256:" + hex.EncodeToString(hw.h.Sum(nil))
	return info, nil
}

// summarize checks row widths and finds the time range.
func summarize(numDims int, rows []domain.Row) (Info, error) {
	info := Info{Rows: int64(len(rows))}
	for i, r := range rows {
		if len(r.Dims) != numDims {
			return Info{}, fmt.Errorf("row %d has %d dimension values, want %d", i, len(r.Dims), numDims)
		}
		if i == 0 || r.Time < info.MinTime {
			info.MinTime = r.Time
		}
		if i == 0 || r.Time > info.MaxTime {
			info.MaxTime = r.Time
		}
	}
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
