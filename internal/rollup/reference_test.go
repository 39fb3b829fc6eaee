package rollup

import (
	"encoding/binary"
	"fmt"
	"slices"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

// refBuffer is the buffer as it was before the hash table: a string key
// per row (appendKey) in a map, rows sorted with domain.CompareRows. The
// tests hold Buffer to its rows, order and estimate.
type refBuffer struct {
	merger   // combining is the Buffer's own (combine.go)
	rollup   bool
	rows     []domain.Row
	index    map[string]int
	keyBytes int64 // what content holds for the keys
}

func newRef(metrics []domain.MetricSpec, rollup bool) *refBuffer {
	return &refBuffer{merger: merger{metrics: metrics, sketches: map[cell]*aggregate.Sketch{}}, rollup: rollup, index: map[string]int{}}
}

func (b *refBuffer) Add(r domain.Row) error {
	if len(r.Metrics) != len(b.metrics) {
		return fmt.Errorf("row has %d metrics, want %d", len(r.Metrics), len(b.metrics))
	}
	if b.rollup {
		key := appendKey(nil, r)
		if i, ok := b.index[string(key)]; ok {
			return b.combine(b.rows, i, r)
		}
		b.index[string(key)] = len(b.rows)
		b.content += 48 + int64(len(key))
		b.keyBytes += 48 + int64(len(key))
	}
	b.rows = append(b.rows, r)
	b.content += rowContent(r)
	return nil
}

func (b *refBuffer) Bytes() int64 { return rowBytes*int64(len(b.rows)) + b.content }

func (b *refBuffer) Rows(dims []domain.Column) []domain.Row {
	for c, s := range b.sketches {
		b.rows[c.row].Metrics[c.metric] = s.Value()
	}
	rows := b.rows
	cmp := func(x, y domain.Row) int { return domain.CompareRows(x, y, dims) }
	if b.rollup {
		slices.SortFunc(rows, cmp)
	} else {
		slices.SortStableFunc(rows, cmp)
	}
	*b = *newRef(b.metrics, b.rollup)
	return rows
}

// Tag bits of one dimension in a reference key. A null is a lone zero tag;
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
