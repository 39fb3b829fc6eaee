package rollup

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// requireSameKeys checks sameKey and keyHash against the reference string
// key (appendKey) for every pair of rows.
func requireSameKeys(t *testing.T, rows []domain.Row) {
	t.Helper()
	for i := range rows {
		for j := range rows {
			a, b := &rows[i], &rows[j]
			ha, _ := keyHash(*a)
			hb, nb := keyHash(*b)
			want := string(appendKey(nil, *a)) == string(appendKey(nil, *b))
			require.Equal(t, want, sameKey(a, b, nb), "rows %d %v and %d %v", i, a.Dims, j, b.Dims)
			if want {
				require.Equal(t, ha, hb, "rows %d and %d: equal keys, different hashes", i, j)
			}
		}
	}
}

func TestKeyTrailingNulls(t *testing.T) {
	s, null := domain.StringValue, domain.NullValue()
	key := func(time int64, dims ...domain.Value) domain.Row { return domain.Row{Time: time, Dims: dims} }
	rows := []domain.Row{
		key(1, s("a")), key(1, s("a"), null), key(1, s("a"), null, null),
		key(1), key(1, null), key(2, s("a")), key(1, null, s("a")),
		key(1, s("a"), null, s("b")), key(1, s("a"), s("b")),
	}
	requireSameKeys(t, rows)
	require.True(t, sameKey(&rows[0], &rows[2], keyLen(rows[2].Dims)))
	require.True(t, sameKey(&rows[3], &rows[4], keyLen(rows[4].Dims)))
	require.False(t, sameKey(&rows[0], &rows[5], keyLen(rows[5].Dims)))
}

func TestKeyUnambiguous(t *testing.T) {
	s, l, d, null := domain.StringValue, domain.LongValue, domain.DoubleValue, domain.NullValue()
	dims := [][]domain.Value{
		{s("ab"), s("c")},
		{s("a"), s("bc")},
		{s("abc")},
		{s(""), s("abc")},
		{s("")},
		{s(""), s("")},
		{null, s("")},
		{s("\x00")},
		{l(0)}, // equals s(""): the same column never holds both
		{l(1)},
		{l(1), s("")},
		{l(-1)},
		{d(1)},
		{d(0.5), null, l(7)},
		{d(0.5), l(7)},
		{d(math.Copysign(0, -1))}, // -0 is not 0 (s("") and l(0))
		{d(math.NaN())},
		{d(math.NaN())},
		{{Null: true, S: "x", N: 3}}, // a null's other fields do not count
		{s("\x01\x00\x00\x00\x00\x00\x00\x00\x01")},
	}
	rows := make([]domain.Row, len(dims))
	for i, d := range dims {
		rows[i] = domain.Row{Time: 5, Dims: d}
	}
	requireSameKeys(t, rows)
}
