package aggregate

import (
	"strconv"
	"testing"

	"github.com/axiomhq/hyperloglog"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

var unique = domain.MetricSpec{Type: domain.MetricHyperUnique, Name: "users", FieldName: "user"}

// sketchOver folds the values lo..hi-1 into one sketch through a Sketch.
func sketchOver(t *testing.T, lo, hi int) domain.Value {
	t.Helper()
	var s Sketch
	for i := lo; i < hi; i++ {
		require.NoError(t, s.Merge(mustInit(t, unique, "user-"+strconv.Itoa(i))))
	}
	return s.Value()
}

func TestSketchSingleValue(t *testing.T) {
	v := mustInit(t, unique, "alice")
	require.Len(t, v.S, 24) // sparse: header, one key, empty list
	n, err := Estimate(v)
	require.NoError(t, err)
	require.Equal(t, uint64(1), n)
	require.Equal(t, v, mustInit(t, unique, "alice"), "Init is deterministic")

	// Anyone holding the bytes can decode them.
	var sk hyperloglog.Sketch
	require.NoError(t, sk.UnmarshalBinary(v.Bytes()))
	require.Equal(t, uint64(1), sk.Estimate())

	// A number's text and a string's content hash alike.
	same, err := Combine(unique, v, mustInit(t, unique, "alice"))
	require.NoError(t, err)
	n, err = Estimate(same)
	require.NoError(t, err)
	require.Equal(t, uint64(1), n)
}

func TestSketchEstimate100k(t *testing.T) {
	const n = 100_000
	// Three independent sets: the error is random per set (standard error
	// 0.81% at precision 14), so one set alone says little.
	for _, prefix := range []string{"user-", "session/", "id:"} {
		var s Sketch
		for i := range n {
			require.NoError(t, s.Merge(mustInit(t, unique, prefix+strconv.Itoa(i))))
		}
		v := s.Value()
		require.Len(t, v.S, 8+denseBytes, "dense")
		got, err := Estimate(v)
		require.NoError(t, err)
		require.InEpsilon(t, n, got, 0.02, prefix)
		t.Logf("%q: estimate of %d distinct: %d (%+.3f%%)", prefix, n, got, 100*(float64(got)-n)/n)
	}
}

func TestSketchMergeEqualsUnion(t *testing.T) {
	for _, size := range []int{50, 2_000, 40_000} {
		a := sketchOver(t, 0, size)
		b := sketchOver(t, size/2, size+size/2) // overlaps a by half
		ab, err := Combine(unique, a, b)
		require.NoError(t, err)
		union := sketchOver(t, 0, size+size/2)
		require.Equal(t, union, ab, "size %d", size)
		got, err := Estimate(ab)
		require.NoError(t, err)
		want, err := Estimate(union)
		require.NoError(t, err)
		require.Equal(t, want, got)
		t.Logf("%d distinct: %d bytes, estimate %d", size+size/2, len(ab.S), got)
	}
}

func TestSketchSizes(t *testing.T) {
	for _, n := range []int{1, 2, 10, 100, 1_000, 5_000, 10_000, 100_000} {
		t.Logf("%6d distinct: %5d bytes", n, len(sketchOver(t, 0, n).S))
	}
}

func TestSketchNullAndErrors(t *testing.T) {
	n, err := Estimate(domain.NullValue())
	require.NoError(t, err)
	require.Zero(t, n)

	_, err = Estimate(domain.StringValue("xx"))
	require.ErrorContains(t, err, "decode sketch")

	var s Sketch
	require.True(t, s.Value().IsNull())
	require.Zero(t, s.Bytes())
	require.NoError(t, s.Merge(domain.NullValue()))
	require.True(t, s.Value().IsNull())
	require.Error(t, s.Merge(domain.StringValue("xx")))

	// Another precision does not merge.
	other := hyperloglog.New16()
	other.Insert([]byte("a"))
	b, err := other.MarshalBinary()
	require.NoError(t, err)
	_, err = Combine(unique, mustInit(t, unique, "a"), domain.BytesValue(b))
	require.ErrorContains(t, err, "merge sketch")
}

func TestSketchBytesBounded(t *testing.T) {
	var s Sketch
	require.NoError(t, s.Merge(mustInit(t, unique, "a")))
	small := s.Bytes()
	for i := range 50_000 {
		require.NoError(t, s.Merge(mustInit(t, unique, strconv.Itoa(i))))
	}
	require.Greater(t, s.Bytes(), small)
	require.LessOrEqual(t, s.Bytes(), denseBytes+sketchOverhead)
}
