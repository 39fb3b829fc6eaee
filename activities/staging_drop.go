package activities

import (
	"context"
	"fmt"
	"strings"
)

// dropStaging deletes every sequence directory of supervisorID in staging.
// It runs when the supervisor lays its groups out afresh (first start, or
// after draining them for a new spec or taskCount): every group has
// finished, what was published has its segments, and the rest is read
// again from the committed offsets. What staging still holds then belongs
// to no group: chunks a killed worker staged after its last heartbeat in a
// sequence its group never published (a scale-in removed the group), or
// the directories of sequences whose publish was killed before it removed
// them.
func (a *Activities) dropStaging(ctx context.Context, supervisorID string) error {
	if a.Staging == nil {
		return nil
	}
	prefix := supervisorID + "/"
	objs, err := a.Staging.ListObjects(ctx, prefix)
	if err != nil {
		return fmt.Errorf("list staging of %s: %w", supervisorID, err)
	}
	dirs := map[string]bool{}
	for _, o := range objs {
		if seq, _, ok := strings.Cut(strings.TrimPrefix(o.Key, prefix), "/"); ok && seq != "" {
			dirs[seq] = true
		}
	}
	for seq := range dirs {
		if err := a.Staging.DeleteDir(ctx, stagingDir(supervisorID, seq)); err != nil {
			return fmt.Errorf("drop staging of %s: %w", seq, err)
		}
	}
	if len(dirs) > 0 && a.Log != nil {
		a.Log.Info("dropped the staging of sequences no group holds", "supervisor", supervisorID, "sequences", len(dirs))
	}
	return nil
}
