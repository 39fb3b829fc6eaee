// Package lifecycle deletes what no reader can reach any more: the files
// of segments that compaction replaced or retention dropped, once a grace
// period has passed (so readers that planned before finish) and no
// snapshot the datasource's Iceberg table keeps still lists them.
package lifecycle

import (
	"context"
	"fmt"
	"time"

	"handoff/internal/lake"
	"handoff/internal/pgstore"
	"handoff/internal/storage"
)

// Killer deletes unused segments' files.
type Killer struct {
	Store *pgstore.Store
	Deep  storage.Store
	// Tables, when set, are asked which files kept snapshots reference.
	Tables *lake.Lake
	// Staging, when set, is swept of what published sequences left there.
	Staging storage.Store
}

// File is one unused segment's file and what the kill did with it.
type File struct {
	SegmentID string    `json:"segmentId"`
	URI       string    `json:"uri"`
	Bytes     int64     `json:"bytes"`
	UnusedAt  time.Time `json:"unusedAt"`
	// Reason, for a file kept, says why.
	Reason string `json:"reason,omitempty"`
}

// Result is what one kill deleted (or, in a dry run, would delete) and
// what it kept.
type Result struct {
	DataSource string `json:"dataSource"`
	DryRun     bool   `json:"dryRun"`
	// Before is the cut-off: segments unused since before it are killed.
	Before time.Time `json:"before"`
	Killed []File    `json:"killed"`
	Kept   []File    `json:"kept"`
	Bytes  int64     `json:"bytes"`
}

// Kill deletes the files of the datasource's segments unused for longer
// than grace that no kept Iceberg snapshot references, then marks them
// killed; with dryRun it only reports. Files are deleted before their rows
// are marked, so a kill cut short deletes the rest (and, harmlessly, the
// same files again) next time, and a row marked killed never has a file
// left behind.
func (k *Killer) Kill(ctx context.Context, ds string, grace time.Duration, dryRun bool) (Result, error) {
	res := Result{DataSource: ds, DryRun: dryRun, Before: time.Now().Add(-grace).UTC(), Killed: []File{}, Kept: []File{}}
	cands, err := k.Store.UnusedBefore(ctx, ds, res.Before)
	if err != nil || len(cands) == 0 {
		return res, err
	}
	refs := map[string]bool{}
	if k.Tables != nil {
		if refs, err = k.Tables.ReferencedDataFiles(ctx, ds); err != nil {
			return res, fmt.Errorf("kill %s: %w", ds, err)
		}
	}
	var ids []string
	for _, c := range cands {
		f := File{SegmentID: c.ID, URI: c.URI, Bytes: c.Bytes, UnusedAt: c.UnusedAt}
		if refs[c.URI] {
			f.Reason = "a snapshot the Iceberg table keeps lists it; it goes once that snapshot expires"
			res.Kept = append(res.Kept, f)
			continue
		}
		if !dryRun {
			key, err := storage.KeyOf(k.Deep, c.URI)
			if err != nil {
				return res, fmt.Errorf("kill %s: segment %s: %w", ds, c.ID, err)
			}
			if err := k.Deep.Delete(ctx, key); err != nil {
				return res, fmt.Errorf("kill %s: segment %s: %w", ds, c.ID, err)
			}
		}
		ids = append(ids, c.ID)
		res.Killed = append(res.Killed, f)
		res.Bytes += c.Bytes
	}
	if dryRun || len(ids) == 0 {
		return res, nil
	}
	if err := k.Store.MarkKilled(ctx, ds, ids); err != nil {
		return res, fmt.Errorf("kill %s: %w", ds, err)
	}
	return res, nil
}
