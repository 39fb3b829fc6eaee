package decode

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clock.appendRFC3339 writes what AppendFormat(time.RFC3339Nano) writes.
func TestAppendRFC3339MatchesAppendFormat(t *testing.T) {
	times := []time.Time{
		time.Unix(0, 0), time.Date(2024, 2, 29, 12, 34, 56, 789_000_000, time.UTC),
		time.Date(2024, 12, 31, 23, 59, 59, 999_999_999, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 100, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2000, 2, 29, 0, 0, 0, 10, time.UTC), time.Date(1900, 3, 1, 0, 0, 0, 120_000, time.UTC),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		times = append(times, time.Unix(r.Int64N(800_000_000_000)-400_000_000_000, r.Int64N(1e9)).UTC(),
			time.UnixMilli(r.Int64N(8_000_000_000_000)-4_000_000_000_000).UTC(), time.UnixMicro(r.Int64N(8e15)-4e15).UTC())
	}
	// Then pairs a few nanoseconds apart, as records of one second come.
	for _, ts := range times[:1000] {
		times = append(times, ts, ts.Add(time.Duration(r.IntN(1000))))
	}
	var c clock
	for _, ts := range times {
		require.Equal(t, string(ts.AppendFormat(nil, time.RFC3339Nano)), string(c.appendRFC3339(nil, ts.Unix(), ts.Nanosecond())), "%v", ts)
	}
}
