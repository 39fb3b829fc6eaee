package chaos

import (
	"context"
	"io/fs"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/segment"
)

// publishedIDCounts reads every segment the segments table lists back from
// deep storage and counts each event id in them.
func (e *env) publishedIDCounts(spec domain.Spec) (seen map[string]int, segments int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	segs, err := e.store.Segments(ctx, spec.DataSchema.DataSource)
	require.NoError(e.t, err)
	seen = map[string]int{}
	for _, seg := range segs {
		u, err := url.Parse(seg.URI)
		require.NoError(e.t, err)
		schema, rows, err := segment.ReadFile(u.Path)
		require.NoError(e.t, err, "segment %s", seg.ID)
		idCol := slices.IndexFunc(schema.Dims, func(c domain.Column) bool { return c.Name == "id" })
		require.GreaterOrEqual(e.t, idCol, 0, "segment %s has no id column: %v", seg.ID, schema.Dims)
		require.Equal(e.t, seg.Rows, int64(len(rows)), "segment %s row count", seg.ID)
		for _, r := range rows {
			seen[r.Dim(idCol).S]++
		}
	}
	return seen, len(segs)
}

// verify checks, from Postgres and the Parquet files alone, that events
// runID-0 ... runID-(produced-1) are each published exactly once and
// nothing else is, that the stored offsets are the topic's end offsets and
// that no staging file is left; it emits the scenario's report either way.
func (e *env) verify(spec domain.Spec, runID string, produced int64) {
	e.t.Helper()
	want := make([]string, produced)
	for i := range produced {
		want[i] = runID + "-" + strconv.FormatInt(i, 10)
	}
	e.verifyIDs(spec, want)
}

// verifyIDs is verify for any set of event ids: each of want published
// exactly once, nothing else.
func (e *env) verifyIDs(spec domain.Spec, want []string) {
	e.t.Helper()
	produced := int64(len(want))
	res := result{Produced: produced}
	defer func() {
		res.Passed = !e.t.Failed()
		e.report.emit(res)
	}()
	seen, segments := e.publishedIDCounts(spec)
	res.Segments, res.Sequences = segments, e.publishedSequences(spec)
	var missing, dup []string
	for _, id := range want {
		c := seen[id]
		res.Published += int64(c)
		switch {
		case c == 0:
			missing = append(missing, id)
		case c > 1:
			dup = append(dup, id)
			res.Duplicated += int64(c - 1)
		}
		delete(seen, id)
	}
	var unexpected []string
	for id, c := range seen {
		unexpected = append(unexpected, id)
		res.Published += int64(c)
	}
	slices.Sort(unexpected)
	res.Lost, res.Unexpected = int64(len(missing)), int64(len(unexpected))
	e.t.Logf("%d segments in %d sequences, %d rows published; %d of %d ids lost, %d duplicated, %d never produced",
		segments, res.Sequences, res.Published, len(missing), produced, len(dup), len(unexpected))
	require.Empty(e.t, first(missing), "%d of %d events lost (first ones shown)", len(missing), produced)
	require.Empty(e.t, first(dup), "%d events published more than once (first ones shown)", len(dup))
	require.Empty(e.t, first(unexpected), "%d published rows were never produced (first ones shown)", len(unexpected))
	require.EqualValues(e.t, produced, res.Published, "rows published")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stored, err := e.store.Offsets(ctx, spec.DataSchema.DataSource, spec.IOConfig.Topic)
	require.NoError(e.t, err)
	require.Equal(e.t, e.latest(), stored, "datasource_offsets must be each partition's end offset")
	r, err := laketest.CheckIDs(ctx, e.pool, lake.Config{}, spec.DataSchema.DataSource, want, stored)
	if r != nil {
		res.TableRows, res.TableLost, res.TableDuplicated = r.Scan.Rows, int64(len(r.Lost)), int64(len(r.Duplicated))
		e.t.Logf("table: %d rows in %d files", r.Scan.Rows, len(r.Scan.Files))
	}
	require.NoError(e.t, err, "the datasource read through its Iceberg table")

	// A publish removes its sequence's whole staging directory, unfinished
	// writes of killed workers included, and merges in each worker's
	// private scratch directory (internal/scratch), so nothing may be left.
	orphans, temps := splitStaging(e.files(e.stagingDir))
	res.StagingTempLeft = len(temps)
	require.Empty(e.t, first(temps), "%d temporary files of killed writes left in staging (first ones shown)", len(temps))
	require.Empty(e.t, first(orphans), "%d staging files left after the supervisor stopped (first ones shown)", len(orphans))
	if extra := e.unlistedDeepFiles(spec); len(extra) > 0 {
		// Not a correctness problem (nothing lists them, names are
		// deterministic, so a retry overwrites them), but worth knowing.
		e.t.Logf("%d files in deep storage that no used segment lists: %v", len(extra), first(extra))
	}
}

// splitStaging separates temporary files of writes a kill interrupted
// from the rest (chunks of sequences): files in a publish's temporary
// directory (.publish-*, activities/segments.go) and storage.Local's
// temporary files (<name>.tmp-<random>, renamed to <name> when whole).
func splitStaging(files []string) (orphans, temps []string) {
	for _, f := range files {
		if strings.HasPrefix(f, ".publish-") || strings.Contains(filepath.Base(f), ".tmp-") {
			temps = append(temps, f)
		} else {
			orphans = append(orphans, f)
		}
	}
	return orphans, temps
}

// files lists the regular files under dir, relative to it.
func (e *env) files(dir string) []string {
	e.t.Helper()
	var out []string
	require.NoError(e.t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, rel)
		}
		return nil
	}))
	return out
}

// unlistedDeepFiles lists files in deep storage that no segment row names.
func (e *env) unlistedDeepFiles(spec domain.Spec) []string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	segs, err := e.store.Segments(ctx, spec.DataSchema.DataSource)
	require.NoError(e.t, err)
	listed := map[string]bool{}
	for _, s := range segs {
		if u, err := url.Parse(s.URI); err == nil {
			listed[filepath.Clean(u.Path)] = true
		}
	}
	var out []string
	for _, rel := range e.files(e.deepDir) {
		// Table metadata lives beside the segments; maintenance sweeps it.
		if !listed[filepath.Join(e.deepDir, rel)] && !strings.Contains(rel, "/metadata/") {
			out = append(out, rel)
		}
	}
	return out
}

func first(ids []string) []string { return ids[:min(len(ids), 10)] }

func TestSplitStaging(t *testing.T) {
	orphans, temps := splitStaging([]string{
		".publish-1/segment-2.parquet", "ds/ds_g0_s1/p0-10.run", ".publish-3/run-1.parquet", "x.publish-4",
		"ds/ds_g1_s4/p1-5111_p3-5110.run.tmp-374627123", "ds/x.tmp/p0-1.run",
	})
	require.Equal(t, []string{"ds/ds_g0_s1/p0-10.run", "x.publish-4", "ds/x.tmp/p0-1.run"}, orphans)
	require.Equal(t, []string{".publish-1/segment-2.parquet", ".publish-3/run-1.parquet", "ds/ds_g1_s4/p1-5111_p3-5110.run.tmp-374627123"}, temps)
}
