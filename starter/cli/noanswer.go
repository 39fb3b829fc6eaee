package cli

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// pollerRecent: a poller seen this recently is a worker that is there.
// The server keeps a poller listed for a few minutes after its last poll.
const pollerRecent = time.Minute

// noAnswer explains a query or update that got no answer within timeout:
// either no worker polls the task queue, or the workers do and are busy
// (hundreds of supervisors handing off at once queue their workflow tasks),
// in which case the answer comes once they catch up.
func noAnswer(ctx context.Context, c client.Client, taskQueue, what, workflowID string, timeout time.Duration, err error) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	resp, derr := c.DescribeTaskQueue(dctx, taskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if derr != nil {
		return fmt.Errorf("%s of %s: no answer within %s, and task queue %q could not be described (%v): is a worker polling it? (%w)",
			what, workflowID, timeout, taskQueue, derr, err)
	}
	polling, latest := 0, time.Time{}
	for _, p := range resp.GetPollers() {
		at := p.GetLastAccessTime().AsTime()
		if time.Since(at) <= pollerRecent {
			polling++
		}
		if at.After(latest) {
			latest = at
		}
	}
	if polling == 0 {
		last := "never"
		if !latest.IsZero() {
			last = time.Since(latest).Round(time.Second).String() + " ago"
		}
		return fmt.Errorf("%s of %s: no answer within %s: no worker is polling task queue %q (last poll: %s); start one (README, The worker) (%w)",
			what, workflowID, timeout, taskQueue, last, err)
	}
	return fmt.Errorf("%s of %s: no answer yet within %s: the workers are busy (%d polling task queue %q, but its workflow tasks wait); the answer comes once they catch up: try again in a moment (%w)",
		what, workflowID, timeout, polling, taskQueue, err)
}
