package segment

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// A re-rollup merge truncates every row's time to the coarser grain and
// then merges as if the files had been written at that grain: the same
// rows as truncating, sorting and rolling up in memory, across passes,
// with nothing left in tmpDir.
func TestMergeRegrainedEqualsTruncatingFirst(t *testing.T) {
	for _, rollup := range []bool{false, true} {
		paths, files := overlapping(t, t.TempDir(), 5, 5000)
		truncated := make([][]domain.Row, len(files))
		for i, rows := range files {
			for _, r := range rows {
				r.Time = domain.GranularityMinute.Truncate(time.UnixMilli(r.Time)).UnixMilli()
				truncated[i] = append(truncated[i], r)
			}
		}
		tmp := t.TempDir()
		var got []domain.Row
		err := MergeRegrained(context.Background(), paths, benchSchema(), rollup, domain.GranularityMinute, 2, tmp, func(r domain.Row) error {
			got = append(got, cloneRow(r))
			return nil
		})
		require.NoError(t, err)
		want := naiveMerge(t, truncated, benchSchema(), rollup)
		require.Equal(t, want, got, "rollup %v", rollup)
		require.Zero(t, entries(t, tmp), "temporary runs removed")
		if !rollup {
			continue
		}
		before := naiveMerge(t, files, benchSchema(), true)
		require.Less(t, len(got), len(before)/10, "a minute holds many seconds' rows")
		var count int64
		for _, r := range got {
			require.Zero(t, r.Time%60_000, "times are whole minutes")
			count += r.Metrics[0].Long()
		}
		require.Equal(t, int64(5*5000), count, "count sums to the input rows")
	}
}
