package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"handoff/internal/protocol"
)

// RecordSpec appends a supervisor's accepted spec to its history in
// Postgres, unless it equals the latest recorded one.
func (a *Activities) RecordSpec(ctx context.Context, in protocol.RecordSpecInput) (protocol.RecordSpecResult, error) {
	spec, err := json.Marshal(in.Spec)
	if err != nil {
		return protocol.RecordSpecResult{}, fmt.Errorf("encode spec of supervisor %q: %w", in.SupervisorID, err)
	}
	recorded, version, err := a.Store.RecordSpec(ctx, in.SupervisorID, spec)
	if err != nil {
		return protocol.RecordSpecResult{}, err
	}
	return protocol.RecordSpecResult{Recorded: recorded, Version: version}, nil
}
