package rollup

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

// every aggregator internal/aggregate has.
var allMetrics = []domain.MetricSpec{
	{Type: domain.MetricCount, Name: "count"},
	{Type: domain.MetricLongSum, Name: "lsum", FieldName: "l"},
	{Type: domain.MetricLongMin, Name: "lmin", FieldName: "l"},
	{Type: domain.MetricLongMax, Name: "lmax", FieldName: "l"},
	{Type: domain.MetricDoubleSum, Name: "dsum", FieldName: "d"},
	{Type: domain.MetricDoubleMin, Name: "dmin", FieldName: "d"},
	{Type: domain.MetricDoubleMax, Name: "dmax", FieldName: "d"},
	{Type: domain.MetricHyperUnique, Name: "users", FieldName: "u"},
}

// TestMatchesReference feeds the same random rows to Buffer and to
// refBuffer, the string-keyed map it replaced, and requires the same rows
// in the same order, the same Len and the same Bytes (but for the keys'
// share). Values are drawn from small pools so that keys repeat; strings
// equal in content come from different allocations; Dims are short or end
// in explicit nulls; numbers include -0, NaN and long 0 beside "". Each
// seed runs with the full hash, with 2 bits of it (long probe chains) and
// with none (every key collides), so equal, not the hash, decides.
func TestMatchesReference(t *testing.T) {
	defer func(m uint32) { hashMask = m }(hashMask)
	for _, mask := range []uint32{^uint32(0), 3, 0} {
		hashMask = mask
		for seed := range uint64(150) {
			for _, rollup := range []bool{true, false} {
				name := fmt.Sprintf("mask=%x/seed=%d/rollup=%v", mask, seed, rollup)
				rng := rand.New(rand.NewPCG(seed, uint64(mask)))
				b, ref := New(allMetrics, rollup), newRef(allMetrics, rollup)
				cols := randomCols(rng)
				for chunk := range 3 { // Rows empties the buffer for the next chunk
					for range 50 + rng.IntN(400) {
						r := randomRow(rng, len(cols)+1)
						r2 := domain.Row{Time: r.Time, Dims: exactCopy(r.Dims), Metrics: exactCopy(r.Metrics)}
						err, refErr := b.Add(r), ref.Add(r2)
						require.Equal(t, refErr, err, name)
						require.Equal(t, ref.Len(), b.Len(), name)
						require.Equal(t, ref.Bytes()-ref.keyBytes+slotBytes*int64(len(ref.index)), b.Bytes(), name)
					}
					requireRows(t, ref.Rows(cols), b.Rows(cols), fmt.Sprintf("%s chunk %d", name, chunk))
					require.Zero(t, b.Len())
					require.Zero(t, b.Bytes())
				}
			}
		}
	}
}

func (b *refBuffer) Len() int { return len(b.rows) }

// requireRows reports the first row that differs, not the whole chunk.
func requireRows(t *testing.T, want, got []domain.Row, name string) {
	t.Helper()
	require.Equal(t, len(want), len(got), name)
	for i := range want {
		require.Equal(t, want[i], got[i], "%s row %d", name, i)
	}
}

// exactCopy copies v into an array of its length (slices.Clone may round
// the capacity up, and the estimate counts capacity).
func exactCopy(v []domain.Value) []domain.Value {
	c := make([]domain.Value, len(v))
	copy(c, v)
	return c
}

// randomCols are the chunk's dimension columns: mostly strings, some
// numbers, so that the sort compares by each type.
func randomCols(rng *rand.Rand) []domain.Column {
	cols := make([]domain.Column, 1+rng.IntN(4))
	for i := range cols {
		t := []domain.ColumnType{domain.TypeString, domain.TypeString, domain.TypeLong, domain.TypeDouble}[rng.IntN(4)]
		cols[i] = domain.Column{Name: fmt.Sprint("d", i), Type: t}
	}
	return cols
}

var dimPool = func() []domain.Value {
	s, l, d := domain.StringValue, domain.LongValue, domain.DoubleValue
	return []domain.Value{
		domain.NullValue(), domain.NullValue(), {Null: true, S: "junk", N: 9},
		s(""), s("a"), s("b"), s("ab"), s("a\x00"), s("ba"),
		l(0), l(1), l(-1), l(math.MinInt64),
		d(0), d(math.Copysign(0, -1)), d(0.5), d(math.NaN()), d(math.Inf(-1)),
		{S: "a", N: 1}, // both parts: no column holds it, the key still must
	}
}()

// randomRow draws a row of up to maxDims dims; strings are fresh copies,
// so no equality rests on a shared pointer.
func randomRow(rng *rand.Rand, maxDims int) domain.Row {
	r := domain.Row{Time: int64(rng.IntN(3)) - 1}
	for range rng.IntN(maxDims + 1) {
		v := dimPool[rng.IntN(len(dimPool))]
		v.S = strings.Clone(v.S)
		r.Dims = append(r.Dims, v)
	}
	for _, m := range allMetrics {
		r.Metrics = append(r.Metrics, randomMetric(rng, m))
	}
	r.Dims, r.Metrics = exactCopy(r.Dims), exactCopy(r.Metrics)
	return r
}

var users = func() []domain.Value {
	v := make([]domain.Value, 20)
	for i := range v {
		v[i], _ = aggregate.Init(domain.MetricSpec{Type: domain.MetricHyperUnique}, fmt.Sprint("user", i), true)
	}
	return v
}()

func randomMetric(rng *rand.Rand, m domain.MetricSpec) domain.Value {
	if m.Type != domain.MetricCount && rng.IntN(8) == 0 {
		return domain.NullValue()
	}
	switch m.Type {
	case domain.MetricCount:
		return domain.LongValue(1)
	case domain.MetricLongSum, domain.MetricLongMin, domain.MetricLongMax:
		return domain.LongValue([]int64{rng.Int64N(2000) - 1000, math.MaxInt64, math.MinInt64}[rng.IntN(3)])
	case domain.MetricHyperUnique:
		if rng.IntN(500) == 0 {
			return domain.StringValue("not a sketch") // Add fails, alike
		}
		return users[rng.IntN(len(users))]
	}
	f := []float64{rng.Float64()*100 - 50, math.Copysign(0, -1), math.NaN(), math.Inf(1)}[rng.IntN(4)]
	return domain.DoubleValue(f)
}
