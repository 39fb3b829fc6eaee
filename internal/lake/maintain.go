package lake

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
)

// maintainEvery is how many commits of a datasource, in one worker, go
// between maintenance passes: expiry is cheap when nothing is due, the
// sweep lists the metadata directory.
const maintainEvery = 50

// MaintainIfDue runs Maintain on every maintainEvery-th commit of ds made
// through this Lake.
func (l *Lake) MaintainIfDue(ctx context.Context, ds string) error {
	l.mu.Lock()
	if l.commits == nil {
		l.commits = map[string]int{}
	}
	l.commits[ds]++
	due := l.commits[ds] >= maintainEvery
	if due {
		l.commits[ds] = 0
	}
	l.mu.Unlock()
	if !due {
		return nil
	}
	_, err := l.Maintain(ctx, ds)
	return err
}

// Maintenance is what one pass did.
type Maintenance struct {
	ExpiredSnapshots int
	DeletedFiles     int
}

// Maintain expires the snapshots the retention lets go (older than
// MaxSnapshotAge, beyond the last MinSnapshots), then deletes every file
// in the table's metadata directory that the current metadata does not
// reference: manifests and manifest lists of expired snapshots, metadata
// files past the log, and what publishes that failed before their commit
// left. Both steps hold the datasource's lock, under which every metadata
// write happens, so no file of a commit in flight is taken for an orphan.
// Data files are not touched: segments retire through the segments table.
func (l *Lake) Maintain(ctx context.Context, ds string) (Maintenance, error) {
	var m Maintenance
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		if err := lockDataSource(ctx, tx, ds); err != nil {
			return err
		}
		cat := &txCatalog{l: l, tx: tx, ds: ds}
		t, err := cat.load(ctx)
		if err != nil || t == nil {
			return err
		}
		if !l.expiryDue(t.Metadata(), time.Now()) {
			return nil
		}
		before := len(t.Metadata().Snapshots())
		txn := t.NewTransaction()
		if err := txn.ExpireSnapshots(table.WithOlderThan(l.cfg.MaxSnapshotAge), table.WithRetainLast(l.cfg.MinSnapshots),
			table.WithPostCommit(false)); err != nil {
			return fmt.Errorf("table %s: expire snapshots: %w", l.Identifier(ds), err)
		}
		nt, err := txn.Commit(ctx)
		if err != nil {
			return fmt.Errorf("table %s: expire snapshots: %w", l.Identifier(ds), err)
		}
		m.ExpiredSnapshots = before - len(nt.Metadata().Snapshots())
		return nil
	})
	if err != nil {
		return m, err
	}
	err = pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		if err := lockDataSource(ctx, tx, ds); err != nil {
			return err
		}
		n, err := l.sweep(ctx, tx, ds)
		m.DeletedFiles = n
		return err
	})
	return m, err
}

// expiryDue: some snapshot beyond the last MinSnapshots is older than
// MaxSnapshotAge.
func (l *Lake) expiryDue(meta table.Metadata, now time.Time) bool {
	snaps := meta.Snapshots()
	if len(snaps) <= l.cfg.MinSnapshots {
		return false
	}
	oldest := snaps[0].TimestampMs
	for _, s := range snaps {
		oldest = min(oldest, s.TimestampMs)
	}
	return time.UnixMilli(oldest).Before(now.Add(-l.cfg.MaxSnapshotAge))
}

// sweep deletes the files under the table's metadata directory that the
// current metadata does not reference; tx holds the datasource's lock.
func (l *Lake) sweep(ctx context.Context, tx pgx.Tx, ds string) (int, error) {
	loc, err := l.pointer(ctx, tx, ds, true)
	if err != nil || loc == "" {
		return 0, err
	}
	live, err := l.referenced(ctx, loc)
	if err != nil {
		return 0, err
	}
	keys, err := l.deep.List(ctx, ds+"/metadata/")
	if err != nil {
		return 0, fmt.Errorf("list metadata of %s: %w", l.Identifier(ds), err)
	}
	deleted := 0
	for _, k := range keys {
		if live[l.deep.URI(k)] {
			continue
		}
		if err := l.deep.Delete(ctx, k); err != nil {
			return deleted, fmt.Errorf("delete %s: %w", k, err)
		}
		deleted++
	}
	return deleted, nil
}

// referenced is every metadata-directory file the metadata at loc needs:
// itself, the metadata log, and each snapshot's manifest list and
// manifests.
func (l *Lake) referenced(ctx context.Context, loc string) (map[string]bool, error) {
	meta, err := l.metadata(ctx, loc)
	if err != nil {
		return nil, err
	}
	live := map[string]bool{loc: true}
	for e := range meta.PreviousFiles() {
		live[e.MetadataFile] = true
	}
	fs := newStoreIO(ctx, l.deep)
	for _, s := range meta.Snapshots() {
		if s.ManifestList == "" {
			continue
		}
		live[s.ManifestList] = true
		manifests, err := s.Manifests(fs)
		if err != nil {
			return nil, fmt.Errorf("read manifest list %s: %w", s.ManifestList, err)
		}
		for _, mf := range manifests {
			live[mf.FilePath()] = true
		}
	}
	return live, nil
}
