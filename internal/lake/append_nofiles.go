package lake

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// A sequence can move the offsets without adding a row: it read only
// transaction markers, records of aborted transactions, or records all
// thrown away. Its publish still commits a snapshot, adding no data file,
// whose summary carries the moved offsets: the current snapshot's
// handoff.offsets must always equal datasource_offsets. iceberg-go's
// AddDataFiles makes no snapshot without files, so the snapshot is built
// here as Iceberg's own fast append would build it: a manifest list of its
// own listing the parent's manifests, the parent's totals, nothing added.

// Totals a snapshot summary carries over from its parent.
var summaryTotals = []string{
	"total-records", "total-data-files", "total-delete-files", "total-files-size",
	"total-position-deletes", "total-equality-deletes",
}

// commitNoFiles commits the offsets-only snapshot of an Append with no
// files, on t as cat's transaction sees it.
func (l *Lake) commitNoFiles(ctx context.Context, cat *txCatalog, t *table.Table, a Append) (Committed, error) {
	meta := t.Metadata()
	if v := meta.Version(); v != 1 && v != 2 {
		return Committed{}, fmt.Errorf("table %s: format v%d: an offsets-only snapshot is written for v1 and v2 tables", l.Identifier(a.DataSource), v)
	}
	fs := newStoreIO(ctx, l.deep)
	parent := meta.CurrentSnapshot()
	var manifests []iceberg.ManifestFile
	var parentID *int64
	props := iceberg.Properties{}
	if parent != nil {
		m, err := parent.Manifests(fs)
		if err != nil {
			return Committed{}, fmt.Errorf("table %s: manifests of snapshot %d: %w", l.Identifier(a.DataSource), parent.SnapshotID, err)
		}
		manifests = m
		id := parent.SnapshotID
		parentID = &id
		if parent.Summary != nil {
			for _, k := range summaryTotals {
				if v, ok := parent.Summary.Properties[k]; ok {
					props[k] = v
				}
			}
		}
	}
	for k, v := range a.Summary {
		props[k] = v
	}
	props["added-data-files"], props["added-records"], props["added-files-size"] = "0", "0", "0"
	props["changed-partition-count"] = "0"

	id, err := newSnapshotID()
	if err != nil {
		return Committed{}, err
	}
	seq := meta.LastSequenceNumber() + 1
	list := fmt.Sprintf("%s/metadata/snap-%d-0-%s.avro", strings.TrimSuffix(meta.Location(), "/"), id, uuid.New())
	var buf bytes.Buffer
	if err := iceberg.WriteManifestList(meta.Version(), &buf, id, parentID, &seq, 0, manifests); err != nil {
		return Committed{}, fmt.Errorf("table %s: manifest list: %w", l.Identifier(a.DataSource), err)
	}
	if err := fs.WriteFile(list, buf.Bytes()); err != nil {
		return Committed{}, fmt.Errorf("table %s: write manifest list %s: %w", l.Identifier(a.DataSource), list, err)
	}
	schemaID := meta.CurrentSchema().ID
	snap := table.Snapshot{
		SnapshotID: id, ParentSnapshotID: parentID, SequenceNumber: seq,
		TimestampMs: time.Now().UnixMilli(), ManifestList: list, SchemaID: &schemaID,
		Summary: &table.Summary{Operation: table.OpAppend, Properties: props},
	}
	updates := []table.Update{
		table.NewAddSnapshotUpdate(&snap),
		table.NewSetSnapshotRefUpdate(table.MainBranch, id, table.BranchRef, -1, -1, -1),
	}
	reqs := []table.Requirement{table.AssertRefSnapshotID(table.MainBranch, parentID)}
	nm, loc, err := cat.CommitTable(ctx, l.ident(a.DataSource), reqs, updates)
	if err != nil {
		return Committed{}, fmt.Errorf("table %s: offsets-only snapshot: %w", l.Identifier(a.DataSource), err)
	}
	return Committed{MetadataLocation: loc, SnapshotID: id, Snapshots: len(nm.Snapshots())}, nil
}

// newSnapshotID is a random positive snapshot id, as Iceberg's are.
func newSnapshotID() (int64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("snapshot id: %w", err)
	}
	id := int64(binary.BigEndian.Uint64(b[:]) >> 1)
	if id == 0 {
		id = 1
	}
	return id, nil
}
