package harness

import (
	"context"
	"encoding/json"

	"go.temporal.io/sdk/client"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/workflows"
)

// StartCompaction does what `starter compaction set` does with cfg (its
// defaults filled in): records it as the datasource's next config version
// and starts (or wakes) the workflow compaction/<ds> on taskQueue.
func StartCompaction(ctx context.Context, store *pgstore.Store, c client.Client, taskQueue string, cfg domain.CompactionConfig) error {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	if _, _, err := store.SetCompactionConfig(ctx, cfg.DataSource, raw); err != nil {
		return err
	}
	wid := workflows.CompactionWorkflowID(cfg.DataSource)
	_, err = c.SignalWithStartWorkflow(ctx, wid, workflows.SignalCompactionWake, nil,
		client.StartWorkflowOptions{ID: wid, TaskQueue: taskQueue},
		workflows.CompactionWorkflowName, workflows.CompactionInput{DataSource: cfg.DataSource})
	return err
}

// CompactionStatus queries the datasource's compaction workflow.
func CompactionStatus(ctx context.Context, c client.Client, ds string) (workflows.CompactionStatus, error) {
	var st workflows.CompactionStatus
	v, err := c.QueryWorkflow(ctx, workflows.CompactionWorkflowID(ds), "", workflows.QueryStatus)
	if err != nil {
		return st, err
	}
	return st, v.Get(&st)
}

// StopCompaction signals the workflow to stop and waits until it has
// completed (its running compactions finish first).
func StopCompaction(ctx context.Context, c client.Client, ds string) error {
	wid := workflows.CompactionWorkflowID(ds)
	if err := c.SignalWorkflow(ctx, wid, "", workflows.SignalStop, workflows.StopSignal{}); err != nil {
		return err
	}
	return c.GetWorkflow(ctx, wid, "").Get(ctx, nil)
}
