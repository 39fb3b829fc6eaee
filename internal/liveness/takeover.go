package liveness

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// WorkerLost is the error type of an attempt failed because its worker
// was found dead: retryable, so the next attempt starts at once.
const WorkerLost = "WorkerLost"

// retryAfterTakeover is the next attempt's delay (ApplicationError's
// NextRetryDelay, which overrides the retry policy's backoff).
const retryAfterTakeover = 100 * time.Millisecond

// Lost is a dead worker: its lease, as the reaper found it.
type Lost struct {
	WorkerID   string
	Identity   string // its Temporal worker identity
	Namespace  string
	Activities []ActivityRef
	LastSeen   time.Time // its last renewal
	Why        string    // "lease expired" or "session gone"
}

// Takeover is what a reaper did with one dead worker.
type Takeover struct {
	Failed  []ActivityRef // attempts failed by id, to be retried elsewhere
	Skipped int           // started on it when described, ended before failed
	// Swept is how many running workflows the sweep described beyond the
	// lease's list, and Unlisted the attempts it found there.
	Swept, Unlisted int
}

// TakeOver fails every attempt the server still sees started on the dead
// worker: first in each workflow its lease lists, at once, then in every
// other running workflow of the namespace (sweep). An attempt that moved
// on (it ended, or timed out and started elsewhere) is left alone: the
// server's own view of the attempt's worker decides, not the lease's list.
func TakeOver(ctx context.Context, c client.Client, lost Lost) (Takeover, error) {
	var t Takeover
	seen := map[run]bool{}
	var errs []error
	for _, a := range lost.Activities {
		r := run{a.WorkflowID, a.RunID}
		if seen[r] {
			continue
		}
		seen[r] = true
		failed, skipped, err := failOn(ctx, c, lost, r.wf, r.run)
		t.add(failed, skipped)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := sweep(ctx, c, lost, seen, &t); err != nil {
		errs = append(errs, err)
	}
	return t, errors.Join(errs...)
}

type run struct{ wf, run string }

func (t *Takeover) add(failed []ActivityRef, skipped int) {
	t.Failed = append(t.Failed, failed...)
	t.Skipped += skipped
}

// failOn fails the attempts of one workflow run started on the dead worker.
func failOn(ctx context.Context, c client.Client, lost Lost, wf, runID string) (failed []ActivityRef, skipped int, err error) {
	d, err := c.DescribeWorkflowExecution(ctx, wf, runID)
	if notFound(err) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("describe %s: %w", wf, err)
	}
	msg := fmt.Sprintf("worker %s (lease %s) was found dead (%s; last renewed %s): this attempt is taken over",
		lost.Identity, lost.WorkerID, lost.Why, lost.LastSeen.UTC().Format(time.RFC3339))
	for _, pa := range d.GetPendingActivities() {
		if pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED || pa.GetLastWorkerIdentity() != lost.Identity {
			continue
		}
		// The retry starts now whatever its attempt's number: an activity
		// taken over again and again would otherwise wait out the retry
		// policy's growing backoff (up to a minute) each time.
		err := c.CompleteActivityByID(ctx, lost.Namespace, wf, runID, pa.GetActivityId(), nil,
			temporal.NewApplicationErrorWithOptions(msg, WorkerLost, temporal.ApplicationErrorOptions{NextRetryDelay: retryAfterTakeover}))
		switch {
		case notFound(err):
			skipped++
		case err != nil:
			return failed, skipped, fmt.Errorf("fail activity %s of %s: %w", pa.GetActivityId(), wf, err)
		default:
			failed = append(failed, ActivityRef{WorkflowID: wf, RunID: runID, ActivityID: pa.GetActivityId(),
				Type: pa.GetActivityType().GetName(), Attempt: pa.GetAttempt()})
		}
	}
	return failed, skipped, nil
}

func notFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}
