package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unsafe"

	"github.com/klauspost/compress/s2"

	"handoff/internal/domain"
)

// A run file holds sorted rows that this program reads back once and then
// deletes: a consume's staging chunk, a merge pass's temporary output.
// Parquet would pay for column encodings and dictionaries that nobody
// queries; a run is the rows, row after row, in compressed blocks.
//
//	magic   "HOFRUN1\n"
//	schema  uvarint length, then the schema's JSON (as in a segment's metadata)
//	blocks  uvarint raw length (> 0), uvarint stored length, the block (S2)
//	end     uvarint 0, then uvarint row count
//
// A row is its time as a zig-zag varint delta from the previous row's,
// then each dimension of the schema and each metric: a tag byte (0 null,
// 1 a value), then the value: a uvarint length and the bytes for strings
// and sketches, a zig-zag varint for longs, 8 little-endian bytes for
// doubles.
const runMagic = "HOFRUN1\n"

// runBlockBytes is how many raw row bytes a block holds before it is
// compressed and written: big enough for S2 to find repeats, small enough
// that a reader of many runs holds little. A block ends after the row that
// crosses it, so one wide row (a long string, up to a message's size)
// makes a larger block.
const runBlockBytes = 256 << 10

// maxRunBlockBytes bounds what a reader believes of a block's sizes, so a
// damaged length cannot ask for an absurd allocation.
const maxRunBlockBytes = 1 << 30

// RunWriter writes sorted rows into a run file.
type RunWriter struct {
	w      io.Writer
	schema domain.Schema
	types  []domain.ColumnType // dims then metrics
	raw    []byte              // the block being filled
	out    []byte              // compressed block scratch
	prev   int64               // previous row's time
	info   Info
	closed bool
	dicts  []encodedDict // WriteColumns' scratch (runcols.go)
}

// NewRunWriter starts a run with schema on w.
func NewRunWriter(w io.Writer, schema domain.Schema) (*RunWriter, error) {
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	meta, err := encodeSchema(schema)
	if err != nil {
		return nil, err
	}
	rw := &RunWriter{w: w, schema: schema, raw: make([]byte, 0, runBlockBytes+4096)}
	for _, c := range schema.Columns() {
		rw.types = append(rw.types, c.Type)
	}
	head := append([]byte(runMagic), binary.AppendUvarint(nil, uint64(len(meta)))...)
	head = append(head, meta...)
	if err := rw.write(head); err != nil {
		return nil, err
	}
	return rw, nil
}

func (w *RunWriter) write(b []byte) error {
	n, err := w.w.Write(b)
	w.info.Bytes += int64(n)
	return err
}

// Write appends rows, which must come sorted by domain.CompareRows. A row
// may have fewer dimension values than the schema (the rest are null) and
// must have one value per metric.
func (w *RunWriter) Write(rows ...domain.Row) error {
	if w.closed {
		return errors.New("write to a closed run writer")
	}
	nd, nm := len(w.schema.Dims), len(w.schema.Metrics)
	for _, r := range rows {
		if len(r.Dims) > nd || len(r.Metrics) != nm {
			return fmt.Errorf("row %d has %d dimension and %d metric values, want at most %d and %d",
				w.info.Rows, len(r.Dims), len(r.Metrics), nd, nm)
		}
		b := binary.AppendVarint(w.raw, r.Time-w.prev)
		for d := range nd {
			b = appendCell(b, r.Dim(d), w.types[d])
		}
		for m, v := range r.Metrics {
			b = appendCell(b, v, w.types[nd+m])
		}
		w.raw, w.prev = b, r.Time
		if w.info.Rows == 0 || r.Time < w.info.MinTime {
			w.info.MinTime = r.Time
		}
		if w.info.Rows == 0 || r.Time > w.info.MaxTime {
			w.info.MaxTime = r.Time
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

func appendCell(b []byte, v domain.Value, t domain.ColumnType) []byte {
	if v.Null {
		return append(b, 0)
	}
	b = append(b, 1)
	switch t {
	case domain.TypeLong:
		return binary.AppendVarint(b, v.Long())
	case domain.TypeDouble:
		return binary.LittleEndian.AppendUint64(b, v.N)
	}
	b = binary.AppendUvarint(b, uint64(len(v.S)))
	return append(b, v.S...)
}

// WriteRun writes rows, sorted, as one run on w and describes it.
func WriteRun(w io.Writer, schema domain.Schema, rows []domain.Row) (Info, error) {
	rw, err := NewRunWriter(w, schema)
	if err != nil {
		return Info{}, err
	}
	if err := rw.Write(rows...); err != nil {
		return Info{}, err
	}
	return rw.Close()
}

// flush compresses and writes the block being filled.
func (w *RunWriter) flush() error {
	if len(w.raw) == 0 {
		return nil
	}
	w.out = s2.Encode(w.out[:cap(w.out)], w.raw)
	head := binary.AppendUvarint(nil, uint64(len(w.raw)))
	head = binary.AppendUvarint(head, uint64(len(w.out)))
	if err := w.write(head); err != nil {
		return err
	}
	if err := w.write(w.out); err != nil {
		return err
	}
	w.raw = w.raw[:0]
	return nil
}

// Close writes the last block and the end, and describes the run. It does
// not close the underlying writer.
func (w *RunWriter) Close() (Info, error) {
	if w.closed {
		return Info{}, errors.New("run writer closed twice")
	}
	w.closed = true
	if err := w.flush(); err != nil {
		return Info{}, err
	}
	end := binary.AppendUvarint([]byte{0}, uint64(w.info.Rows))
	if err := w.write(end); err != nil {
		return Info{}, err
	}
	return w.info, nil
}

// runDecoder reads a run's blocks after its header.
type runDecoder struct {
	r       io.ByteReader
	src     io.Reader
	types   []domain.ColumnType
	nd      int
	stored  []byte
	prev    int64
	rows    int64 // decoded so far
	done    bool
	blockNo int
}

// readBlock returns the next block's bytes as one string, so that the
// strings of its rows share it instead of each being allocated; io.EOF
// after the last block, once the row count checks out.
func (d *runDecoder) readBlock() (string, error) {
	rawLen, err := binary.ReadUvarint(d.r)
	if err != nil {
		return "", fmt.Errorf("block %d: %w", d.blockNo, noEOF(err))
	}
	if rawLen == 0 {
		n, err := binary.ReadUvarint(d.r)
		if err != nil {
			return "", fmt.Errorf("end: %w", noEOF(err))
		}
		if int64(n) != d.rows {
			return "", fmt.Errorf("read %d rows, the end says %d", d.rows, n)
		}
		d.done = true
		return "", io.EOF
	}
	storedLen, err := binary.ReadUvarint(d.r)
	if err != nil {
		return "", fmt.Errorf("block %d: %w", d.blockNo, noEOF(err))
	}
	if rawLen > maxRunBlockBytes || storedLen > uint64(s2.MaxEncodedLen(int(rawLen))) {
		return "", fmt.Errorf("block %d: sizes %d/%d out of bounds", d.blockNo, rawLen, storedLen)
	}
	if cap(d.stored) < int(storedLen) {
		d.stored = make([]byte, storedLen)
	}
	d.stored = d.stored[:storedLen]
	if _, err := io.ReadFull(d.src, d.stored); err != nil {
		return "", fmt.Errorf("block %d: %w", d.blockNo, noEOF(err))
	}
	raw := make([]byte, rawLen)
	if raw, err = s2.Decode(raw, d.stored); err != nil || len(raw) != int(rawLen) {
		return "", fmt.Errorf("block %d: corrupt (%v)", d.blockNo, err)
	}
	d.blockNo++
	// raw is this block's own and never written again: its rows' strings
	// share it without a second copy.
	return unsafe.String(unsafe.SliceData(raw), len(raw)), nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// decodeBlock appends the rows of blk to out, laid out by place (the
// output position of each file dimension) with width output dims; absent
// output dims are null. The rows' cells come from ring when it is not nil
// (see cellRing for how long they stay valid), else from new arrays.
func (d *runDecoder) decodeBlock(blk string, place []int, width int, absent []int, out []domain.Row, ring *cellRing) ([]domain.Row, error) {
	nm := len(d.types) - d.nd
	per := width + nm
	var slab []domain.Value // without ring, cells for the next rows: one allocation per 256
	if ring != nil {
		ring.startBlock(per)
	}
	for i := 0; i < len(blk); {
		row := domain.Row{}
		delta, n := varint(blk[i:])
		if n <= 0 {
			return nil, fmt.Errorf("row %d: bad time", d.rows)
		}
		i += n
		row.Time = d.prev + delta
		var cells []domain.Value
		if ring != nil {
			cells = ring.next(per)
		} else {
			if len(slab) < per {
				slab = make([]domain.Value, 256*per)
			}
			cells, slab = slab[:per:per], slab[per:]
		}
		if width > 0 {
			row.Dims = cells[:width:width]
		}
		if nm > 0 {
			row.Metrics = cells[width:]
		}
		for c, t := range d.types {
			v, n, err := readCell(blk[i:], t)
			if err != nil {
				return nil, fmt.Errorf("row %d column %d: %w", d.rows, c, err)
			}
			i += n
			if c < d.nd {
				row.Dims[place[c]] = v
			} else {
				row.Metrics[c-d.nd] = v
			}
		}
		for _, j := range absent {
			row.Dims[j] = domain.NullValue()
		}
		d.prev = row.Time
		d.rows++
		out = append(out, row)
	}
	return out, nil
}

func readCell(b string, t domain.ColumnType) (domain.Value, int, error) {
	if len(b) == 0 {
		return domain.Value{}, 0, io.ErrUnexpectedEOF
	}
	switch b[0] {
	case 0:
		return domain.NullValue(), 1, nil
	case 1:
	default:
		return domain.Value{}, 0, fmt.Errorf("bad tag %d", b[0])
	}
	switch t {
	case domain.TypeLong:
		x, n := varint(b[1:])
		if n <= 0 {
			return domain.Value{}, 0, errors.New("bad long")
		}
		return domain.LongValue(x), 1 + n, nil
	case domain.TypeDouble:
		if len(b) < 9 {
			return domain.Value{}, 0, io.ErrUnexpectedEOF
		}
		var bits uint64
		for k := 8; k >= 1; k-- {
			bits = bits<<8 | uint64(b[k])
		}
		return domain.DoubleValue(math.Float64frombits(bits)), 9, nil
	}
	l, n := uvarint(b[1:])
	if n <= 0 || uint64(len(b)-1-n) < l {
		return domain.Value{}, 0, errors.New("bad length")
	}
	start := 1 + n
	return domain.StringValue(b[start : start+int(l)]), start + int(l), nil
}

// uvarint and varint are binary.Uvarint and binary.Varint over a string.
func uvarint(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return 0, -(i + 1)
			}
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

func varint(s string) (int64, int) {
	ux, n := uvarint(s)
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x, n
}
