package lake

import (
	"context"
	"fmt"
	"maps"
	"os"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
)

// Footer is what a written segment file says about itself (row count,
// column statistics), read once from the local copy so the table entry
// costs no read of deep storage.
type Footer struct {
	meta *metadata.FileMetaData
	size int64
}

// ReadFooter reads the Parquet footer of the file at path.
func ReadFooter(path string) (Footer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Footer{}, err
	}
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return Footer{}, fmt.Errorf("read footer of %s: %w", path, err)
	}
	defer r.Close()
	return Footer{meta: r.MetaData(), size: st.Size()}, nil
}

// File is one segment file to register: where deep storage has it and its
// footer.
type File struct {
	URI    string
	Footer Footer
}

// Append is one publication's files and what its snapshot summary says
// about them (supervisor, sequence, offsets).
type Append struct {
	DataSource string
	Files      []File
	Summary    map[string]string
}

// Committed says what CommitInTx swapped in.
type Committed struct {
	MetadataLocation string
	SnapshotID       int64
	Snapshots        int // snapshots the table now keeps
}

// CommitInTx registers the files of a as one append snapshot of the
// datasource's table inside tx, which must hold the datasource's advisory
// lock: iceberg-go writes the manifest, the manifest list and the new
// metadata file, and the table's metadata_location is swapped by
// compare-and-swap in tx. The table must exist (Ensure).
func (l *Lake) CommitInTx(ctx context.Context, tx pgx.Tx, a Append) (Committed, error) {
	cat := &txCatalog{l: l, tx: tx, ds: a.DataSource}
	t, err := cat.load(ctx)
	if err != nil {
		return Committed{}, err
	}
	if t == nil {
		return Committed{}, fmt.Errorf("table %s does not exist", l.Identifier(a.DataSource))
	}
	if len(a.Files) == 0 {
		return l.commitNoFiles(ctx, cat, t, a)
	}
	files, err := l.dataFiles(t, a.Files)
	if err != nil {
		return Committed{}, fmt.Errorf("table %s: %w", l.Identifier(a.DataSource), err)
	}
	txn := t.NewTransaction()
	props := iceberg.Properties{}
	maps.Copy(props, a.Summary)
	if err := txn.AddDataFiles(ctx, files, props, table.WithoutDuplicateCheck()); err != nil {
		return Committed{}, fmt.Errorf("table %s: append: %w", l.Identifier(a.DataSource), err)
	}
	nt, err := txn.Commit(ctx)
	if err != nil {
		return Committed{}, fmt.Errorf("table %s: append: %w", l.Identifier(a.DataSource), err)
	}
	c := Committed{MetadataLocation: cat.committed, Snapshots: len(nt.Metadata().Snapshots())}
	if s := nt.CurrentSnapshot(); s != nil {
		c.SnapshotID = s.SnapshotID
	}
	return c, nil
}
