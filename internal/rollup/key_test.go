package rollup

import (
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestKeyTrailingNulls(t *testing.T) {
	s, null := domain.StringValue, domain.NullValue()
	key := func(time int64, dims ...domain.Value) string {
		return string(appendKey(nil, domain.Row{Time: time, Dims: dims}))
	}
	require.Equal(t, key(1, s("a")), key(1, s("a"), null))
	require.Equal(t, key(1, s("a")), key(1, s("a"), null, null))
	require.Equal(t, key(1), key(1, null))
	require.NotEqual(t, key(1, s("a")), key(2, s("a")))
	require.NotEqual(t, key(1, s("a")), key(1, null, s("a")))
	require.NotEqual(t, key(1, s("a"), null, s("b")), key(1, s("a"), s("b")))
}

func TestKeyUnambiguous(t *testing.T) {
	s, l, d, null := domain.StringValue, domain.LongValue, domain.DoubleValue, domain.NullValue()
	rows := [][]domain.Value{
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
		{s("\x01\x00\x00\x00\x00\x00\x00\x00\x01")},
	}
	seen := map[string]int{}
	for i, dims := range rows {
		k := string(appendKey(nil, domain.Row{Time: 5, Dims: dims}))
		if j, ok := seen[k]; ok && !(i == 8 && j == 4) {
			t.Fatalf("rows %d and %d share key %q", j, i, k)
		}
		seen[k] = i
	}
}
