package aggregate

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func metric(typ string) domain.MetricSpec {
	return domain.MetricSpec{Type: typ, Name: "m_" + typ, FieldName: "x"}
}

func mustInit(t *testing.T, m domain.MetricSpec, raw string) domain.Value {
	t.Helper()
	v, err := Init(m, raw, true)
	require.NoError(t, err)
	return v
}

func TestInitCount(t *testing.T) {
	for _, present := range []bool{true, false} {
		v, err := Init(domain.MetricSpec{Type: domain.MetricCount, Name: "n"}, "whatever", present)
		require.NoError(t, err)
		require.Equal(t, domain.LongValue(1), v)
	}
}

func TestInitLong(t *testing.T) {
	for raw, want := range map[string]int64{
		"12": 12, "-7": -7, "+3": 3, "0": 0, "12.0": 12, "1e3": 1000, "-2.5e1": -25, "-0.0": 0,
		"9223372036854775807": math.MaxInt64, "-9223372036854775808": math.MinInt64,
	} {
		for _, typ := range []string{domain.MetricLongSum, domain.MetricLongMin, domain.MetricLongMax} {
			require.Equal(t, domain.LongValue(want), mustInit(t, metric(typ), raw), "%s %q", typ, raw)
		}
	}
}

func TestInitDouble(t *testing.T) {
	for raw, want := range map[string]float64{"1.5": 1.5, "-2": -2, "1e-3": 0.001, "0": 0} {
		for _, typ := range []string{domain.MetricDoubleSum, domain.MetricDoubleMin, domain.MetricDoubleMax} {
			require.Equal(t, domain.DoubleValue(want), mustInit(t, metric(typ), raw), "%s %q", typ, raw)
		}
	}
}

func TestInitNull(t *testing.T) {
	for _, typ := range []string{
		domain.MetricLongSum, domain.MetricLongMin, domain.MetricLongMax,
		domain.MetricDoubleSum, domain.MetricDoubleMin, domain.MetricDoubleMax, domain.MetricHyperUnique,
	} {
		v, err := Init(metric(typ), "", false)
		require.NoError(t, err, typ)
		require.True(t, v.IsNull(), typ)
	}
}

func TestInitErrors(t *testing.T) {
	for _, tc := range []struct{ typ, raw, msg string }{
		{domain.MetricLongSum, "abc", `field "x": "abc" is not a number`},
		{domain.MetricLongMax, "", `field "x": "" is not a number`},
		{domain.MetricLongMin, "true", `field "x": "true" is not a number`},
		{domain.MetricLongSum, "12.5", `field "x": "12.5" is not an integer`},
		{domain.MetricLongSum, "1e19", `field "x": "1e19" is out of the long range`},
		{domain.MetricLongSum, "9223372036854775808", `field "x": "9223372036854775808" is out of the long range`},
		{domain.MetricDoubleSum, "abc", `field "x": "abc" is not a number`},
		{domain.MetricDoubleMin, "NaN", `field "x": "NaN" is not a number`},
		{domain.MetricDoubleMax, "-Inf", `field "x": "-Inf" is not a number`},
		{domain.MetricDoubleSum, "1e999", `field "x": "1e999" is out of the double range`},
	} {
		_, err := Init(metric(tc.typ), tc.raw, true)
		require.EqualError(t, err, tc.msg, "%s %q", tc.typ, tc.raw)
	}
	_, err := Init(domain.MetricSpec{Type: "median", Name: "m"}, "1", true)
	require.EqualError(t, err, `metric "m": unknown type "median"`)
}

func TestCombine(t *testing.T) {
	L, D := domain.LongValue, domain.DoubleValue
	for _, tc := range []struct {
		typ        string
		a, b, want domain.Value
	}{
		{domain.MetricCount, L(3), L(4), L(7)},
		{domain.MetricLongSum, L(-3), L(10), L(7)},
		{domain.MetricLongSum, L(math.MaxInt64), L(1), L(math.MinInt64)}, // wraps
		{domain.MetricLongMin, L(-3), L(-10), L(-10)},
		{domain.MetricLongMin, L(5), L(7), L(5)},
		{domain.MetricLongMax, L(-3), L(-10), L(-3)},
		{domain.MetricLongMax, L(math.MinInt64), L(math.MaxInt64), L(math.MaxInt64)},
		{domain.MetricDoubleSum, D(1.5), D(-0.25), D(1.25)},
		{domain.MetricDoubleMin, D(-1.5), D(-0.25), D(-1.5)},
		{domain.MetricDoubleMax, D(-1.5), D(-0.25), D(-0.25)},
		{domain.MetricDoubleMax, D(-1e300), D(-1e301), D(-1e300)},
	} {
		m := metric(tc.typ)
		for _, pair := range [][2]domain.Value{{tc.a, tc.b}, {tc.b, tc.a}} {
			got, err := Combine(m, pair[0], pair[1])
			require.NoError(t, err)
			require.Equal(t, tc.want, got, "%s(%v, %v)", tc.typ, pair[0], pair[1])
		}
		// Null is the identity on either side.
		for _, v := range []domain.Value{tc.a, tc.b} {
			got, err := Combine(m, v, domain.NullValue())
			require.NoError(t, err)
			require.Equal(t, v, got)
			got, err = Combine(m, domain.NullValue(), v)
			require.NoError(t, err)
			require.Equal(t, v, got)
		}
		got, err := Combine(m, domain.NullValue(), domain.NullValue())
		require.NoError(t, err)
		require.True(t, got.IsNull())
	}
}

func TestCombineInitValues(t *testing.T) {
	// Values straight from Init: min/max of negatives, sums of mixed signs.
	fold := func(typ string, raws ...string) domain.Value {
		m := metric(typ)
		acc := domain.NullValue()
		for _, r := range raws {
			v, err := Combine(m, acc, mustInit(t, m, r))
			require.NoError(t, err)
			acc = v
		}
		return acc
	}
	raws := []string{"-5", "3", "-12", "7.0", "-1e1"}
	require.Equal(t, int64(-17), fold(domain.MetricLongSum, raws...).Long())
	require.Equal(t, int64(-12), fold(domain.MetricLongMin, raws...).Long())
	require.Equal(t, int64(7), fold(domain.MetricLongMax, raws...).Long())
	require.Equal(t, -17.0, fold(domain.MetricDoubleSum, raws...).Double())
	require.Equal(t, -12.0, fold(domain.MetricDoubleMin, raws...).Double())
	require.Equal(t, 7.0, fold(domain.MetricDoubleMax, raws...).Double())
	require.Equal(t, -0.75, fold(domain.MetricDoubleSum, "-0.5", "-0.25").Double())
}

func TestCombineErrors(t *testing.T) {
	_, err := Combine(domain.MetricSpec{Type: "median", Name: "m"}, domain.LongValue(1), domain.LongValue(2))
	require.EqualError(t, err, `metric "m": unknown type "median"`)

	m := metric(domain.MetricHyperUnique)
	good := mustInit(t, m, "a")
	_, err = Combine(m, good, domain.StringValue("not a sketch"))
	require.ErrorContains(t, err, `metric "m_hyperUnique": decode sketch: `)
}
