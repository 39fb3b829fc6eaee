package liveness

import (
	"context"
	"fmt"
	"sync"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"
)

// sweepParallel bounds the descriptions a sweep has in flight.
const sweepParallel = 8

// sweep looks for the dead worker's attempts in every running workflow of
// the namespace its lease did not list. The list misses an attempt the
// server handed to the worker in the moment before the worker wrote it
// down (the poll's answer is the server's record that it started there;
// the list is written when the activity begins): a worker that died or was
// paused in that moment would otherwise keep that attempt until its
// heartbeat timeout. A death costs one description per running workflow;
// a life costs nothing.
func sweep(ctx context.Context, c client.Client, lost Lost, seen map[run]bool, t *Takeover) error {
	runs, err := running(ctx, c, lost.Namespace, seen)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(sweepParallel)
	for _, r := range runs {
		g.Go(func() error {
			failed, skipped, err := failOn(gctx, c, lost, r.wf, r.run)
			mu.Lock()
			defer mu.Unlock()
			t.add(failed, skipped)
			t.Swept++
			t.Unlisted += len(failed)
			return err
		})
	}
	return g.Wait()
}

// running lists the namespace's running workflow runs not in seen.
func running(ctx context.Context, c client.Client, namespace string, seen map[run]bool) ([]run, error) {
	var out []run
	var token []byte
	for {
		page, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: namespace, Query: "ExecutionStatus = 'Running'", PageSize: 1000, NextPageToken: token,
		})
		if err != nil {
			return out, fmt.Errorf("list running workflows of %s: %w", namespace, err)
		}
		for _, e := range page.GetExecutions() {
			r := run{e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()}
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
		if token = page.GetNextPageToken(); len(token) == 0 {
			return out, nil
		}
	}
}
