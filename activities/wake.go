package activities

import (
	"context"
	"errors"

	"handoff/internal/protocol"
)

// WakeConsume asks a running ConsumeStream to return now. Task groups run
// it as a local activity: a marker in their history, no activity task.
func (a *Activities) WakeConsume(ctx context.Context, in protocol.WakeConsumeInput) error {
	if a.Wakeups == nil {
		return errors.New("this worker delivers no wakes (no wakeup hub)")
	}
	return a.Wakeups.Wake(ctx, in.Key)
}
