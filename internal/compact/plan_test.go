package compact

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

var hour0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func seg(id string, hour int, rows, bytes int64) Segment {
	start := hour0.Add(time.Duration(hour) * time.Hour)
	return Segment{ID: id, Start: start, End: start.Add(time.Hour), Rows: rows, Bytes: bytes}
}

func cfg() domain.CompactionConfig {
	return domain.CompactionConfig{DataSource: "ds", TargetRowsPerSegment: 1000, TargetBytesPerSegment: 1 << 20}.WithDefaults()
}

func TestIntervalsPicksSmallSegmentsOfSettledIntervalsNewestFirst(t *testing.T) {
	segs := []Segment{
		seg("a1", 0, 10, 100), seg("a2", 0, 10, 100), seg("afull", 0, 1000, 100), // two small, one full
		seg("b1", 1, 10, 100), // alone: nothing to merge
		seg("c1", 2, 10, 100), seg("c2", 2, 20, 100), seg("c3", 2, 30, 100),
		seg("d1", 3, 10, 100), seg("d2", 3, 10, 100), // within skipOffsetFromLatest
		seg("e1", 4, 10, 2<<20), seg("e2", 4, 10, 100), // one is full by bytes
	}
	now := hour0.Add(4*time.Hour + 30*time.Minute) // the horizon is 03:30: hour 3 ends after it
	p := Intervals(segs, cfg(), now, 10, nil)
	require.Equal(t, 2, p.Pending)
	require.Len(t, p.Tasks, 2)
	require.Equal(t, hour0.Add(2*time.Hour), p.Tasks[0].Start, "newest first")
	require.Equal(t, []string{"c1", "c2", "c3"}, p.Tasks[0].SegmentIDs)
	require.Equal(t, int64(60), p.Tasks[0].Rows)
	require.Equal(t, []string{"a1", "a2"}, p.Tasks[1].SegmentIDs, "the full segment is left alone")

	p = Intervals(segs, cfg(), now, 1, nil)
	require.Equal(t, 2, p.Pending, "pending counts what the limit leaves out")
	require.Len(t, p.Tasks, 1)

	p = Intervals(segs, cfg(), now, -1, nil)
	require.Empty(t, p.Tasks, "no free slot: nothing starts")
	require.Equal(t, 2, p.Pending)

	p = Intervals(segs, cfg(), now, 10, map[time.Time]bool{hour0.Add(2 * time.Hour): true})
	require.Len(t, p.Tasks, 1, "an interval being compacted is skipped")
	require.Equal(t, hour0, p.Tasks[0].Start)
}

func TestRowsPerSegmentTakesTheFirstTarget(t *testing.T) {
	c := cfg()
	require.Equal(t, int64(1000), RowsPerSegment(Task{Rows: 5000, Bytes: 5000}, c), "rows first")
	// 1 KiB a row: the 1 MiB byte target is reached at 1024 rows > 1000,
	// at 2 KiB a row at 512.
	require.Equal(t, int64(512), RowsPerSegment(Task{Rows: 100, Bytes: 100 * 2048}, c))
	require.Equal(t, int64(1000), RowsPerSegment(Task{}, c))
}

// With a re-rollup granularity, an interval is worth compacting as soon as
// one segment is finer than it, full or alone; segments at it (or coarser)
// are only merged when small, as without.
func TestIntervalsRerollsUpFinerSegments(t *testing.T) {
	at := func(s Segment, g domain.Granularity) Segment { s.Grain = g; return s }
	c := cfg()
	c.QueryGranularity = domain.GranularityFifteenMinute
	segs := []Segment{
		at(seg("a1", 0, 10, 100), domain.GranularityMinute),   // alone, finer
		at(seg("b1", 1, 5000, 100), domain.GranularityMinute), // full, finer
		at(seg("b2", 1, 10, 100), domain.GranularityFifteenMinute),
		at(seg("c1", 2, 10, 100), domain.GranularityFifteenMinute), // alone, done
		at(seg("d1", 3, 10, 100), domain.GranularityHour),          // coarser: done
		seg("e1", 4, 10, 100),                               // not recorded: taken as none
		at(seg("f1", 5, 5000, 100), domain.GranularityHour), // full and done
	}
	now := hour0.Add(24 * time.Hour)
	p := Intervals(segs, c, now, 10, nil)
	var got [][]string
	for _, t := range p.Tasks {
		got = append(got, t.SegmentIDs)
	}
	require.Equal(t, [][]string{{"e1"}, {"b1", "b2"}, {"a1"}}, got)

	c.QueryGranularity = ""
	require.Empty(t, Intervals(segs, c, now, 10, nil).Tasks, "without re-rollup no interval has two small segments")
}

func TestGrainOfTheOutput(t *testing.T) {
	c := cfg()
	m, h := domain.GranularityMinute, domain.GranularityHour
	require.Equal(t, m, Grain([]domain.Granularity{m, m}, c), "the inputs' shared grain")
	require.Equal(t, domain.Granularity(""), Grain([]domain.Granularity{m, h}, c), "mixed: unknown")
	require.Equal(t, domain.Granularity(""), Grain(nil, c))
	c.QueryGranularity = h
	require.Equal(t, h, Grain([]domain.Granularity{m, ""}, c), "a re-rollup's grain")
}
