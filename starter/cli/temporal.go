package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"handoff/workflows"
)

// updateTimeout bounds waiting for an update's answer: without a worker the
// server would hold it indefinitely.
const updateTimeout = time.Minute

// temporal dials Temporal on first use, so commands that need no server
// (validate, migrate) never connect.
func (a *app) temporal(ctx context.Context) (client.Client, error) {
	if a.temporalClient != nil {
		return a.temporalClient, nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.dialTimeout)
	defer cancel()
	opts := client.Options{
		HostPort:  a.address,
		Namespace: a.namespace,
		Logger:    tlog.NewStructuredLogger(a.log),
	}
	if err := a.temporalSecurity(&opts); err != nil {
		return nil, err
	}
	c, err := a.dial(ctx, opts)
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

// supervisorNotFound says the supervisor does not exist and, to catch typos,
// names the running ones when the server lists any.
func supervisorNotFound(ctx context.Context, c client.Client, id string) error {
	msg := fmt.Sprintf("no supervisor %q (workflow %s): start it with `starter start -f spec.json`",
		id, workflows.SupervisorWorkflowID(id))
	if c != nil {
		ctx, cancel := context.WithTimeout(ctx, listQueryTimeout)
		defer cancel()
		if infos, err := listSupervisors(ctx, c); err == nil && len(infos) > 0 {
			ids := make([]string, len(infos))
			for i, info := range infos {
				ids[i] = supervisorIDOf(info.GetExecution().GetWorkflowId())
			}
			msg += "; running supervisors: " + strings.Join(ids, ", ")
		}
	}
	return notFoundErrorf("%s", msg)
}

// lastRun describes the latest run of a supervisor's workflow, whatever its
// state; a workflow that never existed is supervisorNotFound.
func lastRun(ctx context.Context, c client.Client, id string) (*client.WorkflowExecutionDescription, error) {
	d, err := c.DescribeWorkflow(ctx, workflows.SupervisorWorkflowID(id), "")
	if isNotFound(err) {
		return nil, supervisorNotFound(ctx, c, id)
	}
	if err != nil {
		return nil, fmt.Errorf("describe workflow %s: %w", workflows.SupervisorWorkflowID(id), err)
	}
	return d, nil
}

// notRunning explains a NotFound answer from the running supervisor, which
// also means "already completed". It returns the last run's description
// (nil if there is none) and a not-found error saying why.
func notRunning(ctx context.Context, c client.Client, id string, cause error) (*client.WorkflowExecutionDescription, error) {
	wid := workflows.SupervisorWorkflowID(id)
	d, err := lastRun(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if d.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil, cause // NotFound for another reason: report it as is
	}
	return d, notFoundErrorf("supervisor %q is not running (workflow %s %s): start it with `starter start -f spec.json`",
		id, wid, d.Status)
}

// updateSupervisor sends update name (with arg, unless nil) to the running
// supervisor and decodes its answer into result. A refused update returns
// the workflow's reason. When the supervisor is not running it returns the
// last run's description (nil if there is none) and a not-found error.
func updateSupervisor(ctx context.Context, c client.Client, id, name string, arg, result any) (*client.WorkflowExecutionDescription, error) {
	wid := workflows.SupervisorWorkflowID(id)
	opts := client.UpdateWorkflowOptions{
		WorkflowID:   wid,
		UpdateName:   name,
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
	if arg != nil {
		opts.Args = []any{arg}
	}
	uctx, cancel := context.WithTimeout(ctx, updateTimeout)
	defer cancel()
	h, err := c.UpdateWorkflow(uctx, opts)
	if err == nil {
		err = h.Get(uctx, result)
	}
	var refused *temporal.ApplicationError
	var timeout *client.WorkflowUpdateServiceTimeoutOrCanceledError
	switch {
	case err == nil:
		return nil, nil
	case isNotFound(err):
		return notRunning(ctx, c, id, fmt.Errorf("update %s of %s: %w", name, wid, err))
	case errors.As(err, &refused):
		// The validator's or handler's own words, without the SDK's decoration.
		return nil, fmt.Errorf("supervisor %s refused %s: %s", id, name, refused.Message())
	case ctx.Err() == nil && (errors.As(err, &timeout) || errors.Is(err, context.DeadlineExceeded)):
		return nil, noAnswer(ctx, c, workflows.TaskQueue, "update "+name, wid, updateTimeout, err)
	}
	return nil, fmt.Errorf("update %s of %s: %w", name, wid, err)
}
