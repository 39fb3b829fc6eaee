package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/testenv"
)

// The catalog phase, small: the table's history is extended to the
// snapshot count, the real starter catalog serve answers every load of
// every burst, iceberg-go loads all the snapshots through it and scans
// every row published, and the server's memory is read.
func TestCatalogPhase(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "starter")
	cmd := exec.Command("go", "build", "-o", bin, "./starter")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	s := &stack{dir: t.TempDir(), pgServer: testenv.Postgres(t)}
	o := options{starterBin: bin, catalogPublishes: 12, catalogSnapshots: 500, catalogLoads: 5, catalogBurst: 40, catalogBursts: 2}
	r, err := runCatalog(context.Background(), s, o)
	require.NoError(t, err)
	require.Equal(t, 500, r.Snapshots)
	require.EqualValues(t, 12*growthRows, r.ScanRows, "iceberg-go scans every row through the catalog")
	require.Greater(t, r.MetadataBytes, int64(500*500), "the metadata holds 500 snapshots")
	require.Len(t, r.Bursts, 2)
	for _, b := range r.Bursts {
		require.Zero(t, b.Errors)
		require.Zero(t, b.StaticErrors)
		require.Equal(t, 40, b.Loads)
		require.Positive(t, b.Ratio)
	}
	require.Positive(t, r.ColdLoadMillis)
	require.Positive(t, r.LoadP50Millis)
	require.Positive(t, r.StaticP50Millis)
	require.Positive(t, r.ClientLoadP50Millis)
	require.Positive(t, r.ServerPeakRSSMiB)
	require.GreaterOrEqual(t, r.ServerPeakRSSMiB, r.ServerRSSBeforeMiB)
}
