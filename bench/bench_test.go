package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/jsoncheck"
)

func TestParseOptions(t *testing.T) {
	o, err := parseOptions(nil)
	require.NoError(t, err)
	require.Equal(t, int64(2_000_000), o.events)
	require.Equal(t, []string{"off", "off-no-table", "on", "off-txn", "off-avro"}, o.variants)
	require.Equal(t, 1, o.repeat)
	require.Equal(t, 20, o.checkpoints)
	require.Equal(t, []bool{true, false}, o.handoffTables)
	require.Equal(t, []int{1000, 10000}, o.growthMarks)
	require.Equal(t, time.Second, o.growthShortAge)
	for args, want := range map[string]string{
		"-events 10":                                "at least 1000",
		"-task-count 5 -partitions 4":               "task count <= partitions",
		"-variants off,sideways":                    `unknown variant "sideways"`,
		"-checkpoints 3 -live-rate 0":               "positive rate",
		"-repeat 0":                                 "at least 1",
		"-handoff-tables on,maybe":                  `unknown value "maybe"`,
		"-growth-publishes 10,x":                    `"x" is not a positive count`,
		"-growth-publishes ,":                       "at least one count",
		"-growth-loads 0":                           "at least one load",
		"-growth-default=false -growth-short-age 0": "no retention left",
		"stray": "unexpected arguments",
	} {
		_, err := parseOptions(strings.Fields(args))
		require.ErrorContains(t, err, want, args)
	}
}

// The process readings are this test's own: CPU grows with work, and the
// high-water mark is at least the heap just touched.
func TestProcReadings(t *testing.T) {
	before, err := cpuSeconds(os.Getpid())
	require.NoError(t, err)
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	after, err := cpuSeconds(os.Getpid())
	require.NoError(t, err)
	require.Greater(t, after, before)
	peak, err := peakRSS(os.Getpid())
	require.NoError(t, err)
	require.GreaterOrEqual(t, peak, int64(64<<20))
	runtime.KeepAlive(buf)
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 40; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	require.Equal(t, 20*time.Millisecond, percentile(d, 0.5))
	require.Equal(t, 38*time.Millisecond, percentile(d, 0.95))
}

// The backlog's events are realistic JSON of about the promised size, with
// unique ids and times that only move forward within a partition.
func TestBacklogEvents(t *testing.T) {
	b := newBacklog(1000, 4, time.Date(2026, 12, 3, 10, 30, 0, 0, time.UTC))
	var total int
	seen := map[string]bool{}
	for i := range int64(1000) {
		e := string(b.event(i))
		total += len(e)
		id := e[strings.Index(e, `"id":"`)+6:]
		id = id[:strings.IndexByte(id, '"')]
		require.False(t, seen[id], "id %s twice", id)
		seen[id] = true
	}
	require.InDelta(t, 150, total/1000, 30)
	first := string(b.event(0)) // event reuses its buffer: copy before the next
	last := string(b.event(999))
	require.Contains(t, first, `"ts":"2026-12-03T08:00:00.000Z"`)
	require.Contains(t, last, `"ts":"2026-12-03T09:59:`)
}

// The results file has the project's JSON convention: lowerCamel keys, no
// duration as a bare integer (the floats carry their unit in their name).
func TestResultsFileKeysAndDurations(t *testing.T) {
	var r result
	jsoncheck.Fill(&r)
	path := filepath.Join(t.TempDir(), "bench-result.json")
	require.NoError(t, writeJSON(path, r))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, jsoncheck.Check(b), string(b))
}

// The table's cost compares the medians of the rollup-off runs with the
// table and without, and holds them and the handoff latency to issue 15.
func TestCompareTable(t *testing.T) {
	require.Nil(t, compareTable(result{}))
	r := result{
		Variants: []variantResult{
			{Name: "rollup-off", EventsPerSecond: 90, CPUSecondsPerM: 5},
			{Name: "rollup-off-no-table", EventsPerSecond: 100, CPUSecondsPerM: 4},
			{Name: "rollup-on", EventsPerSecond: 10},
			{Name: "rollup-off", Run: 2, EventsPerSecond: 94, CPUSecondsPerM: 5},
			{Name: "rollup-off-no-table", Run: 2, EventsPerSecond: 104, CPUSecondsPerM: 4},
		},
		Handoff:        &handoffResult{IcebergTable: true, Rate: 5000, Samples: 40, P50Millis: 900, P95Millis: 3100},
		HandoffNoTable: &handoffResult{Rate: 5000, Samples: 40, P50Millis: 400, P95Millis: 500},
	}
	c := compareTable(r)
	require.NotNil(t, c)
	require.Equal(t, 92.0, c.OnEventsPerSecond)
	require.Equal(t, 102.0, c.OffEventsPerSecond)
	require.Equal(t, 2, c.OnRuns)
	require.InDelta(t, 92.0/102, c.ThroughputRatio, 1e-9)
	require.InDelta(t, 1.25, c.CPURatio, 1e-9)
	require.Len(t, c.Targets, 2)
	require.Equal(t, "met", c.Targets[0].Verdict)
	require.Equal(t, "not met", c.Targets[1].Verdict) // p95 3.1 s
	require.Contains(t, c.Targets[1].Measured, "without the table: p50 400 ms")
}

func TestVariantSpecs(t *testing.T) {
	require.True(t, backlogSpec("x", "t", 2, false, false).IOConfig.TableOn())
	require.False(t, backlogSpec("x", "t", 2, false, true).IOConfig.TableOn())
	on, off := liveSpec(2, true), liveSpec(2, false)
	require.True(t, on.IOConfig.TableOn())
	require.False(t, off.IOConfig.TableOn())
	require.NotEqual(t, on.IOConfig.Topic, off.IOConfig.Topic)
	require.NotEqual(t, on.ID, off.ID)
	require.NoError(t, on.Validate())
	require.NoError(t, off.Validate())
}
