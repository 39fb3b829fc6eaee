package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/workflows"
)

func TestCompactionFlags(t *testing.T) {
	o, err := parseOptions(nil)
	require.NoError(t, err)
	require.Equal(t, "256MiB", o.compactMemLimit)
	require.Equal(t, time.Minute, o.compactIdle)
	require.Equal(t, 10*time.Second, o.compactIdlePeriod)
	o, err = parseOptions(strings.Fields("-phases compaction -compaction-idle 0 -compaction-memory-limit 128MiB"))
	require.NoError(t, err)
	require.Equal(t, []string{"compaction"}, o.phases)
	require.Zero(t, o.compactIdle)
	require.Equal(t, "128MiB", o.compactMemLimit)
	for _, args := range []string{"-compaction-idle -1s", "-compaction-idle-period 100ms"} {
		_, err := parseOptions(strings.Fields(args))
		require.ErrorContains(t, err, "-compaction-idle", args)
	}
}

func TestOverlapMergesTheCompactionsWithinTheDrain(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	run := func(a, b int) workflows.CompactionOutcome {
		return workflows.CompactionOutcome{CompactionRun: workflows.CompactionRun{StartedAt: at(a)}, EndedAt: at(b)}
	}
	// Drain [10, 20): runs [5, 12) and [11, 14) overlap (10-14), [16, 18)
	// is inside, [25, 30) is after: busy 4 + 2 of 10 s.
	runs := []workflows.CompactionOutcome{run(16, 18), run(5, 12), run(25, 30), run(11, 14)}
	require.InDelta(t, 0.6, overlap(runs, at(10), at(20)), 1e-9)
	require.Zero(t, overlap(nil, at(10), at(20)))
	require.Zero(t, overlap(runs, at(20), at(20)))
	require.InDelta(t, 1.0, overlap([]workflows.CompactionOutcome{run(0, 40)}, at(10), at(20)), 1e-9)
}

func TestPeerRateMatchesVariantsByName(t *testing.T) {
	p := &peerResult{Variants: []peerVariant{{Name: "rollup-off", EventsPerSecond: 100}, {Name: "rollup-on", EventsPerSecond: 50}}}
	require.Equal(t, 100.0, p.peerRate("rollup-off"))
	require.Equal(t, 100.0, p.peerRate("rollup-off-no-table"), "without the table, the same transform")
	require.Equal(t, 50.0, p.peerRate("rollup-on"))
	require.Zero(t, p.peerRate("other"))
	var none *peerResult
	require.Zero(t, none.peerRate("rollup-off"))
}

func TestWriteJSONLHoldsTheProducedEvents(t *testing.T) {
	end := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "b.jsonl")
	require.NoError(t, writeJSONL(path, newBacklog(100, 4, end)))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 100)
	b := newBacklog(100, 4, end) // what produceBacklog sends, in order
	for i, l := range lines {
		require.Equal(t, string(b.event(int64(i))), l, "event %d", i)
	}
}
