package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"time"

	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/protocol"
)

// recordBatch is the header of one v2 record batch (Kafka's format since
// 0.11) and its records, uncompressed, still to be read.
type recordBatch struct {
	baseOffset, lastOffset int64
	attributes             int16
	producer               int64
	baseTime, maxTime      int64
	count                  int32
	records                []byte
}

// Batch attribute bits.
const (
	attrCodec         = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

func (b *recordBatch) transactional() bool { return b.attributes&attrTransactional != 0 }
func (b *recordBatch) control() bool       { return b.attributes&attrControl != 0 }

// batchHeader is the size of a v2 batch from its first byte to its
// records; magicAt is where every format keeps its magic byte.
const (
	batchHeader = 61
	magicAt     = 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batches walks the record batches of one partition's answer.
type batches struct {
	w   wire
	dec *[]byte // decompressed records, for the fetch's life
}

// next returns the next whole batch; ok is false at the end of the
// answer, whose last batch the broker may have cut short. A batch in the
// formats before 0.11 (magic 0 and 1) comes back as legacy, whole, for
// kafka-go to read.
func (bs *batches) next() (b recordBatch, legacy []byte, ok bool, err error) {
	w := &bs.w
	if w.left() < magicAt+1 {
		return b, nil, false, nil
	}
	start := w.off
	size := int(int32(binary.BigEndian.Uint32(w.b[start+8:])))
	if size < magicAt+1-12 {
		return b, nil, false, fmt.Errorf("batch at byte %d has length %d", start, size)
	}
	if size > w.left()-12 {
		return b, nil, false, nil // cut short by the fetch's max bytes
	}
	whole := w.take(12+size, "batch")
	if magic := whole[magicAt]; magic != 2 {
		if magic > 2 {
			return b, nil, false, fmt.Errorf("batch at offset %d has magic %d: this reader knows 0, 1 and 2", int64(binary.BigEndian.Uint64(whole)), magic)
		}
		return b, whole, true, nil
	}
	if size < batchHeader-12 {
		return b, nil, false, fmt.Errorf("batch at byte %d is %d bytes, shorter than its header", start, size)
	}
	hw := wire{b: whole}
	b.baseOffset = hw.int64()
	hw.int32() // length
	hw.int32() // partition leader epoch
	hw.int8()  // magic
	crc := uint32(hw.int32())
	if got := crc32.Checksum(whole[21:], castagnoli); got != crc {
		return b, nil, false, fmt.Errorf("batch at offset %d fails its checksum (crc32c %08x, stored %08x): the log or the transfer is corrupt", b.baseOffset, got, crc)
	}
	b.attributes = hw.int16()
	b.lastOffset = b.baseOffset + int64(hw.int32())
	b.baseTime = hw.int64()
	b.maxTime = hw.int64()
	b.producer = hw.int64()
	hw.int16() // producer epoch
	hw.int32() // base sequence
	b.count = hw.int32()
	b.records = whole[batchHeader:]
	if codec := compress.Compression(b.attributes & attrCodec); codec != compress.None {
		if b.records, err = bs.decompress(codec, b.records); err != nil {
			return b, nil, false, fmt.Errorf("batch at offset %d (%s): %w", b.baseOffset, codec, err)
		}
	}
	return b, nil, true, nil
}

// decompress appends the uncompressed records to the fetch's buffer and
// returns them. When the buffer grows it moves, and the records already
// read keep pointing into the old one, which lives as long as they do.
func (bs *batches) decompress(codec compress.Compression, data []byte) ([]byte, error) {
	c := codec.Codec()
	if c == nil {
		return nil, fmt.Errorf("unknown compression codec %d", codec)
	}
	r := c.NewReader(bytes.NewReader(data))
	defer r.Close()
	buf := *bs.dec
	start := len(buf)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(4*len(data), 64<<10))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			*bs.dec = buf
			return nil, err
		}
	}
	*bs.dec = buf
	return buf[start:len(buf):len(buf)], nil
}

// batchRecord is one record of a v2 batch, its key and value slices of
// the answer (or of the decompressed records).
type batchRecord struct {
	offset  int64
	time    time.Time
	key     []byte
	value   []byte
	headers map[string]string
}

// each calls fn with each record of b, in order, until fn says stop.
func (b *recordBatch) each(fn func(r *batchRecord) (stop bool)) error {
	w := wire{b: b.records}
	var r batchRecord
	for i := int32(0); i < b.count; i++ {
		length := w.varint()
		if w.err != nil || length < 0 || length > int64(w.left()) {
			return fmt.Errorf("record %d of the batch at offset %d: bad length %d", i, b.baseOffset, length)
		}
		rw := wire{b: w.take(int(length), "record")}
		rw.int8() // attributes
		ts := b.baseTime + rw.varint()
		if b.attributes&attrLogAppendTime != 0 {
			ts = b.maxTime
		}
		r = batchRecord{offset: b.baseOffset + rw.varint(), time: time.UnixMilli(ts)}
		r.key = rw.varbytes("key")
		r.value = rw.varbytes("value")
		if n := rw.varint(); n > 0 {
			if n > int64(rw.left())/2 {
				rw.fail("header count")
			} else {
				r.headers = make(map[string]string, n)
				for range n {
					k := rw.varbytes("header key")
					r.headers[string(k)] = string(rw.varbytes("header value"))
				}
			}
		}
		if rw.err != nil {
			return fmt.Errorf("record %d of the batch at offset %d: %w", i, b.baseOffset, rw.err)
		}
		if fn(&r) {
			return nil
		}
	}
	return nil
}

// legacyRecords reads a message set entry in the formats before Kafka 0.11
// (magic 0 or 1, perhaps compressed) with kafka-go, copying each record.
func legacyRecords(entry []byte, fn func(r *batchRecord) (stop bool)) error {
	framed := make([]byte, 4+len(entry))
	binary.BigEndian.PutUint32(framed, uint32(len(entry)))
	copy(framed[4:], entry)
	var rs protocol.RecordSet
	if _, err := rs.ReadFrom(bytes.NewBuffer(framed)); err != nil {
		return fmt.Errorf("read a message set of magic %d: %w", entry[magicAt], err)
	}
	if rs.Records == nil {
		return nil
	}
	for {
		rec, err := rs.Records.ReadRecord()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		r := batchRecord{offset: rec.Offset, time: rec.Time}
		if r.key, err = readBytes(rec.Key); err == nil {
			r.value, err = readBytes(rec.Value)
		}
		if err != nil {
			return err
		}
		if fn(&r) {
			return nil
		}
	}
}

func readBytes(b protocol.Bytes) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	defer b.Close()
	out := make([]byte, b.Len())
	_, err := io.ReadFull(b, out)
	return out, err
}
