package rollup

import (
	"cmp"
	"encoding/binary"
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
// rows that compare equal in the order they were added. Its comparisons
// give the same sign as CompareRows for every pair, and it runs the same
// algorithm as sorting rows with CompareRows (slices.SortFunc, or
// SortStableFunc when stable), whose steps depend only on those signs: the
// order is the same, ties included (CompareRows ties -0 with 0, and NaN
// with every double, so it is not always a strict weak order).
func sortRows(rows []domain.Row, dims []domain.Column, stable bool) {
	if stable {
		// Rows in arrival order are mostly in time order already, which
		// SortStableFunc passes through with a time comparison each; the
		// sort keys' fill and permutation measured slower.
		slices.SortStableFunc(rows, order(dims))
		return
	}
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
	slices.SortFunc(keys, byRow)
	permute(rows, keys)
	keySlices.Put(&keys)
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
