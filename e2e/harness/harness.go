// Package harness holds what the end-to-end test packages (e2e/process,
// e2e/chaos) and the benchmark ask of a running supervisor through the
// Temporal client: where its groups are reading, and which activities the
// server sees started on which worker; how they start, query and stop a
// datasource's compaction (compaction.go); the autoscaler the ramp
// tests share, with a poll for its effects (autoscale.go); and the
// environment of a worker process (workerenv.go).
package harness

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"handoff/internal/domain"
	"handoff/workflows"
)

// GroupPositions asks every group of spec's supervisor for the next offset
// it reads, and merges them, raised to where a running stream's heartbeat
// says it read: a stream that read nothing but transaction markers since
// it started moves on without returning to its group, as the supervisor's
// watch sees (activities/watch.go).
func GroupPositions(ctx context.Context, c client.Client, spec domain.Spec) (domain.Offsets, error) {
	pos := domain.Offsets{}
	for g := range spec.IOConfig.TaskCount {
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := c.QueryWorkflow(qctx, workflows.TaskGroupWorkflowID(spec.ID, g), "", workflows.QueryStatus)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("group %d: %w", g, err)
		}
		var st workflows.TaskGroupStatus
		err = v.Get(&st)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("group %d: %w", g, err)
		}
		for p, o := range st.Position {
			pos[p] = o
		}
		beats, err := heartbeatOffsets(ctx, c, workflows.TaskGroupWorkflowID(spec.ID, g))
		if err != nil {
			return nil, fmt.Errorf("group %d: %w", g, err)
		}
		for p, o := range beats {
			if _, ok := pos[p]; ok {
				pos[p] = max(pos[p], o)
			}
		}
	}
	return pos, nil
}

// StreamOffsets merges the offsets the groups' running streams last
// heartbeat, from the server alone: unlike GroupPositions it asks no
// worker, so it answers at once even while a dead worker's sticky queue
// holds the groups' queries (up to the sticky timeout, seconds).
func StreamOffsets(ctx context.Context, c client.Client, spec domain.Spec) (domain.Offsets, error) {
	out := domain.Offsets{}
	for g := range spec.IOConfig.TaskCount {
		beats, err := heartbeatOffsets(ctx, c, workflows.TaskGroupWorkflowID(spec.ID, g))
		if err != nil {
			return nil, fmt.Errorf("group %d: %w", g, err)
		}
		for p, o := range beats {
			out[p] = max(out[p], o)
		}
	}
	return out, nil
}

// heartbeatOffsets merges the offsets the workflow's pending activities
// last heartbeat.
func heartbeatOffsets(ctx context.Context, c client.Client, workflowID string) (domain.Offsets, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(dctx, workflowID, "")
	if err != nil {
		return nil, err
	}
	out := domain.Offsets{}
	for _, pa := range d.GetPendingActivities() {
		var beat struct {
			Offsets domain.Offsets `json:"offsets"`
		}
		if pa.GetHeartbeatDetails() == nil || converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &beat) != nil {
			continue
		}
		for p, o := range beat.Offsets {
			out[p] = max(out[p], o)
		}
	}
	return out, nil
}

// StartedActivity is an activity the server sees as started on a worker.
type StartedActivity struct {
	Workflow, RunID, ID, Type string
	Attempt                   int32
	Worker                    string // the worker identity, pid@host@
}

// StartedActivities asks the server which activities of spec's supervisor,
// its groups and its datasource's compaction workflow are started, and on
// which worker. A workflow it cannot
// describe (not started yet, or gone) is left out.
func StartedActivities(ctx context.Context, c client.Client, spec domain.Spec) []StartedActivity {
	ids := []string{workflows.SupervisorWorkflowID(spec.ID), workflows.CompactionWorkflowID(spec.DataSchema.DataSource)}
	for g := range spec.IOConfig.TaskCount {
		ids = append(ids, workflows.TaskGroupWorkflowID(spec.ID, g))
	}
	var out []StartedActivity
	for _, id := range ids {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		d, err := c.DescribeWorkflowExecution(dctx, id, "")
		cancel()
		if err != nil {
			continue
		}
		for _, pa := range d.GetPendingActivities() {
			if pa.GetState() != enums.PENDING_ACTIVITY_STATE_STARTED {
				continue
			}
			out = append(out, StartedActivity{
				Workflow: id, RunID: d.GetWorkflowExecutionInfo().GetExecution().GetRunId(),
				ID: pa.GetActivityId(), Type: pa.GetActivityType().GetName(),
				Attempt: pa.GetAttempt(), Worker: pa.GetLastWorkerIdentity(),
			})
		}
	}
	return out
}
