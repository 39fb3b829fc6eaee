package aggregate

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// foldRandom combines vals in a random grouping: it splits the slice at a
// random point, folds each half the same way, and combines the halves.
func foldRandom(t *testing.T, rng *rand.Rand, m domain.MetricSpec, vals []domain.Value) domain.Value {
	t.Helper()
	switch len(vals) {
	case 0:
		return domain.NullValue()
	case 1:
		return vals[0]
	}
	cut := 1 + rng.IntN(len(vals)-1)
	a := foldRandom(t, rng, m, vals[:cut])
	b := foldRandom(t, rng, m, vals[cut:])
	if rng.IntN(2) == 0 {
		a, b = b, a
	}
	v, err := Combine(m, a, b)
	require.NoError(t, err)
	return v
}

func TestCombineAnyGrouping(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []string{
		domain.MetricCount, domain.MetricLongSum, domain.MetricLongMin, domain.MetricLongMax,
		domain.MetricDoubleSum, domain.MetricDoubleMin, domain.MetricDoubleMax, domain.MetricHyperUnique,
	} {
		m := metric(typ)
		for trial := range 20 {
			vals := make([]domain.Value, 1+rng.IntN(300))
			for i := range vals {
				var raw string
				if typ == domain.MetricDoubleSum {
					// Integral halves add exactly, whatever the grouping.
					raw = strconv.FormatFloat(float64(rng.IntN(1<<20)-1<<19)/2, 'g', -1, 64)
				} else {
					// Wide longs: sums overflow and must still agree.
					raw = strconv.FormatInt(rng.Int64()-rng.Int64(), 10)
				}
				v, err := Init(m, raw, rng.IntN(10) != 0)
				require.NoError(t, err)
				vals[i] = v
			}
			want := foldRandom(t, rng, m, vals)
			for range 5 {
				rng.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
				got := foldRandom(t, rng, m, vals)
				if typ == domain.MetricHyperUnique && len(vals) > 1 {
					// Any merged sketch is compacted, so its bytes agree too.
					require.Equal(t, want, got, "%s trial %d", typ, trial)
				}
				require.Equal(t, want.IsNull(), got.IsNull())
				require.Equal(t, estimateOrN(t, typ, want), estimateOrN(t, typ, got), "%s trial %d", typ, trial)
			}
		}
	}
}

func estimateOrN(t *testing.T, typ string, v domain.Value) uint64 {
	if typ != domain.MetricHyperUnique {
		return v.N
	}
	n, err := Estimate(v)
	require.NoError(t, err)
	return n
}
