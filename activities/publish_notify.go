package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/protocol"
)

// notify sends a committed sequence's notice (protocol.PublishNotify) with
// the segments and rows it published. A publish retried after its commit
// sends it again: the supervisor takes a repeated notice as the same fact.
func (a *Activities) notify(ctx context.Context, log *slog.Logger, n *protocol.PublishNotify, segments int, rows int64) error {
	if n == nil {
		return nil
	}
	payload, err := noticeWith(n.Notice, segments, rows)
	if err != nil {
		msg := fmt.Sprintf("the notice to send %s after the publish is not a JSON object: %v", n.WorkflowID, err)
		return temporal.NewNonRetryableApplicationError(msg, "BadPublishNotice", err)
	}
	err = a.Temporal.SignalWorkflow(ctx, n.WorkflowID, "", n.Signal, payload)
	var gone *serviceerror.NotFound
	if errors.As(err, &gone) {
		log.Warn("the workflow to tell of the publish does not run: not told", "workflow", n.WorkflowID, "signal", n.Signal)
		return nil
	}
	if err != nil {
		return fmt.Errorf("tell %s of the publish (%s): %w", n.WorkflowID, n.Signal, err)
	}
	return nil
}

// noticeWith is the notice with its "segments" and "rows" members set.
func noticeWith(notice json.RawMessage, segments int, rows int64) (map[string]json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(notice, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("null")
	}
	m["segments"] = json.RawMessage(fmt.Sprint(segments))
	m["rows"] = json.RawMessage(fmt.Sprint(rows))
	return m, nil
}
