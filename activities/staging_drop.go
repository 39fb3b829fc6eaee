package activities

import (
	"context"
	"fmt"
)

// dropStaging deletes everything supervisorID has in staging. It runs when
// the supervisor lays its groups out afresh (first start, or after
// draining them for a new spec or taskCount): every group has finished,
// what was published has its segments, and the rest is read again from
// the committed offsets. What staging still holds then belongs to no
// group: chunks a killed worker staged after its last heartbeat in a
// sequence its group never published (a scale-in removed the group), or
// the directories of sequences whose publish was killed before it removed
// them.
func (a *Activities) dropStaging(ctx context.Context, supervisorID string) error {
	if a.Staging == nil {
		return nil
	}
	if err := a.Staging.DeleteDir(ctx, supervisorID+"/"); err != nil {
		return fmt.Errorf("drop the staging of supervisor %s: %w", supervisorID, err)
	}
	return nil
}
