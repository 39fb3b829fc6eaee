package lake

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"

	"handoff/internal/domain"
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
