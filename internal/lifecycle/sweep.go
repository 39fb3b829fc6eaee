package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"time"

	"handoff/internal/storage"
)

// MinSweepGrace is the least age of a file the orphan sweep deletes when
// it runs beside ingestion: a publish or a compaction writes its files
// before the transaction that lists them, and an attempt runs at most
// 30 minutes (publish) or 2 hours (compaction) before its commit.
const MinSweepGrace = 3 * time.Hour

// Orphan is a file in the datasource's directory of deep storage that
// nothing lists.
type Orphan struct {
	URI      string    `json:"uri"`
	Bytes    int64     `json:"bytes"`
	Modified time.Time `json:"modified"`
	// Unfinished: a write its writer never finished (a temporary file,
	// an incomplete multipart upload).
	Unfinished bool `json:"unfinished,omitempty"`
	// Staging: a file in staging, of a sequence already published.
	Staging bool `json:"staging,omitempty"`
}

// SweepResult is what one sweep deleted (or, in a dry run, would delete).
type SweepResult struct {
	DataSource string    `json:"dataSource"`
	DryRun     bool      `json:"dryRun"`
	Before     time.Time `json:"before"`
	Deleted    []Orphan  `json:"deleted"`
	Bytes      int64     `json:"bytes"`
}

// Sweep deletes the files under the datasource's directory of deep
// storage, outside the table's metadata directory (which the table's own
// maintenance sweeps), that no segment row lists (used, or unused and not
// yet killed) and no snapshot the Iceberg table keeps lists, and that were
// last modified more than grace ago: the segment files of publishes that
// failed their offset check, of compactions that died before their commit,
// of attempts whose retries wrote them again; and writes that never
// finished (storage.Unfinished), of workers killed in the middle of one;
// and, when the Killer has the staging store, the staging directories of
// published sequences (sweepStaging). grace must be longer than
// any publish or compaction runs before its commit (MinSweepGrace) while
// either may be running.
func (k *Killer) Sweep(ctx context.Context, ds string, grace time.Duration, dryRun bool) (SweepResult, error) {
	res := SweepResult{DataSource: ds, DryRun: dryRun, Before: time.Now().Add(-grace).UTC(), Deleted: []Orphan{}}
	objs, err := k.Deep.ListObjects(ctx, ds+"/")
	if err != nil {
		return res, fmt.Errorf("sweep %s: %w", ds, err)
	}
	// Listed before the rows are read: a file committed in between is in
	// the rows.
	rows, err := k.Store.SegmentURIs(ctx, ds)
	if err != nil {
		return res, fmt.Errorf("sweep %s: %w", ds, err)
	}
	refs := map[string]bool{}
	if k.Tables != nil {
		if refs, err = k.Tables.ReferencedDataFiles(ctx, ds); err != nil {
			return res, fmt.Errorf("sweep %s: %w", ds, err)
		}
	}
	for _, o := range objs {
		uri := k.Deep.URI(o.Key)
		if strings.HasPrefix(o.Key, ds+"/metadata/") || rows[uri] || refs[uri] || !o.Modified.Before(res.Before) {
			continue
		}
		if !dryRun {
			if err := k.Deep.Delete(ctx, o.Key); err != nil {
				return res, fmt.Errorf("sweep %s: %w", ds, err)
			}
		}
		res.Deleted = append(res.Deleted, Orphan{URI: uri, Bytes: o.Size, Modified: o.Modified})
		res.Bytes += o.Size
	}
	if err := k.sweepUnfinished(ctx, ds, dryRun, &res); err != nil {
		return res, err
	}
	return res, k.sweepStaging(ctx, ds, dryRun, &res)
}

// sweepUnfinished deletes the writes to the datasource's directory that
// never finished (their writer was killed mid-write) and began or last
// wrote before the cut-off, when the store can find them.
func (k *Killer) sweepUnfinished(ctx context.Context, ds string, dryRun bool, res *SweepResult) error {
	u, ok := k.Deep.(storage.Unfinished)
	if !ok {
		return nil
	}
	objs, err := u.ListUnfinished(ctx, ds+"/")
	if err != nil {
		return fmt.Errorf("sweep %s: %w", ds, err)
	}
	for _, o := range objs {
		if !o.Modified.Before(res.Before) {
			continue
		}
		if !dryRun {
			if err := u.DeleteUnfinished(ctx, o.Key); err != nil {
				return fmt.Errorf("sweep %s: %w", ds, err)
			}
		}
		res.Deleted = append(res.Deleted, Orphan{URI: k.Deep.URI(o.Key), Bytes: o.Size, Modified: o.Modified, Unfinished: true})
		res.Bytes += o.Size
	}
	return nil
}
