package lake_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
)

// Many publishes with a short retention: snapshots expire, manifests are
// merged, the metadata directory stays bounded, and every file the
// current metadata references is still there.
func TestExpiryKeepsMetadataBoundedAndReferencedFilesIntact(t *testing.T) {
	t.Parallel()
	cfg := lake.Config{MinSnapshots: 5, MaxSnapshotAge: time.Millisecond}
	e, ctx := newEnv(t, cfg), context.Background()
	const n = 160
	var seqs []seq
	for i := range n {
		s := seq{id: i, rows: 2, hour: i % 24, start: domain.Offsets{domain.P(0): int64(2 * i)}, end: domain.Offsets{domain.P(0): int64(2*i + 2)}}
		seqs = append(seqs, s)
		_, err := e.store.Publish(ctx, e.write("wiki", s))
		require.NoError(t, err)
		require.NoError(t, e.lake.MaintainIfDue(ctx, "wiki"))
	}
	m, err := e.lake.Maintain(ctx, "wiki")
	require.NoError(t, err)
	t.Logf("last pass: %+v", m)

	e.requireRows("wiki", seqs...)
	tbl, err := laketestLoad(e, "wiki")
	require.NoError(t, err)
	snaps := tbl.Metadata().Snapshots()
	require.LessOrEqual(t, len(snaps), 5+1, "snapshots beyond the retention expired")
	fs, err := tbl.FS(ctx)
	require.NoError(t, err)
	referenced := map[string]bool{tbl.MetadataLocation(): true}
	for e := range tbl.Metadata().PreviousFiles() {
		referenced[e.MetadataFile] = true
	}
	manifests := 0
	for _, s := range snaps {
		referenced[s.ManifestList] = true
		ms, err := s.Manifests(fs)
		require.NoError(t, err)
		for _, mf := range ms {
			referenced[mf.FilePath()] = true
		}
		manifests = max(manifests, len(ms))
	}
	for f := range referenced {
		_, err := os.Stat(laketest.LocalPath(f))
		require.NoError(t, err, "referenced file %s deleted", f)
	}
	keys, err := e.deep.List(ctx, "wiki/metadata/")
	require.NoError(t, err)
	t.Logf("%d publishes: %d metadata files (%d referenced), %d manifests in a snapshot at most", n, len(keys), len(referenced), manifests)
	require.Len(t, keys, len(referenced), "after a pass, the metadata directory holds what is referenced only")
	require.Less(t, manifests, 50+2, "manifests merge when they pile up")
	require.Less(t, len(keys), 3*n/4, "a publish writes 3 metadata files; far fewer remain")
}
