package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/testenv"
)

// A query with no answer names the cause: no worker polling the task
// queue, or workers that poll and are busy.
func TestNoAnswerTellsAMissingWorkerFromABusyOne(t *testing.T) {
	hostPort := testenv.Temporal(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := client.Dial(client.Options{HostPort: hostPort, Logger: log.NewStructuredLogger(quiet)})
	require.NoError(t, err)
	defer c.Close()
	queue := "no-answer-" + time.Now().Format("150405.000000")
	ctx := context.Background()
	timedOut := context.DeadlineExceeded

	err = noAnswer(ctx, c, queue, "query status", "supervisor/x", 10*time.Second, timedOut)
	require.ErrorContains(t, err, `query status of supervisor/x: no answer within 10s: no worker is polling task queue "`+queue+`" (last poll: never)`)
	require.True(t, errors.Is(err, context.DeadlineExceeded))

	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(func(workflow.Context) error { return nil }, workflow.RegisterOptions{Name: "noop"})
	require.NoError(t, w.Start())
	defer w.Stop()
	require.Eventually(t, func() bool {
		resp, err := c.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		return err == nil && len(resp.GetPollers()) > 0
	}, 20*time.Second, 100*time.Millisecond)

	err = noAnswer(ctx, c, queue, "update checkpoint", "supervisor/x", time.Minute, timedOut)
	require.ErrorContains(t, err, `update checkpoint of supervisor/x: no answer yet within 1m0s: the workers are busy (1 polling task queue "`+queue+`"`)
	require.True(t, errors.Is(err, context.DeadlineExceeded))
}
