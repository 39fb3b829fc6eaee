package chaos

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.temporal.io/api/activity/v1"
	"go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"handoff/e2e/harness"
	"handoff/internal/domain"
)

// startedActivity is an activity the server sees as started on a worker.
type startedActivity = harness.StartedActivity

// startedActivities asks the server which activities of the supervisor and
// its groups are started, and on which worker.
func (e *env) startedActivities(spec domain.Spec) []startedActivity {
	return harness.StartedActivities(context.Background(), e.temporal, spec)
}

// startedOn keeps the activities started on the worker of identity prefix.
func startedOn(acts []startedActivity, prefix string) []startedActivity {
	var out []startedActivity
	for _, a := range acts {
		if strings.HasPrefix(a.Worker, prefix) {
			out = append(out, a)
		}
	}
	return out
}

// fastHeartbeatTimeout replaces the heartbeat timeout of activities
// started on a dead worker. It is twice the activities' heartbeat interval
// (5s), so that the retried attempt on a live worker keeps it.
const fastHeartbeatTimeout = 10 * time.Second

// expediteDead makes the server give up on the activities it sees started
// on the dead worker whose identity starts with prefix after at most
// fastHeartbeatTimeout, rather than after the heartbeat timeouts of the
// workflows' activity options (consume 1 min, publish 2 min, none for the
// supervisor's short activities, bounded by a 30s start-to-close). It does
// what an operator would with `temporal activity update-options
// --heartbeat-timeout 10s`: the attempt times out as a heartbeat timeout
// does and is retried as one is, elsewhere. It returns how many activities
// it changed.
//
// This shortens detection only: the attempt the server gives up on is one
// whose worker is dead, as after the real timeout. (Restoring the original
// options once the retry is scheduled, with restore_original, made some
// retries fail with a ScheduleToStart timeout on Temporal 1.29.1, so the
// changed activities keep the 10s timeout.) e2e/process's SIGKILL test
// waits for the real timeouts.
func (e *env) expediteDead(spec domain.Spec, prefix string, timeout time.Duration) int {
	e.t.Helper()
	type key struct{ wf, id string }
	changed := map[key]bool{}
	deadline := time.Now().Add(timeout)
	for {
		on := startedOn(e.startedActivities(spec), prefix)
		for _, a := range on {
			k := key{a.Workflow, a.ID}
			if changed[k] {
				continue
			}
			if err := e.shortenHeartbeatTimeout(a); err != nil {
				e.t.Logf("expedite %s %s on %s: %v", a.Workflow, a.Type, a.Worker, err)
				continue
			}
			changed[k] = true
		}
		if len(on) == 0 || time.Now().After(deadline) {
			if len(on) > 0 {
				e.t.Logf("after %v the server still sees activities started on the dead worker: %+v", timeout, on)
			}
			return len(changed)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// shortenHeartbeatTimeout sets fastHeartbeatTimeout on the activity.
func (e *env) shortenHeartbeatTimeout(a startedActivity) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := e.temporal.WorkflowService().UpdateActivityOptions(ctx, &workflowservice.UpdateActivityOptionsRequest{
		Namespace:       e.ns,
		Execution:       &common.WorkflowExecution{WorkflowId: a.Workflow, RunId: a.RunID},
		Identity:        "e2e/chaos",
		Activity:        &workflowservice.UpdateActivityOptionsRequest_Id{Id: a.ID},
		ActivityOptions: &activity.ActivityOptions{HeartbeatTimeout: durationpb.New(fastHeartbeatTimeout)},
		UpdateMask:      &fieldmaskpb.FieldMask{Paths: []string{"heartbeat_timeout"}},
	})
	if isNotFound(err) {
		return nil // it ended meanwhile
	}
	return err
}

func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}
