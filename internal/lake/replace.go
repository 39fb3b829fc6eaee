package lake

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
)

// SummaryCompaction names the compaction whose snapshot replaced files.
const SummaryCompaction = "handoff.compaction"

// Replace is one compaction's change to a table: the data files it read
// leave, the ones it wrote come in, in one snapshot. A retention drop is a
// Replace without Files.
type Replace struct {
	DataSource string
	Name       string   // the compaction, recorded in the summary
	Removed    []string // URIs of the files read
	Files      []File   // the files written
}

// ErrNoTable: the datasource has no table.
var ErrNoTable = fmt.Errorf("the datasource has no table")

// ErrNotInTable: a file a compaction read is not a live data file of the
// table (it was published while the spec kept the table off): replacing it
// would add its rows to the table a second time or lose them.
var ErrNotInTable = fmt.Errorf("file is not in the table")

// ReplaceInTx commits r as one snapshot of the datasource's table inside
// tx, which must hold the datasource's advisory lock, by the same
// compare-and-swap of metadata_location as CommitInTx. The snapshot
// carries the offsets summary of the one before it: a compaction moves no
// offsets. It returns ErrNotInTable, committing nothing, when a removed
// file is not live in the current snapshot.
func (l *Lake) ReplaceInTx(ctx context.Context, tx pgx.Tx, r Replace) (Committed, error) {
	cat := &txCatalog{l: l, tx: tx, ds: r.DataSource}
	t, err := cat.load(ctx)
	if err != nil {
		return Committed{}, err
	}
	if t == nil {
		return Committed{}, fmt.Errorf("table %s: %w", l.Identifier(r.DataSource), ErrNoTable)
	}
	cur := t.CurrentSnapshot()
	if cur == nil {
		return Committed{}, fmt.Errorf("table %s: %w: it has no snapshot", l.Identifier(r.DataSource), ErrNotInTable)
	}
	removed, err := l.liveDataFiles(ctx, cur, r.Removed)
	if err != nil {
		return Committed{}, fmt.Errorf("table %s: %w", l.Identifier(r.DataSource), err)
	}
	added, err := l.dataFiles(t, r.Files)
	if err != nil {
		return Committed{}, fmt.Errorf("table %s: %w", l.Identifier(r.DataSource), err)
	}
	props := iceberg.Properties{SummaryCompaction: r.Name}
	if cur.Summary != nil {
		for _, k := range []string{SummaryOffsets, SummaryTopic} {
			if v, ok := cur.Summary.Properties[k]; ok {
				props[k] = v
			}
		}
	}
	txn := t.NewTransaction()
	if err := txn.ReplaceDataFilesWithDataFiles(ctx, removed, added, props); err != nil {
		return Committed{}, fmt.Errorf("table %s: replace: %w", l.Identifier(r.DataSource), err)
	}
	nt, err := txn.Commit(ctx)
	if err != nil {
		return Committed{}, fmt.Errorf("table %s: replace: %w", l.Identifier(r.DataSource), err)
	}
	c := Committed{MetadataLocation: cat.committed, Snapshots: len(nt.Metadata().Snapshots())}
	if s := nt.CurrentSnapshot(); s != nil {
		c.SnapshotID = s.SnapshotID
	}
	return c, nil
}

// liveDataFiles returns the live data files of snapshot s at uris, each
// exactly once, or ErrNotInTable naming the first that is not.
func (l *Lake) liveDataFiles(ctx context.Context, s *table.Snapshot, uris []string) ([]iceberg.DataFile, error) {
	want := make(map[string]bool, len(uris))
	for _, u := range uris {
		want[u] = true
	}
	fs := newStoreIO(ctx, l.deep)
	manifests, err := s.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("read manifest list %s: %w", s.ManifestList, err)
	}
	found := map[string]iceberg.DataFile{}
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		for _, e := range entries {
			if df := e.DataFile(); want[df.FilePath()] {
				found[df.FilePath()] = df
			}
		}
	}
	out := make([]iceberg.DataFile, 0, len(uris))
	for _, u := range uris {
		df, ok := found[u]
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNotInTable, u)
		}
		out = append(out, df)
	}
	return out, nil
}

// dataFiles makes table entries of written files.
func (l *Lake) dataFiles(t *table.Table, files []File) ([]iceberg.DataFile, error) {
	out := make([]iceberg.DataFile, 0, len(files))
	for _, f := range files {
		df, err := table.DataFileFromMetadata(table.DataFileArgs{
			Schema: t.Schema(), Spec: t.Spec(), Format: iceberg.ParquetFile, Metadata: f.Footer.meta,
			FilePath: f.URI, FileSize: f.Footer.size, Content: iceberg.EntryContentData,
			Properties: t.Properties(), FormatVersion: t.Metadata().Version(),
		})
		if err != nil {
			return nil, fmt.Errorf("data file %s: %w", f.URI, err)
		}
		out = append(out, df)
	}
	return out, nil
}
