package e2e

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/segment"
)

// publishedIDCounts reads every published segment file back (the ones the
// segments table lists) and counts each event id in it.
func (s *stack) publishedIDCounts(spec domain.Spec) map[string]int {
	s.t.Helper()
	segs, err := s.store.Segments(context.Background(), spec.DataSchema.DataSource)
	require.NoError(s.t, err)
	seen := map[string]int{}
	for _, seg := range segs {
		u, err := url.Parse(seg.URI)
		require.NoError(s.t, err)
		schema, rows, err := segment.ReadFile(u.Path)
		require.NoError(s.t, err)
		idCol := slices.IndexFunc(schema.Dims, func(c domain.Column) bool { return c.Name == "id" })
		require.GreaterOrEqual(s.t, idCol, 0, "segment %s has no id column: %v", seg.ID, schema.Dims)
		require.Equal(s.t, seg.Rows, int64(len(rows)), "segment %s row count", seg.ID)
		for _, r := range rows {
			seen[r.Dim(idCol).S]++
		}
	}
	return seen
}

// requireExactlyOnce checks that the events with ids runID-0 ... runID-(n-1)
// are published exactly once each and nothing else is; and that the stored
// offsets are the topic's end offsets.
func (s *stack) requireExactlyOnce(spec domain.Spec, runID string, n int64) {
	s.t.Helper()
	s.requireExactlyOnceIDs(spec, idRange(runID, n))
}

// requireExactlyOnceIDs is requireExactlyOnce for any set of ids: each of
// want published once, nothing else.
func (s *stack) requireExactlyOnceIDs(spec domain.Spec, want []string) {
	s.t.Helper()
	n := int64(len(want))
	seen := s.publishedIDCounts(spec)
	var total int
	for _, c := range seen {
		total += c
	}
	var missing, dup []string
	for _, id := range want {
		switch c := seen[id]; {
		case c == 0:
			missing = append(missing, id)
		case c > 1:
			dup = append(dup, id)
		}
		delete(seen, id)
	}
	s.t.Logf("published %d rows; %d ids missing, %d duplicated", total, len(missing), len(dup))
	require.Empty(s.t, first(missing), "%d of %d events lost (first ones shown)", len(missing), n)
	require.Empty(s.t, first(dup), "%d events published more than once", len(dup))
	require.Empty(s.t, seen, "%d rows that were never produced", len(seen))
	require.EqualValues(s.t, n, total)

	stored, err := s.store.Offsets(context.Background(), spec.DataSchema.DataSource, spec.IOConfig.Topic)
	require.NoError(s.t, err)
	require.Equal(s.t, s.latest(spec), stored, "stored offsets must be each partition's end")
	s.requireTableExactlyOnce(spec, want, stored)
}

// requireTableExactlyOnce reads the datasource through its Iceberg table,
// opened by iceberg-go's SQL catalog, and checks what requireExactlyOnce
// checks of the segments (laketest.CheckIDs); then DuckDB reads exactly the
// files the scan planned.
func (s *stack) requireTableExactlyOnce(spec domain.Spec, want []string, stored domain.Offsets) {
	s.t.Helper()
	r, err := laketest.CheckIDs(context.Background(), s.store.Pool(), lake.Config{}, spec.DataSchema.DataSource, want, stored)
	if r != nil {
		s.t.Logf("table: %d rows in %d files; %d ids missing, %d duplicated", r.Scan.Rows, len(r.Scan.Files), len(r.Lost), len(r.Duplicated))
	}
	require.NoError(s.t, err)
	s.requireDuckDBCounts(r.Scan)
}

// latest returns each partition's end offset.
func (s *stack) latest(spec domain.Spec) domain.Offsets {
	s.t.Helper()
	kc, err := kafka.New(s.brokers)
	require.NoError(s.t, err)
	ctx := context.Background()
	_, _, latest, err := kc.Look(ctx, spec.IOConfig)
	require.NoError(s.t, err)
	return latest
}

// idsOfPartition reads a partition from the start and returns the event ids
// in it.
func (s *stack) idsOfPartition(p int32) map[string]bool {
	s.t.Helper()
	kc, err := kafka.New(s.brokers)
	require.NoError(s.t, err)
	ctx := context.Background()
	_, latest, err := kc.Bounds(ctx, s.name, []int32{p}, kafka.ReadUncommitted)
	require.NoError(s.t, err)
	ids := map[string]bool{}
	for off := int64(0); off < latest[p]; {
		res, err := kc.Fetch(ctx, kafka.FetchRequest{Topic: s.name, Partition: p, Offset: off, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond})
		require.NoError(s.t, err)
		for _, r := range res.Records {
			var ev struct{ ID string }
			if json.Unmarshal(r.Value, &ev) == nil && ev.ID != "" {
				ids[ev.ID] = true
			}
		}
		off = res.Next
	}
	return ids
}

func first(ids []string) []string { return ids[:min(len(ids), 5)] }

// idRange is runID-0 ... runID-(n-1).
func idRange(runID string, n int64) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = runID + "-" + itoa(i)
	}
	return out
}
