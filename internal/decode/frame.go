package decode

import (
	"encoding/binary"
)

// The Confluent wire format: a zero magic byte, the schema id as a 4-byte
// big-endian integer, then (Protobuf only) the message indexes, then the
// encoded value.
const (
	magicByte   = 0
	frameHeader = 5
	// maxIndexes bounds the Protobuf message-index list: message nesting
	// deeper than this is no schema anyone writes.
	maxIndexes = 64
)

// unframe splits a framed message into its schema id and payload.
func unframe(msg []byte) (int, []byte, *Error) {
	switch {
	case len(msg) == 0:
		return 0, nil, errorf(0, "empty message: want the schema-registry wire format (magic byte 0, 4-byte schema id, payload)")
	case msg[0] != magicByte:
		return 0, nil, errorf(0, "wrong magic byte 0x%02x: want 0x00 of the schema-registry wire format (is the topic written by a registry serializer?)", msg[0])
	case len(msg) < frameHeader:
		return 0, nil, errorf(0, "truncated frame: %d bytes, want at least 5 (magic byte and 4-byte schema id)", len(msg))
	}
	id := binary.BigEndian.Uint32(msg[1:frameHeader])
	if id > 1<<31-1 {
		return 0, nil, errorf(0, "schema id %d out of range", id)
	}
	return int(id), msg[frameHeader:], nil
}

// messageIndexes reads the Protobuf message-index list after the schema
// id: zigzag varints, a count then that many indexes; a count of 0 is the
// first message ([0]).
func messageIndexes(id int, b []byte) ([]int, []byte, *Error) {
	n, w := binary.Varint(b)
	if w <= 0 {
		return nil, nil, errorf(id, "truncated frame: no Protobuf message-index list after schema id %d", id)
	}
	b = b[w:]
	switch {
	case n == 0:
		return []int{0}, b, nil
	case n < 0 || n > maxIndexes:
		return nil, nil, errorf(id, "bad Protobuf message-index count %d after schema id %d: want 0 to %d", n, id, maxIndexes)
	}
	idx := make([]int, n)
	for i := range idx {
		v, w := binary.Varint(b)
		if w <= 0 {
			return nil, nil, errorf(id, "truncated frame: Protobuf message index %d of %d missing after schema id %d", i+1, n, id)
		}
		if v < 0 || v > 1<<20 {
			return nil, nil, errorf(id, "bad Protobuf message index %d after schema id %d", v, id)
		}
		idx[i], b = int(v), b[w:]
	}
	return idx, b, nil
}
