package rollup

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"sync"

	"handoff/internal/domain"
)

// sortKey is what the sort moves instead of a 56-byte Row: the row's time,
// an order-preserving prefix of its first dimension, and its index. Most
// comparisons end at the time or the prefix; ties go to order over the
// rows themselves.
type sortKey struct {
	time   int64
	prefix uint64
	row    int
}

// keySlices keeps the sortKey slices of sorted chunks for the next chunks.
var keySlices sync.Pool // *[]sortKey

// sortRows sorts rows in place by domain.CompareRows over dims; stable keeps
// rows that compare equal in the order they were added. The comparisons
// give the same sign as CompareRows for every pair, and the sort gives the
// same order as today's slices.SortFunc (rollup) or SortStableFunc: the
// same algorithm, whose steps depend only on those signs, or for a stable
// sort of a strict weak order, any algorithm with the index breaking ties.
func sortRows(rows []domain.Row, dims []domain.Column, stable bool) {
	var keys []sortKey
	if p, ok := keySlices.Get().(*[]sortKey); ok {
		keys = (*p)[:0]
	}
	for i := range rows {
		keys = append(keys, sortKey{time: rows[i].Time, prefix: prefix(&rows[i], dims), row: i})
	}
	full := order(dims)
	byRow := func(a, b sortKey) int {
		if a.time != b.time {
			return cmp.Compare(a.time, b.time)
		}
		if a.prefix != b.prefix {
			return cmp.Compare(a.prefix, b.prefix)
		}
		return full(rows[a.row], rows[b.row])
	}
	switch {
	case stable && !hasNaN(rows, dims):
		// CompareRows is a strict weak order, so with the index breaking
		// ties every sort gives the one stable order: pdqsort's, faster
		// than SortStableFunc's rotations.
		slices.SortFunc(keys, func(a, b sortKey) int {
			if d := byRow(a, b); d != 0 {
				return d
			}
			return cmp.Compare(a.row, b.row)
		})
	case stable:
		// A NaN compares equal to every double, so CompareRows is no
		// strict weak order, and only the same algorithm gives the same
		// order.
		slices.SortStableFunc(keys, byRow)
	default:
		slices.SortFunc(keys, byRow)
	}
	permute(rows, keys)
	keySlices.Put(&keys)
}

// hasNaN reports whether a double dimension of rows is NaN.
func hasNaN(rows []domain.Row, dims []domain.Column) bool {
	for c, col := range dims {
		if col.Type != domain.TypeDouble {
			continue
		}
		for i := range rows {
			if c < len(rows[i].Dims) {
				v := &rows[i].Dims[c]
				if !v.Null && math.IsNaN(v.Double()) {
					return true
				}
			}
		}
	}
	return false
}

// prefix maps r's first dimension to a number that orders as
// domain.CompareValues does wherever the numbers differ: 0 for null, a
// long with its sign bit flipped, a string's first 8 bytes big-endian. A
// double gives 0 (-0 equals 0, NaN equals everything), as does no column:
// equal prefixes leave the order to the full comparison.
func prefix(r *domain.Row, dims []domain.Column) uint64 {
	if len(dims) == 0 || len(r.Dims) == 0 || r.Dims[0].Null {
		return 0
	}
	v := &r.Dims[0]
	switch dims[0].Type {
	case domain.TypeLong:
		return v.N ^ 1<<63
	case domain.TypeDouble:
		return 0
	}
	var b [8]byte
	copy(b[:], v.S)
	return binary.BigEndian.Uint64(b[:])
}

// permute puts rows[keys[k].row] at k for every k, in place, following
// each cycle of the permutation once; it marks keys done as it goes.
func permute(rows []domain.Row, keys []sortKey) {
	for k := range keys {
		if keys[k].row == k {
			continue
		}
		held := rows[k]
		j := k
		for {
			src := keys[j].row
			keys[j].row = j
			if src == k {
				rows[j] = held
				break
			}
			rows[j] = rows[src]
			j = src
		}
	}
}
