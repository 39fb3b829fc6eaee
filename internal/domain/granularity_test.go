package domain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestGranularityTruncateAndNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		g     domain.Granularity
		in    string
		start string // Truncate(in)
		next  string // Next(start)
	}{
		{domain.GranularitySecond, "2024-02-29T23:59:59.999Z", "2024-02-29T23:59:59Z", "2024-03-01T00:00:00Z"},
		{domain.GranularityMinute, "2024-02-29T12:34:56.789Z", "2024-02-29T12:34:00Z", "2024-02-29T12:35:00Z"},
		{domain.GranularityMinute, "2024-12-31T23:59:59.999Z", "2024-12-31T23:59:00Z", "2025-01-01T00:00:00Z"},
		{domain.GranularityMinute, "2024-02-29T12:34:00Z", "2024-02-29T12:34:00Z", "2024-02-29T12:35:00Z"},
		{domain.GranularityFiveMinute, "2024-02-29T12:34:56Z", "2024-02-29T12:30:00Z", "2024-02-29T12:35:00Z"},
		{domain.GranularityFifteenMinute, "2024-02-29T12:44:59.999Z", "2024-02-29T12:30:00Z", "2024-02-29T12:45:00Z"},
		{domain.GranularityFifteenMinute, "2024-02-29T12:45:00Z", "2024-02-29T12:45:00Z", "2024-02-29T13:00:00Z"},
		{domain.GranularityFifteenMinute, "2024-12-31T23:59:00Z", "2024-12-31T23:45:00Z", "2025-01-01T00:00:00Z"},
		{domain.GranularityHour, "2024-02-29T12:34:56Z", "2024-02-29T12:00:00Z", "2024-02-29T13:00:00Z"},
		{domain.GranularityHour, "2024-02-29T23:00:00.001Z", "2024-02-29T23:00:00Z", "2024-03-01T00:00:00Z"},
		{domain.GranularitySixHour, "2024-02-29T17:59:59Z", "2024-02-29T12:00:00Z", "2024-02-29T18:00:00Z"},
		{domain.GranularitySixHour, "2024-12-31T23:00:00Z", "2024-12-31T18:00:00Z", "2025-01-01T00:00:00Z"},
		{domain.GranularityDay, "2024-02-28T23:59:59Z", "2024-02-28T00:00:00Z", "2024-02-29T00:00:00Z"},
		{domain.GranularityDay, "2024-02-29T12:00:00Z", "2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z"},
		{domain.GranularityDay, "2023-02-28T12:00:00Z", "2023-02-28T00:00:00Z", "2023-03-01T00:00:00Z"},
		{domain.GranularityDay, "2024-12-31T23:59:59.999Z", "2024-12-31T00:00:00Z", "2025-01-01T00:00:00Z"},
		// 2024-02-29 is a Thursday; its ISO week starts Monday 2024-02-26.
		{domain.GranularityWeek, "2024-02-29T12:00:00Z", "2024-02-26T00:00:00Z", "2024-03-04T00:00:00Z"},
		// A Monday is the start of its own week.
		{domain.GranularityWeek, "2024-02-26T00:00:00Z", "2024-02-26T00:00:00Z", "2024-03-04T00:00:00Z"},
		// A Sunday belongs to the week that started six days before.
		{domain.GranularityWeek, "2024-03-03T23:59:59Z", "2024-02-26T00:00:00Z", "2024-03-04T00:00:00Z"},
		// 2024-12-31 is a Tuesday: its week starts 2024-12-30 and crosses the year.
		{domain.GranularityWeek, "2024-12-31T10:00:00Z", "2024-12-30T00:00:00Z", "2025-01-06T00:00:00Z"},
		// 2023-01-01 is a Sunday: its week starts in 2022.
		{domain.GranularityWeek, "2023-01-01T10:00:00Z", "2022-12-26T00:00:00Z", "2023-01-02T00:00:00Z"},
		{domain.GranularityMonth, "2024-02-29T23:59:59Z", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z"},
		{domain.GranularityMonth, "2023-02-15T00:00:00Z", "2023-02-01T00:00:00Z", "2023-03-01T00:00:00Z"},
		{domain.GranularityMonth, "2024-01-31T12:00:00Z", "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"},
		{domain.GranularityMonth, "2024-12-31T23:59:59Z", "2024-12-01T00:00:00Z", "2025-01-01T00:00:00Z"},
		{domain.GranularityMonth, "2024-03-01T00:00:00Z", "2024-03-01T00:00:00Z", "2024-04-01T00:00:00Z"},
		{domain.GranularityYear, "2024-02-29T12:00:00Z", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"},
		{domain.GranularityYear, "2024-12-31T23:59:59.999Z", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"},
		{domain.GranularityYear, "2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(string(tt.g)+"/"+tt.in, func(t *testing.T) {
			t.Parallel()
			in, start, next := utc(tt.in), utc(tt.start), utc(tt.next)
			got := tt.g.Truncate(in)
			require.True(t, start.Equal(got), "Truncate(%s) = %s, want %s", in, got, start)
			require.Equal(t, time.UTC, got.Location())
			gotNext := tt.g.Next(got)
			require.True(t, next.Equal(gotNext), "Next(%s) = %s, want %s", got, gotNext, next)

			// Bucket invariants: start <= in < next, truncation is idempotent,
			// and the next bucket starts where it says.
			require.False(t, got.After(in))
			require.True(t, in.Before(gotNext))
			require.True(t, got.Equal(tt.g.Truncate(got)))
			require.True(t, gotNext.Equal(tt.g.Truncate(gotNext)))
		})
	}
}

func TestGranularityTruncateConvertsToUTC(t *testing.T) {
	t.Parallel()
	// 2024-03-01T01:30+03:00 is 2024-02-29T22:30Z: the UTC day, month and
	// year are those of Feb 29.
	tz := time.FixedZone("UTC+3", 3*3600)
	in := time.Date(2024, 3, 1, 1, 30, 0, 0, tz)
	require.Equal(t, utc("2024-02-29T00:00:00Z"), domain.GranularityDay.Truncate(in))
	require.Equal(t, utc("2024-02-26T00:00:00Z"), domain.GranularityWeek.Truncate(in))
	require.Equal(t, utc("2024-02-01T00:00:00Z"), domain.GranularityMonth.Truncate(in))
	require.Equal(t, utc("2024-02-29T22:00:00Z"), domain.GranularityHour.Truncate(in))

	yearTZ := time.Date(2025, 1, 1, 2, 0, 0, 0, tz) // 2024-12-31T23:00Z
	require.Equal(t, utc("2024-01-01T00:00:00Z"), domain.GranularityYear.Truncate(yearTZ))
}

func TestGranularityNone(t *testing.T) {
	t.Parallel()
	in := utc("2024-02-29T12:34:56.789123456Z")
	for _, g := range []domain.Granularity{domain.GranularityNone, ""} {
		require.True(t, in.Equal(g.Truncate(in)), "%q", g)
	}
}

func TestGranularityWalkCoversAYear(t *testing.T) {
	t.Parallel()
	// Walking buckets from Truncate(2024-01-01) with Next ends exactly on
	// 2025-01-01 (or the first bucket start after it) with the expected
	// count, for every granularity with a step.
	from, to := utc("2024-01-01T00:00:00Z"), utc("2025-01-01T00:00:00Z")
	want := map[domain.Granularity]int{
		domain.GranularityHour:  366 * 24,
		domain.GranularityDay:   366,
		domain.GranularityMonth: 12,
		domain.GranularityYear:  1,
		// 2024-01-01 is a Monday; 52 weeks and 2 days later is 2025-01-01,
		// so 53 weeks cover the year.
		domain.GranularityWeek: 53,
	}
	for g, n := range want {
		count := 0
		for s := g.Truncate(from); s.Before(to); s = g.Next(s) {
			count++
			require.True(t, s.Equal(g.Truncate(s)), "%s: %s is not a bucket start", g, s)
		}
		require.Equal(t, n, count, "%s", g)
	}
}

func TestParseGranularity(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"none", "second", "minute", "five_minute", "fifteen_minute", "hour", "six_hour", "day", "week", "month", "year"} {
		g, err := domain.ParseGranularity(s)
		require.NoError(t, err, s)
		require.Equal(t, domain.Granularity(s), g)
	}
	for in, want := range map[string]domain.Granularity{"HOUR": domain.GranularityHour, "Fifteen_Minute": domain.GranularityFifteenMinute} {
		g, err := domain.ParseGranularity(in)
		require.NoError(t, err, in)
		require.Equal(t, want, g)
	}
	for _, s := range []string{"", "hours", "fortnight", "15m", "PT1H", "all"} {
		_, err := domain.ParseGranularity(s)
		require.Error(t, err, s)
		require.Contains(t, err.Error(), `"`+s+`"`)
	}
}

func TestGranularityCovers(t *testing.T) {
	t.Parallel()
	yes := [][2]domain.Granularity{
		{domain.GranularityHour, domain.GranularityMinute},
		{domain.GranularityHour, domain.GranularityFifteenMinute},
		{domain.GranularityDay, domain.GranularitySixHour},
		{domain.GranularityMinute, domain.GranularityNone},
		{domain.GranularityMinute, ""},
		{domain.GranularityNone, domain.GranularityNone},
		{domain.GranularityWeek, domain.GranularityDay},
		{domain.GranularityMonth, domain.GranularityHour},
		{domain.GranularityYear, domain.GranularityMonth},
		{domain.GranularityYear, domain.GranularityYear},
	}
	no := [][2]domain.Granularity{
		{domain.GranularityMinute, domain.GranularityHour},
		{domain.GranularityNone, domain.GranularitySecond},
		{"", domain.GranularityMinute},
		{domain.GranularityDay, domain.GranularityWeek},
		{domain.GranularityMonth, domain.GranularityWeek},
		{domain.GranularityYear, domain.GranularityWeek},
		{domain.GranularityMonth, domain.GranularityYear},
		{domain.GranularityDay, domain.GranularityMonth},
	}
	for _, p := range yes {
		require.True(t, p[0].Covers(p[1]), "%s covers %s", p[0], p[1])
	}
	for _, p := range no {
		require.False(t, p[0].Covers(p[1]), "%s does not cover %s", p[0], p[1])
	}
	// What Covers promises: truncating to f, then to g, is truncating to g.
	gs := []domain.Granularity{domain.GranularitySecond, domain.GranularityMinute, domain.GranularityFiveMinute,
		domain.GranularityFifteenMinute, domain.GranularityHour, domain.GranularitySixHour, domain.GranularityDay,
		domain.GranularityWeek, domain.GranularityMonth, domain.GranularityYear}
	at := utc("2024-02-29T17:47:33.123Z")
	for _, g := range gs {
		for _, f := range gs {
			if g.Covers(f) {
				require.Equal(t, g.Truncate(at), g.Truncate(f.Truncate(at)), "%s over %s", g, f)
				require.False(t, f.Truncate(at).Before(g.Truncate(at)), "%s bucket starts inside %s's", f, g)
				require.False(t, f.Next(f.Truncate(at)).After(g.Next(g.Truncate(at))), "%s bucket ends inside %s's", f, g)
			}
		}
	}
}
