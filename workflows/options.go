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
