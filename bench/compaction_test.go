package main

import (
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
