package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
)

// Activity options. Retries back off to a cap; errors a retry cannot fix are
// non-retryable and end the retries at once.
var (
	consumeOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		},
	}
	publishOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		},
	}
	// Supervisor activities are bounded so that the loop goes on, records
	// the error and tries again next period.
	supervisorOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second, MaximumAttempts: 3,
		},
	}
)

// requestResendAfter re-sends a checkpoint request that got no answer.
const requestResendAfter = time.Minute

// withRetryTimeout bounds the activity's retries by the spec's
// activityRetryTimeout: past it the activity fails with its last error, and
// so does the group, which the supervisor records and restarts.
func withRetryTimeout(o workflow.ActivityOptions, spec domain.Spec) workflow.ActivityOptions {
	o.ScheduleToCloseTimeout = spec.TuningConfig.ActivityRetryTimeout.D()
	return o
}

// The long-running activities. A stream heartbeats every 2 s while it
// reads and every 80 s while its topic is quiet, so a dead worker is found
// within its heartbeat timeout (2 minutes, as a publish's); it returns by
// itself after
// streamMaxRun. WaitForCancellation: a cancelled stream (the fallback when
// a wake could not be sent) still answers with what it staged.
const (
	streamMaxRun = time.Hour
	watchMaxRun  = time.Hour
)

var (
	streamOptions = workflow.ActivityOptions{
		StartToCloseTimeout: streamMaxRun + 10*time.Minute,
		HeartbeatTimeout:    2 * time.Minute,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		},
	}
	// The watch holds no state a retry needs: it is retried without end,
	// and its heartbeat timeout only has to find a dead worker.
	watchOptions = workflow.ActivityOptions{
		StartToCloseTimeout: watchMaxRun + 10*time.Minute,
		HeartbeatTimeout:    5 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		},
	}
	wakeOptions = workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 500 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: 5 * time.Second,
		},
	}
)

// withStreamRetryTimeout bounds a stream's retries by activityRetryTimeout
// beyond its own longest run.
func withStreamRetryTimeout(o workflow.ActivityOptions, spec domain.Spec) workflow.ActivityOptions {
	o.ScheduleToCloseTimeout = streamMaxRun + spec.TuningConfig.ActivityRetryTimeout.D()
	return o
}
