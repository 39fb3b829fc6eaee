package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"handoff/workflows"
)

func supervisorStatus(ctx context.Context, tc client.Client, id string) (workflows.SupervisorStatus, error) {
	var st workflows.SupervisorStatus
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := tc.QueryWorkflow(qctx, workflows.SupervisorWorkflowID(id), "", workflows.QueryStatus)
	if err != nil {
		return st, err
	}
	return st, v.Get(&st)
}

func update[R any](ctx context.Context, tc client.Client, id, name string, arg any) (R, error) {
	var res R
	uctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	h, err := tc.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{
		WorkflowID: workflows.SupervisorWorkflowID(id), UpdateName: name,
		Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(uctx, &res)
	}
	if err != nil {
		return res, fmt.Errorf("%s of supervisor %s: %w", name, id, err)
	}
	return res, nil
}

func checkpoint(ctx context.Context, tc client.Client, id string) (workflows.CheckpointResult, error) {
	return update[workflows.CheckpointResult](ctx, tc, id, workflows.UpdateCheckpoint, workflows.CheckpointSignal{})
}

// stopSupervisor stops gracefully and waits for the supervisor to end.
func stopSupervisor(ctx context.Context, tc client.Client, id string) error {
	if _, err := update[workflows.OperationResult](ctx, tc, id, workflows.UpdateStop, workflows.StopSignal{}); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := tc.GetWorkflow(wctx, workflows.SupervisorWorkflowID(id), "").Get(wctx, nil); err != nil {
		return fmt.Errorf("supervisor %s did not stop cleanly: %w", id, err)
	}
	return nil
}

// countHistory sums the history events of every run of every workflow of
// supervisor id (the supervisor and its groups, across continue-as-new),
// once every run is closed.
func countHistory(ctx context.Context, tc client.Client, id string) (events int64, runs int, err error) {
	var execs []runRef
	// Visibility is eventually consistent: wait until every run is closed.
	for attempt := 0; ; attempt++ {
		var open int
		if execs, open, err = listRuns(ctx, tc, id); err != nil {
			return 0, 0, err
		}
		if open == 0 && len(execs) > 0 {
			break
		}
		if attempt == 100 {
			return 0, 0, fmt.Errorf("workflows of %s: %d of %d runs still open after 20 s", id, open, len(execs))
		}
		time.Sleep(200 * time.Millisecond)
	}
	h, err := countRuns(ctx, tc, execs)
	if err != nil {
		return 0, 0, err
	}
	return h.Total(), h.Runs, nil
}

// runRef is one run of a workflow.
type runRef struct{ workflowID, runID string }

// listRuns lists every run, open or closed, of supervisor id and its
// groups, and how many of them are open.
func listRuns(ctx context.Context, tc client.Client, id string) (runs []runRef, open int, err error) {
	sup := workflows.SupervisorWorkflowID(id)
	query := fmt.Sprintf("WorkflowId = '%s' OR WorkflowId STARTS_WITH '%s/'", sup, sup)
	var token []byte
	for {
		res, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return nil, 0, fmt.Errorf("list workflows of %s: %w", id, err)
		}
		for _, e := range res.Executions {
			if e.CloseTime == nil {
				open++
			}
			runs = append(runs, runRef{e.Execution.WorkflowId, e.Execution.RunId})
		}
		if token = res.NextPageToken; len(token) == 0 {
			return runs, open, nil
		}
	}
}

// countRuns reads the history of each run (of an open run, what it has so
// far) and counts its events.
func countRuns(ctx context.Context, tc client.Client, runs []runRef) (historyCounts, error) {
	h := historyCounts{Runs: len(runs)}
	for _, r := range runs {
		it := tc.GetWorkflowHistory(ctx, r.workflowID, r.runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				return h, fmt.Errorf("history of %s: %w", r.workflowID, err)
			}
			h.add(r.workflowID, e)
		}
	}
	return h, nil
}
