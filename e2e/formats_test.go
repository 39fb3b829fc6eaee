package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/segment"
)

// event is the part of a generated event the format tests re-encode.
type event struct {
	ID, TS, Page, User, Country, Action string
	Delta                               int64
}

func events(t *testing.T, gen *eventgen.Generator, from, n int64) []event {
	out := make([]event, 0, n)
	for i := from; i < from+n; i++ {
		var e event
		require.NoError(t, json.Unmarshal(gen.Event(i), &e))
		out = append(out, e)
	}
	return out
}

// TestCSVInputIsIngestedExactlyOnce sends events as CSV messages of five
// lines each, with quoted fields: every event is published exactly once.
func TestCSVInputIsIngestedExactlyOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(1)
	spec.IOConfig.InputFormat = domain.InputFormat{Type: domain.InputCSV, Delimiter: ",",
		Columns: []string{"id", "ts", "page", "user", "country", "action", "delta"}}
	gen := eventgen.New(s.name, 16)
	const n = 2000
	var msgs [][]byte
	evs := events(t, gen, 0, n)
	for i := 0; i < n; i += 5 {
		var msg []byte
		for _, e := range evs[i : i+5] {
			msg = fmt.Appendf(msg, "%s,%s,\"%s\",%s,%s,%s,%d\n", e.ID, e.TS, e.Page, e.User, e.Country, e.Action, e.Delta)
		}
		msgs = append(msgs, msg)
	}
	s.produceRaw(msgs...)
	run := s.startSupervisor(spec)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.requireExactlyOnce(spec, gen.RunID, n)
}

// TestNestedJSONWithDiscoveryIsIngestedExactlyOnce nests the event's fields
// and lifts them with a flattenSpec, discovering the dimensions: every event
// is published exactly once, with the discovered columns.
func TestNestedJSONWithDiscoveryIsIngestedExactlyOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(1)
	spec.DataSchema.DimensionsSpec = domain.DimensionsSpec{DimensionExclusions: []string{"meta"}}
	spec.IOConfig.InputFormat = domain.InputFormat{Type: domain.InputJSON, FlattenSpec: &domain.FlattenSpec{Fields: []domain.FlattenField{
		{Type: "path", Name: "id", Expr: "$.meta.id"},
		{Type: "path", Name: "user", Expr: "$.meta.who.name"},
	}}}
	gen := eventgen.New(s.name, 17)
	const n = 2000
	var msgs [][]byte
	for _, e := range events(t, gen, 0, n) {
		msgs = append(msgs, fmt.Appendf(nil, `{"ts":%q,"page":%q,"meta":{"id":%q,"who":{"name":%q}}}`, e.TS, e.Page, e.ID, e.User))
	}
	s.produceRaw(msgs...)
	run := s.startSupervisor(spec)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.requireExactlyOnce(spec, gen.RunID, n)

	segs, err := s.store.Segments(context.Background(), spec.DataSchema.DataSource)
	require.NoError(t, err)
	u, err := url.Parse(segs[0].URI)
	require.NoError(t, err)
	schema, err := segment.ReadSchema(u.Path)
	require.NoError(t, err)
	require.Equal(t, []domain.Column{{Name: "page", Type: domain.TypeString}, {Name: "id", Type: domain.TypeString}, {Name: "user", Type: domain.TypeString}},
		schema.Dims, "discovered: top-level fields, then flattened ones; the timestamp and exclusions left out")
}
