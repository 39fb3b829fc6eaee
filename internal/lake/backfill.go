package lake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"

	"handoff/internal/domain"
	"handoff/internal/segment"
	"handoff/internal/storage"
)

// ErrTableExists: CreateFromSegments found the datasource's table already
// there; it builds a table once.
var ErrTableExists = errors.New("the datasource already has a table")

// ErrNoSegments: CreateFromSegments found no used segment; such a
// datasource gets its table from its first publish.
var ErrNoSegments = errors.New("the datasource has no used segments: its first publish creates the table")

// ErrCreatedMeanwhile fails a publish that was to go without a table
// (Ensure said ErrNotCreated) when the table was created in the
// meantime: it must retry and commit to the table (see NoTableInTx).
var ErrCreatedMeanwhile = errors.New("the datasource's table was created while this publish was being prepared without it; retry")

// SummaryFromSegments is the snapshot summary key of the one snapshot
// CreateFromSegments commits: how many segments it registered.
const SummaryFromSegments = "handoff.created-from-segments"

// SummaryTopicOffsets replaces SummaryOffsets in that snapshot when the
// datasource holds offsets of more than one topic: a JSON object from
// topic to partition to offset.
const SummaryTopicOffsets = "handoff.topic-offsets"

// Backfill is what CreateFromSegments committed.
type Backfill struct {
	Identifier       string
	MetadataLocation string
	SnapshotID       int64
	Segments         int
	Rows             int64
	Bytes            int64
	// Granularity is the segment granularity the table is partitioned
	// for: the one asked for, or a coarser one when a segment would
	// straddle its partitions.
	Granularity domain.Granularity
	// MillisFiles counts segments whose __time is in milliseconds
	// (written before microseconds): their Parquet statistics are not
	// Iceberg's, so their entries carry no __time bounds.
	MillisFiles int
	// Offsets are the stored offsets the snapshot summary carries, by
	// topic.
	Offsets map[string]domain.Offsets
}

// CreateFromSegments builds the table of a datasource that published
// segments before it had one: a table whose schema is the union of the
// segments' columns, partitioned for gran (coarser if a segment needs it;
// "" lets the segments decide) and one append snapshot of every used
// segment whose summary carries the stored offsets. It reads the
// segments' footers first, then, in one transaction holding the
// datasource's lock (so no publish commits in between), lists the used
// segments again, reads those it has not seen, refuses if a table exists
// (ErrTableExists), and creates the table, its snapshot and its catalog
// row. Publishes that come after it commit to the table.
func (l *Lake) CreateFromSegments(ctx context.Context, ds string, gran domain.Granularity) (Backfill, error) {
	// Checked again under the lock; this spares reading every footer.
	if loc, err := l.pointer(ctx, l.pool, ds, false); err != nil {
		return Backfill{}, err
	} else if loc != "" {
		return Backfill{}, fmt.Errorf("table %s: %w (metadata %s)", l.Identifier(ds), ErrTableExists, loc)
	}
	segs, err := usedSegments(ctx, l.pool, ds)
	if err != nil {
		return Backfill{}, err
	}
	read := map[string]segmentFile{}
	if err := l.readSegments(ctx, segs, read); err != nil {
		return Backfill{}, err
	}
	var b Backfill
	err = pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		if err := lockDataSource(ctx, tx, ds); err != nil {
			return err
		}
		if loc, err := l.pointer(ctx, tx, ds, true); err != nil {
			return err
		} else if loc != "" {
			return fmt.Errorf("table %s: %w (metadata %s)", l.Identifier(ds), ErrTableExists, loc)
		}
		segs, err := usedSegments(ctx, tx, ds)
		if err != nil {
			return err
		}
		if len(segs) == 0 {
			return fmt.Errorf("table %s: %w", l.Identifier(ds), ErrNoSegments)
		}
		if err := l.readSegments(ctx, segs, read); err != nil {
			return err
		}
		files := make([]segmentFile, len(segs))
		for i, s := range segs {
			files[i] = read[s.URI]
		}
		b, err = l.backfillInTx(ctx, tx, ds, gran, files)
		return err
	})
	if err != nil {
		return Backfill{}, err
	}
	return b, nil
}

func (l *Lake) backfillInTx(ctx context.Context, tx pgx.Tx, ds string, gran domain.Granularity, files []segmentFile) (Backfill, error) {
	b := Backfill{Identifier: l.Identifier(ds), Segments: len(files), Granularity: fittingGranularity(gran, files)}
	union, err := unionSchema(files)
	if err != nil {
		return Backfill{}, fmt.Errorf("table %s: %w", b.Identifier, err)
	}
	summary, offsets, err := storedOffsetsSummary(ctx, tx, ds)
	if err != nil {
		return Backfill{}, err
	}
	b.Offsets = offsets
	summary[SummaryFromSegments] = strconv.Itoa(len(files))
	meta, err := l.create(ctx, tx, ds, union, b.Granularity)
	if err != nil {
		return Backfill{}, err
	}
	ids := fieldIDs(meta.CurrentSchema())
	cat := &txCatalog{l: l, tx: tx, ds: ds}
	t, err := cat.load(ctx)
	if err != nil {
		return Backfill{}, err
	}
	dfs := make([]iceberg.DataFile, 0, len(files))
	for _, f := range files {
		if err := f.checkFieldIDs(ids); err != nil {
			return Backfill{}, fmt.Errorf("table %s: %w", b.Identifier, err)
		}
		df, err := f.dataFile(t)
		if err != nil {
			return Backfill{}, fmt.Errorf("table %s: data file %s: %w", b.Identifier, f.seg.URI, err)
		}
		dfs = append(dfs, df)
		b.Rows += df.Count()
		b.Bytes += df.FileSizeBytes()
		if f.millis {
			b.MillisFiles++
		}
	}
	txn := t.NewTransaction()
	if err := txn.AddDataFiles(ctx, dfs, summary, table.WithoutDuplicateCheck()); err != nil {
		return Backfill{}, fmt.Errorf("table %s: append the segments: %w", b.Identifier, err)
	}
	nt, err := txn.Commit(ctx)
	if err != nil {
		return Backfill{}, fmt.Errorf("table %s: append the segments: %w", b.Identifier, err)
	}
	b.MetadataLocation = cat.committed
	if s := nt.CurrentSnapshot(); s != nil {
		b.SnapshotID = s.SnapshotID
	}
	return b, nil
}

// NoTableInTx is the table half of a publication that goes without a
// table because Ensure said ErrNotCreated. Run inside the publish
// transaction, which holds the datasource's lock, it returns
// ErrCreatedMeanwhile if the table exists by now (CreateFromSegments ran
// between Ensure and the commit), so the publish retries and its
// segments reach the table instead of being missing from it for good.
func (l *Lake) NoTableInTx(ctx context.Context, tx pgx.Tx, ds string) error {
	loc, err := l.pointer(ctx, tx, ds, false)
	if err != nil {
		return err
	}
	if loc != "" {
		return fmt.Errorf("table %s: %w", l.Identifier(ds), ErrCreatedMeanwhile)
	}
	return nil
}

// usedSegment is the part of a segments row a backfill needs.
type usedSegment struct {
	URI        string
	Start, End time.Time
}

type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func usedSegments(ctx context.Context, q rowsQuerier, ds string) ([]usedSegment, error) {
	rows, err := q.Query(ctx, `SELECT uri, interval_start, interval_end FROM segments
		WHERE datasource = $1 AND used ORDER BY interval_start, id`, ds)
	if err != nil {
		return nil, fmt.Errorf("list segments of %q: %w", ds, err)
	}
	segs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (usedSegment, error) {
		var s usedSegment
		err := r.Scan(&s.URI, &s.Start, &s.End)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("list segments of %q: %w", ds, err)
	}
	return segs, nil
}

// storedOffsetsSummary is the summary that says where the datasource's
// offsets stand: SummaryTopic and SummaryOffsets for one topic,
// SummaryTopicOffsets for several.
func storedOffsetsSummary(ctx context.Context, tx pgx.Tx, ds string) (iceberg.Properties, map[string]domain.Offsets, error) {
	rows, err := tx.Query(ctx, `SELECT topic, partition, next_offset FROM datasource_offsets WHERE datasource = $1`, ds)
	if err != nil {
		return nil, nil, fmt.Errorf("read offsets of %q: %w", ds, err)
	}
	byTopic := map[string]domain.Offsets{}
	var topic string
	var part int32
	var next int64
	if _, err := pgx.ForEachRow(rows, []any{&topic, &part, &next}, func() error {
		if byTopic[topic] == nil {
			byTopic[topic] = domain.Offsets{}
		}
		byTopic[topic][part] = next
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("read offsets of %q: %w", ds, err)
	}
	summary := iceberg.Properties{}
	switch len(byTopic) {
	case 0:
	case 1:
		for t, o := range byTopic {
			js, err := json.Marshal(o)
			if err != nil {
				return nil, nil, err
			}
			summary[SummaryTopic], summary[SummaryOffsets] = t, string(js)
		}
	default:
		js, err := json.Marshal(byTopic)
		if err != nil {
			return nil, nil, err
		}
		summary[SummaryTopicOffsets] = string(js)
	}
	return summary, byTopic, nil
}

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
