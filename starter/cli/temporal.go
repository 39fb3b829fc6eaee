package cli

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"handoff/workflows"
)

// temporal dials Temporal on first use, so commands that need no server
// (validate, migrate) never connect.
func (a *app) temporal(ctx context.Context) (client.Client, error) {
	if a.temporalClient != nil {
		return a.temporalClient, nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.dialTimeout)
	defer cancel()
	c, err := a.dial(ctx, client.Options{
		HostPort:  a.address,
		Namespace: a.namespace,
		Logger:    tlog.NewStructuredLogger(a.log),
	})
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s (namespace %q; set --address or TEMPORAL_ADDRESS): %w", a.address, a.namespace, err)
	}
	a.temporalClient = c
	return c, nil
}

func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

func supervisorNotFound(id string) error {
	return notFoundErrorf("no supervisor %q (workflow %s): start it with `starter start -f spec.json`",
		id, workflows.SupervisorWorkflowID(id))
}

// lastRun describes the latest run of a supervisor's workflow, whatever its
// state; a workflow that never existed is supervisorNotFound.
func lastRun(ctx context.Context, c client.Client, id string) (*client.WorkflowExecutionDescription, error) {
	d, err := c.DescribeWorkflow(ctx, workflows.SupervisorWorkflowID(id), "")
	if isNotFound(err) {
		return nil, supervisorNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("describe workflow %s: %w", workflows.SupervisorWorkflowID(id), err)
	}
	return d, nil
}

// signalSupervisor sends a signal to the running supervisor. When none is
// running it returns the last run's description (nil if there is none) and
// a not-found error saying why.
func signalSupervisor(ctx context.Context, c client.Client, id, signal string, arg any) (*client.WorkflowExecutionDescription, error) {
	wid := workflows.SupervisorWorkflowID(id)
	err := c.SignalWorkflow(ctx, wid, "", signal, arg)
	if err == nil {
		return nil, nil
	}
	if !isNotFound(err) {
		return nil, fmt.Errorf("signal %s to %s: %w", signal, wid, err)
	}
	// NotFound also means "already completed": tell the two apart.
	d, derr := lastRun(ctx, c, id)
	if derr != nil {
		return nil, derr
	}
	if d.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil, fmt.Errorf("signal %s to %s: %w", signal, wid, err)
	}
	return d, notFoundErrorf("supervisor %q is not running (workflow %s %s): start it with `starter start -f spec.json`",
		id, wid, d.Status)
}
