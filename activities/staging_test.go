package activities_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/protocol"
	"handoff/internal/segment"
	"handoff/internal/storage"
)

// TestPublishClearsTheSequencesStagingDirectory: once a sequence commits,
// its staging directory is gone, with what no staging key names: a chunk
// of an earlier generation that read the sequence with other boundaries,
// and a worker's unfinished write. Only the listed chunks are published.
func TestPublishClearsTheSequencesStagingDirectory(t *testing.T) {
	t.Parallel()
	acts, env := fixture(t)
	staging, err := storage.NewLocal(t.TempDir())
	require.NoError(t, err)
	acts.Staging = staging
	acts.Deep, err = storage.NewLocal(t.TempDir())
	require.NoError(t, err)
	spec := boundsSpec(topic)
	schema := spec.DataSchema.DeclaredSchema()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	chunk := func(key string, from, n int) {
		rows := make([]domain.Row, n)
		for i := range rows {
			rows[i] = domain.Row{Time: base + int64(from+i), Dims: []domain.Value{domain.StringValue("x")},
				Metrics: []domain.Value{domain.LongValue(1), domain.LongValue(1)}}
		}
		require.NoError(t, staging.Put(context.Background(), key, func(w io.Writer) error {
			_, err := segment.WriteRun(w, schema, rows)
			return err
		}))
	}
	dir := "bounds/" + domain.SequenceName("bounds", 0, 0) + "/"
	chunk(dir+"p0-0.run", 0, 60)
	chunk(dir+"p0-60.run", 60, 40)
	chunk(dir+"p0-0_earlier-generation.run", 0, 70) // not listed: must not be published
	require.NoError(t, os.WriteFile(staging.Path(dir+"p0-100.run.tmp-123"), []byte("half a chunk"), 0o644))

	v, err := env.ExecuteActivity(protocol.ActivityPublish, protocol.PublishInput{
		Spec: spec, SequenceID: 0, Start: domain.Offsets{domain.P(0): 0}, End: domain.Offsets{domain.P(0): 100},
		StagingKeys: []string{dir + "p0-0.run", dir + "p0-60.run"},
	})
	require.NoError(t, err)
	var res protocol.PublishResult
	require.NoError(t, v.Get(&res))
	require.Equal(t, int64(100), res.Rows)
	_, err = os.Stat(staging.Path(dir))
	require.ErrorIs(t, err, os.ErrNotExist, "the sequence's staging directory must be gone")
	left, err := os.ReadDir(filepath.Dir(staging.Path(dir)))
	require.NoError(t, err)
	require.Empty(t, left)
}
