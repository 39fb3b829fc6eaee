package domain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestParseCompactionConfigFillsDefaultsAndRefuses(t *testing.T) {
	t.Parallel()
	c, err := domain.ParseCompactionConfig([]byte(`{"dataSource": "wiki"}`))
	require.NoError(t, err)
	require.Equal(t, domain.CompactionConfig{
		DataSource: "wiki", TargetRowsPerSegment: 5_000_000, TargetBytesPerSegment: 512 << 20,
		SkipOffsetFromLatest: domain.Duration(time.Hour), MaxConcurrentCompactions: 1, Period: domain.Duration(5 * time.Minute),
	}, c)

	for _, tt := range []struct{ doc, want string }{
		{`{"dataSource": "wiki", "queryGranularity": "decade"}`, `queryGranularity: "decade" is not a granularity`},
		{`{"dataSource": "wiki", "queryGranularity": "Hour"}`, `queryGranularity: "Hour": write it in lower case, "hour"`},
		{`{"dataSource": "wiki", "segmentGranularity": "day"}`, "segmentGranularity: coarser segments are not supported"},
		{`{"dataSource": "wiki", "maxConcurrentCompactions": 65}`, "maxConcurrentCompactions: is 65, want 1 to 64"},
		{`{"dataSource": "wiki", "period": "PT0.5S"}`, "period: is 500ms, want at least 1s"},
		{`{"dataSource": "wiki", "targetRows": 5}`, `unknown field "targetRows"`},
	} {
		_, err := domain.ParseCompactionConfig([]byte(tt.doc))
		require.ErrorContains(t, err, tt.want, tt.doc)
	}
	c, err = domain.ParseCompactionConfig([]byte(`{"dataSource": "wiki", "queryGranularity": "fifteen_minute"}`))
	require.NoError(t, err)
	require.Equal(t, domain.GranularityFifteenMinute, c.QueryGranularity)
}

// A re-rollup granularity sits between the datasource's query and
// segment granularities.
func TestCompactionConfigCheckGranularity(t *testing.T) {
	t.Parallel()
	g := domain.GranularitySpec{SegmentGranularity: domain.GranularityHour, QueryGranularity: domain.GranularityMinute}
	check := func(q domain.Granularity) error {
		return domain.CompactionConfig{DataSource: "wiki", QueryGranularity: q}.CheckGranularity(g)
	}
	for _, q := range []domain.Granularity{"", domain.GranularityMinute, domain.GranularityFiveMinute, domain.GranularityFifteenMinute, domain.GranularityHour} {
		require.NoError(t, check(q), q)
	}
	require.ErrorContains(t, check(domain.GranularitySecond), "second is finer than the datasource's queryGranularity minute")
	require.ErrorContains(t, check(domain.GranularityNone), "none is finer than the datasource's queryGranularity minute")
	require.ErrorContains(t, check(domain.GranularityDay), "day is coarser than the datasource's segmentGranularity hour")
}
