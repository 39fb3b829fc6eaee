package rollup

import (
	"encoding/binary"

	"handoff/internal/domain"
)

// Tag bits of one dimension in a rollup key. A null is a lone zero tag;
// otherwise the tag says which of the value's parts follow, so no two
// different values share an encoding, whatever their column type.
const (
	tagPresent = 1 << iota
	tagNumber  // 8 bytes of N follow
	tagString  // a uvarint length and the bytes of S follow
)

// appendKey appends r's rollup key to dst: its time, then its dimensions up
// to the last non-null one, so trailing nulls key alike with missing dims.
func appendKey(dst []byte, r domain.Row) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.Time))
	dims := r.Dims
	for len(dims) > 0 && dims[len(dims)-1].Null {
		dims = dims[:len(dims)-1]
	}
	for _, v := range dims {
		if v.Null {
			dst = append(dst, 0)
			continue
		}
		tag := byte(tagPresent)
		if v.N != 0 {
			tag |= tagNumber
		}
		if v.S != "" {
			tag |= tagString
		}
		dst = append(dst, tag)
		if v.N != 0 {
			dst = binary.BigEndian.AppendUint64(dst, v.N)
		}
		if v.S != "" {
			dst = binary.AppendUvarint(dst, uint64(len(v.S)))
			dst = append(dst, v.S...)
		}
	}
	return dst
}
