package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errShort: a length or count in a fetch answer points past its end.
var errShort = errors.New("truncated")

// wire reads the big-endian integers, zigzag varints and length-prefixed
// bytes of Kafka's wire format off a byte slice, in place. The first read
// past the end (or of a negative or oversized length) sets err and every
// later read returns zero, so a parser checks err once, where it matters,
// and no input can make it panic.
type wire struct {
	b   []byte
	off int
	err error
}

func (w *wire) fail(what string) {
	if w.err == nil {
		w.err = fmt.Errorf("%s at byte %d of %d: %w", what, w.off, len(w.b), errShort)
	}
	w.off = len(w.b)
}

func (w *wire) left() int { return len(w.b) - w.off }

func (w *wire) take(n int, what string) []byte {
	if w.err != nil || n < 0 || n > w.left() {
		w.fail(what)
		return nil
	}
	s := w.b[w.off : w.off+n : w.off+n]
	w.off += n
	return s
}

func (w *wire) int8() int8 {
	if b := w.take(1, "int8"); b != nil {
		return int8(b[0])
	}
	return 0
}

func (w *wire) int16() int16 {
	if b := w.take(2, "int16"); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (w *wire) int32() int32 {
	if b := w.take(4, "int32"); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (w *wire) int64() int64 {
	if b := w.take(8, "int64"); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// varint reads a zigzag-encoded varint (records, their fields and headers).
func (w *wire) varint() int64 {
	if w.err != nil {
		return 0
	}
	v, n := binary.Varint(w.b[w.off:])
	if n <= 0 {
		w.fail("varint")
		return 0
	}
	w.off += n
	return v
}

// varbytes reads varint-length bytes; a length of -1 is nil.
func (w *wire) varbytes(what string) []byte {
	n := w.varint()
	if n == -1 {
		return nil
	}
	if n < -1 || n > int64(w.left()) {
		w.fail(what)
		return nil
	}
	return w.take(int(n), what)
}

// string16 reads an int16-length string (topic names).
func (w *wire) string16() string {
	n := w.int16()
	return string(w.take(int(n), "string"))
}

// array reads an int32 count, -1 (null) as 0; a count that cannot fit in
// what is left, each element being at least min bytes, is an error.
func (w *wire) array(min int) int {
	n := w.int32()
	if n == -1 {
		return 0
	}
	if n < 0 || int64(n)*int64(min) > int64(w.left()) {
		w.fail("array length")
		return 0
	}
	return int(n)
}
