package activities

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/storage"
)

// Laying a supervisor's groups out afresh drops every sequence directory
// it left in staging, and nothing of another supervisor's.
func TestDropStagingRemovesTheSupervisorsSequences(t *testing.T) {
	ctx := context.Background()
	st, err := storage.NewLocal(t.TempDir())
	require.NoError(t, err)
	for _, key := range []string{"wiki/wiki_g1_s3/p1-25763_cb2e336c.run", "wiki/wiki_g1_s3/p1-25806_cb2e336c.run", "wiki/wiki_g0_s7/p0-10_ab.run", "wikis/wikis_g0_s1/p0-0_cd.run"} {
		require.NoError(t, st.Put(ctx, key, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }))
	}
	a := &Activities{Staging: st}
	require.NoError(t, a.dropStaging(ctx, "wiki"))
	left, err := st.ListObjects(ctx, "")
	require.NoError(t, err)
	var keys []string
	for _, o := range left {
		keys = append(keys, o.Key)
	}
	require.Equal(t, []string{"wikis/wikis_g0_s1/p0-0_cd.run"}, keys)
	require.NoError(t, a.dropStaging(ctx, "nothing-staged"))
}
