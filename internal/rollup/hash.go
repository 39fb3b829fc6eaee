package rollup

import (
	"hash/maphash"
	"math/bits"

	"handoff/internal/domain"
)

// seed is the process's seed for dimension strings: the table lives in
// memory only, so its hashes need not be stable across runs.
var seed = maphash.MakeSeed()

// hashMask is ANDed into every key hash. Tests narrow it to force
// collisions, which equal (not the hash) must then tell apart.
var hashMask uint32 = ^uint32(0)

// Mixing constants (from wyhash and splitmix64).
const (
	mul0 = 0x9e3779b97f4a7c15
	mul1 = 0xbf58476d1ce4e5b9
	mul2 = 0x94d049bb133111eb
	null = 0xa0761d6478bd642f // stands for a null dimension
)

// keyHash hashes r's rollup key: its time and its dimensions up to the last
// non-null one, which it returns as n, so that trailing nulls key alike
// with missing dims. Each dimension's string goes through maphash and its
// number is mixed in beside it; the running hash is multiplied between
// dimensions so that their order counts.
func keyHash(r domain.Row) (h uint32, n int) {
	n = keyLen(r.Dims)
	x := uint64(r.Time)*mul0 ^ uint64(n)
	for _, v := range r.Dims[:n] {
		w := uint64(null)
		if !v.Null {
			w = v.N * mul1
			if v.S != "" {
				w ^= maphash.String(seed, v.S)
			}
		}
		x = bits.RotateLeft64((x^w)*mul0, 29)
	}
	// splitmix64's finalizer, so that the low bits (the slot) depend on
	// every input bit.
	x = (x ^ x>>30) * mul1
	x = (x ^ x>>27) * mul2
	x ^= x >> 31
	return uint32(x) & hashMask, n
}

// keyLen is the length of dims without its trailing nulls.
func keyLen(dims []domain.Value) int {
	n := len(dims)
	for n > 0 && dims[n-1].Null {
		n--
	}
	return n
}

// sameKey reports whether held row a has r's rollup key, n being r's
// keyLen. Two dimensions are equal when both are null, or neither is and
// their numbers and strings are: the tags of the string key this replaced.
func sameKey(a, r *domain.Row, n int) bool {
	if a.Time != r.Time || keyLen(a.Dims) != n {
		return false
	}
	ad, rd := a.Dims[:n], r.Dims[:n]
	for i := range ad {
		x, y := &ad[i], &rd[i]
		if x.Null != y.Null || !x.Null && (x.N != y.N || x.S != y.S) {
			return false
		}
	}
	return true
}
