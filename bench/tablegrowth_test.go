package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/lake"
	"handoff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The growth phase publishes through the real publish transaction and
// reads the table back through iceberg-go: every publication is a snapshot
// while the retention keeps them all, and the short retention expires down
// to the minimum the lake keeps, with the metadata log at its bound.
func TestTableGrowth(t *testing.T) {
	ctx := context.Background()
	s := &stack{dir: t.TempDir(), pgServer: testenv.Postgres(t)}
	o := options{growthMarks: []int{60, 150}, growthLoads: 1, growthMaxHeapMiB: 1 << 20, growthRenew: 50}
	for _, g := range []growthRetention{{"default", lake.Config{}}, {"short", lake.Config{MaxSnapshotAge: time.Millisecond}}} {
		r, err := runTableGrowth(ctx, s, o, g)
		require.NoError(t, err, g.name)
		require.Empty(t, r.Stopped)
		require.Len(t, r.Marks, 2)
		for _, m := range r.Marks {
			require.Equal(t, m.Publications, m.DataFiles, "%s: the scan plans every publication's file", g.name)
			require.LessOrEqual(t, m.MetadataLogEntries, 20)
			require.LessOrEqual(t, m.Manifests, 50)
			require.Positive(t, m.MetadataBytes)
			require.GreaterOrEqual(t, m.MetadataDirBytesBeforeMaintenance, m.MetadataDirBytes)
			require.Positive(t, m.TotalMillis)
			require.Positive(t, m.RESTLoadMillis, "loadTable through the REST catalog")
		}
		require.Equal(t, 60, r.Marks[0].Snapshots, g.name)
		want := 150
		if g.name == "short" {
			want = lake.DefaultMinSnapshots
		}
		require.Equal(t, want, r.Marks[1].Snapshots, g.name)
	}
}
