package lake

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"handoff/internal/domain"
	"handoff/internal/segment"
	"handoff/internal/storage"
)

// segmentFile is what a segment's footer says, read once.
type segmentFile struct {
	seg    usedSegment
	footer Footer
	schema domain.Schema
	millis bool           // __time in milliseconds
	ids    map[string]int // Parquet field ids the file carries, by column
}

// readSegments reads the footers of the segments not in read yet.
func (l *Lake) readSegments(ctx context.Context, segs []usedSegment, read map[string]segmentFile) error {
	for _, s := range segs {
		if _, ok := read[s.URI]; ok {
			continue
		}
		f, err := l.readSegment(ctx, s)
		if err != nil {
			return err
		}
		read[s.URI] = f
	}
	return nil
}

// readSegment reads a segment's footer: in place on local deep storage,
// from a temporary copy otherwise (a footer needs a seekable file).
func (l *Lake) readSegment(ctx context.Context, s usedSegment) (segmentFile, error) {
	key, err := newStoreIO(ctx, l.deep).key(s.URI)
	if err != nil {
		return segmentFile{}, fmt.Errorf("segment %s: %w: give the deep storage the worker publishes to", s.URI, err)
	}
	path, done, err := l.localCopy(ctx, key)
	if err != nil {
		return segmentFile{}, fmt.Errorf("segment %s: %w", s.URI, err)
	}
	defer done()
	f := segmentFile{seg: s, ids: map[string]int{}}
	if f.footer, err = ReadFooter(path); err != nil {
		return segmentFile{}, fmt.Errorf("segment %s: %w", s.URI, err)
	}
	if f.schema, err = segment.ReadSchema(path); err != nil {
		return segmentFile{}, fmt.Errorf("segment %s: %w", s.URI, err)
	}
	sc := f.footer.meta.Schema
	for i := range sc.NumColumns() {
		c := sc.Column(i)
		if id := c.SchemaNode().FieldID(); id >= 0 {
			f.ids[c.Name()] = int(id)
		}
		if c.Name() == segment.TimeColumn {
			if ts, ok := c.LogicalType().(schema.TimestampLogicalType); ok && ts.TimeUnit() == schema.TimeUnitMillis {
				f.millis = true
			}
		}
	}
	return f, nil
}

func (l *Lake) localCopy(ctx context.Context, key string) (string, func(), error) {
	if local, ok := l.deep.(*storage.Local); ok {
		return local.Path(key), func() {}, nil
	}
	rc, err := l.deep.Open(ctx, key)
	if err != nil {
		return "", nil, err
	}
	defer rc.Close()
	tmp, err := os.CreateTemp("", "handoff-segment-*.parquet")
	if err != nil {
		return "", nil, err
	}
	done := func() { os.Remove(tmp.Name()) }
	_, err = io.Copy(tmp, rc)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		done()
		return "", nil, fmt.Errorf("download: %w", err)
	}
	return tmp.Name(), done, nil
}

// checkFieldIDs refuses a file that carries Parquet field ids other than
// the table's: readers would take its columns for others. Files without
// ids are read through the table's name mapping.
func (f segmentFile) checkFieldIDs(table map[string]int) error {
	for name, id := range f.ids {
		if want := table[name]; want != id {
			return fmt.Errorf("segment %s carries field id %d for column %q, the new table has %d there: it was written for another table", f.seg.URI, id, name, want)
		}
	}
	return nil
}

// dataFile is the file's entry in t: its partition from the segment's
// interval; for a file in milliseconds no __time bounds (its statistics
// are in the wrong unit for a timestamptz).
func (f segmentFile) dataFile(t *table.Table) (iceberg.DataFile, error) {
	props := maps.Clone(t.Properties())
	if f.millis {
		props[table.MetricsModeColumnConfPrefix+"."+segment.TimeColumn] = "counts"
	}
	spec := t.Spec()
	var partition map[int]any
	if spec.NumFields() == 1 {
		pf := spec.Field(0)
		partition = map[int]any{pf.FieldID: pf.Transform.Apply(timeLiteral(f.seg.Start)).Val.Any()}
	}
	return table.DataFileFromMetadata(table.DataFileArgs{
		Schema: t.Schema(), Spec: spec, Format: iceberg.ParquetFile, Metadata: f.footer.meta,
		FilePath: f.seg.URI, FileSize: f.footer.size, Content: iceberg.EntryContentData,
		Properties: props, FormatVersion: t.Metadata().Version(), PartitionValues: partition,
	})
}

func timeLiteral(t time.Time) iceberg.Optional[iceberg.Literal] {
	return iceberg.Optional[iceberg.Literal]{Valid: true, Val: iceberg.TimestampLiteral(t.UnixMicro())}
}

// fittingGranularity is the granularity the table is partitioned for:
// gran when its partitions hold each segment whole, else the finest of
// hour, day, month, year and none that does. (When gran's partitions do
// not, no finer ones do: their boundaries are gran's and more.)
func fittingGranularity(gran domain.Granularity, files []segmentFile) domain.Granularity {
	if gran != "" && fits(partitionTransform(gran), files) {
		return gran
	}
	for _, g := range []domain.Granularity{domain.GranularityHour, domain.GranularityDay, domain.GranularityMonth, domain.GranularityYear} {
		if fits(partitionTransform(g), files) {
			return g
		}
	}
	return domain.GranularityNone
}

// fits: each segment's interval lies in one partition of t (nil: none).
func fits(t iceberg.Transform, files []segmentFile) bool {
	if t == nil {
		return true
	}
	for _, f := range files {
		last := f.seg.End.Add(-time.Microsecond)
		if !t.Apply(timeLiteral(f.seg.Start)).Val.Equals(t.Apply(timeLiteral(last)).Val) {
			return false
		}
	}
	return true
}

// unionSchema is the schema holding every file's columns: dimensions in
// first-seen order, then metrics in first-seen order. A column with two
// types is an error naming both segments.
func unionSchema(files []segmentFile) (domain.Schema, error) {
	var union domain.Schema
	type seen struct {
		typ  domain.ColumnType
		from string
	}
	cols := map[string]seen{}
	add := func(name string, typ domain.ColumnType, from string) (bool, error) {
		if s, ok := cols[name]; ok {
			if s.typ != typ {
				return false, fmt.Errorf("column %q is %s in segment %s but %s in segment %s", name, typ, from, s.typ, s.from)
			}
			return false, nil
		}
		cols[name] = seen{typ, from}
		return true, nil
	}
	for _, f := range files {
		for _, d := range f.schema.Dims {
			if isNew, err := add(d.Name, d.Type, f.seg.URI); err != nil {
				return domain.Schema{}, err
			} else if isNew {
				union.Dims = append(union.Dims, d)
			}
		}
	}
	for _, f := range files {
		for _, m := range f.schema.Metrics {
			if isNew, err := add(m.Name, m.ColumnType(), f.seg.URI); err != nil {
				return domain.Schema{}, err
			} else if isNew {
				union.Metrics = append(union.Metrics, m)
			}
		}
	}
	return union, nil
}
