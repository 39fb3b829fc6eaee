package lake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/internal/segment"
	"handoff/internal/storage"
)

// Segments published before the datasource had a table: files without
// Parquet field ids, __time in MILLIS (as handoff wrote them before
// 6ff2dee) or MICROS, published with no table half.

// orderedGroup keeps a Parquet group's fields in the segment's column
// order (parquet.Group alone sorts them by name).
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

func (g *orderedGroup) Fields() []parquet.Field { return g.fields }

// millisFile is a segment file in the layout handoff wrote before
// 6ff2dee: __time TIMESTAMP(MILLIS), no field ids; string dimensions and
// long metrics only.
func millisFile(schema domain.Schema, rows []domain.Row) ([]byte, error) {
	group := parquet.Group{segment.TimeColumn: parquet.Encoded(parquet.Timestamp(parquet.Millisecond), &parquet.DeltaBinaryPacked)}
	for _, d := range schema.Dims {
		group[d.Name] = parquet.Optional(parquet.Encoded(parquet.String(), &parquet.RLEDictionary))
	}
	for _, m := range schema.Metrics {
		group[m.Name] = parquet.Optional(parquet.Leaf(parquet.Int64Type))
	}
	byName := map[string]parquet.Field{}
	for _, f := range group.Fields() {
		byName[f.Name()] = f
	}
	fields := []parquet.Field{byName[segment.TimeColumn]}
	for _, c := range schema.Columns() {
		fields = append(fields, byName[c.Name])
	}
	type col struct {
		Name string            `json:"name"`
		Type domain.ColumnType `json:"type"`
	}
	meta := struct {
		Version    int                 `json:"version"`
		Dimensions []col               `json:"dimensions,omitempty"`
		Metrics    []domain.MetricSpec `json:"metrics,omitempty"`
	}{Version: 1, Metrics: schema.Metrics}
	for _, d := range schema.Dims {
		meta.Dimensions = append(meta.Dimensions, col(d))
	}
	js, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	pw := parquet.NewWriter(&buf, parquet.NewSchema("segment", &orderedGroup{Group: group, fields: fields}),
		parquet.KeyValueMetadata(segment.SchemaKey, string(js)))
	for _, r := range rows {
		row := parquet.Row{parquet.Int64Value(r.Time).Level(0, 0, 0)}
		for i, v := range r.Dims {
			row = append(row, parquet.ByteArrayValue([]byte(v.S)).Level(0, 1, 1+i))
		}
		for i, v := range r.Metrics {
			row = append(row, parquet.Int64Value(int64(v.N)).Level(0, 1, 1+len(r.Dims)+i))
		}
		if _, err := pw.WriteRows([]parquet.Row{row}); err != nil {
			return nil, err
		}
	}
	if err := pw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// oldSeq is a sequence published before the datasource had a table.
type oldSeq struct {
	seq
	millis bool
	span   time.Duration // the segment's interval; default an hour
}

// rowTime is the time of row i of a sequence at hour h.
func rowTime(hour, i int) time.Time {
	return t0.Add(time.Duration(hour)*time.Hour + time.Duration(i)*time.Second)
}

// publishOld writes the sequence's segment into deep storage and publishes
// it without a table half, as handoff did before it had tables. Its rows
// are ids <name>-0 ..., as write's, "x" in every dimension after page.
func (e *env) publishOld(ds string, s oldSeq) {
	e.t.Helper()
	e.publishOldTo(e.deep, ds, s)
}

// publishOldTo is publishOld with the segment in deep.
func (e *env) publishOldTo(deep storage.Store, ds string, s oldSeq) {
	e.t.Helper()
	ctx := context.Background()
	schema := s.schema
	if schema.Dims == nil {
		schema = testSchema
	}
	name := domain.SequenceName("sup", s.group, s.id)
	var rows []domain.Row
	for i := range s.rows {
		dims := []domain.Value{domain.StringValue(name + "-" + strconv.Itoa(i)), domain.StringValue("p")}
		for range len(schema.Dims) - 2 {
			dims = append(dims, domain.StringValue("x"))
		}
		rows = append(rows, domain.Row{Time: rowTime(s.hour, i).UnixMilli(), Dims: dims, Metrics: []domain.Value{domain.LongValue(int64(i))}})
	}
	var b []byte
	if s.millis {
		var err error
		b, err = millisFile(schema, rows)
		require.NoError(e.t, err)
	} else {
		path := filepath.Join(e.t.TempDir(), "seg.parquet")
		_, err := segment.WriteFile(path, schema, rows)
		require.NoError(e.t, err)
		b, err = os.ReadFile(path)
		require.NoError(e.t, err)
	}
	start := t0.Add(time.Duration(s.hour) * time.Hour)
	span := s.span
	if span == 0 {
		span = time.Hour
	}
	key := fmt.Sprintf("%s/%s/%s.parquet", ds, start.Format("20060102T15"), name)
	require.NoError(e.t, deep.Put(ctx, key, func(w io.Writer) error { _, err := w.Write(b); return err }))
	uri := deep.URI(key)
	_, err := e.store.Publish(ctx, pgstore.Publication{
		SequenceName: name, SupervisorID: "sup", DataSource: ds, Topic: "topic", Group: s.group, SequenceID: s.id,
		Start: s.start, End: s.end, Rows: int64(s.rows),
		Segments: []pgstore.Segment{{ID: ds + "_" + name, DataSource: ds, IntervalStart: start, IntervalEnd: start.Add(span),
			Version: name, SequenceName: name, Rows: int64(s.rows), Bytes: int64(len(b)), URI: uri, Checksum: "sha256:x"}},
	})
	require.NoError(e.t, err)
}
