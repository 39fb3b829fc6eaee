package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"handoff/internal/storage"
)

// sweepStaging deletes what the datasource's published sequences left in
// staging: a publish removes its sequence's directory after its commit,
// and a worker killed between the two leaves it behind (the retried
// publish finds the sequence published and would remove it, but a
// supervisor that moved on never retries). A directory goes once every
// file in it, unfinished writes included, was last modified before the
// cut-off. Directories of sequences not published are open (or will be
// published or read again after a reset) and stay.
func (k *Killer) sweepStaging(ctx context.Context, ds string, dryRun bool, res *SweepResult) error {
	if k.Staging == nil {
		return nil
	}
	sups, err := k.Store.SupervisorsOf(ctx, ds)
	if err != nil {
		return fmt.Errorf("sweep staging of %s: %w", ds, err)
	}
	for _, sup := range sups {
		if err := k.sweepSupervisorStaging(ctx, sup, dryRun, res); err != nil {
			return fmt.Errorf("sweep staging of %s: %w", ds, err)
		}
	}
	return nil
}

func (k *Killer) sweepSupervisorStaging(ctx context.Context, sup string, dryRun bool, res *SweepResult) error {
	objs, err := k.Staging.ListObjects(ctx, sup+"/")
	if err != nil {
		return err
	}
	if u, ok := k.Staging.(storage.Unfinished); ok {
		unfinished, err := u.ListUnfinished(ctx, sup+"/")
		if err != nil {
			return err
		}
		objs = append(objs, unfinished...)
	}
	// The sequence directories: <supervisor>/<sequence>/<chunk>.
	dirs := map[string][]storage.Object{}
	for _, o := range objs {
		rest := strings.TrimPrefix(o.Key, sup+"/")
		seq, _, ok := strings.Cut(rest, "/")
		if ok && seq != "" {
			dirs[seq] = append(dirs[seq], o)
		}
	}
	names := make([]string, 0, len(dirs))
	for seq := range dirs {
		names = append(names, seq)
	}
	slices.Sort(names)
	published, err := k.Store.Published(ctx, names)
	if err != nil {
		return err
	}
	for _, seq := range names {
		files := dirs[seq]
		if !published[seq] || !allBefore(files, res.Before) {
			continue
		}
		if !dryRun {
			if err := k.Staging.DeleteDir(ctx, sup+"/"+seq+"/"); err != nil {
				return err
			}
		}
		for _, o := range files {
			res.Deleted = append(res.Deleted, Orphan{URI: k.Staging.URI(o.Key), Bytes: o.Size, Modified: o.Modified, Staging: true})
			res.Bytes += o.Size
		}
	}
	return nil
}

func allBefore(objs []storage.Object, t time.Time) bool {
	for _, o := range objs {
		if !o.Modified.Before(t) {
			return false
		}
	}
	return true
}
