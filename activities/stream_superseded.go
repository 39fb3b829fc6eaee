package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
)

// superseded says why the stream's attempt is no longer current, if the
// server said so: the SDK cancels an activity whose heartbeat the server
// refused as unknown (the attempt was taken over, timed out, or its
// workflow ended) with that refusal as the context's cause. Such an
// attempt stages nothing more: no heartbeat or result of it will list a
// chunk, so it would lie in staging until the sweep; the current attempt
// reads the same records again. A cancellation its group asked for is
// not this: the group waits for the result and what was read is staged.
func superseded(ctx context.Context) error {
	var nf *serviceerror.NotFound
	if ctx.Err() == nil || !errors.As(context.Cause(ctx), &nf) {
		return nil
	}
	return fmt.Errorf("this attempt is no longer current (%v): its open chunk is dropped, the current attempt reads it again", nf)
}
