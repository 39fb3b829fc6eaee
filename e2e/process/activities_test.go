package process

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"handoff/e2e/harness"
	"handoff/internal/domain"
)

// runningActivity is an activity the server sees as started on a worker.
type runningActivity struct {
	Workflow string
	Type     string
	Attempt  int32
	Worker   string // the worker identity, pid@host@
}

func (a runningActivity) String() string {
	return fmt.Sprintf("%s %s (attempt %d, on %s)", a.Workflow, a.Type, a.Attempt, a.Worker)
}

// runningActivities asks the server which activities of the supervisor and
// its groups are started.
func (e *env) runningActivities(spec domain.Spec) []runningActivity {
	var out []runningActivity
	for _, a := range harness.StartedActivities(context.Background(), e.temporal, spec) {
		out = append(out, runningActivity{
			Workflow: strings.TrimPrefix(a.Workflow, "supervisor/"), Type: a.Type, Attempt: a.Attempt, Worker: a.Worker,
		})
	}
	return out
}

// waitActivitiesOn waits until the server sees an activity started on the
// worker and returns those it sees then (none if timeout passes). With
// prefer, it waits up to timeout for an activity of that type, and settles
// for any other running at the end.
func (e *env) waitActivitiesOn(spec domain.Spec, w *workerProc, prefer string, timeout time.Duration) []runningActivity {
	deadline := time.Now().Add(timeout)
	var on []runningActivity
	for {
		on = w.filter(e.runningActivities(spec))
		if prefer == "" && len(on) > 0 {
			return on
		}
		for _, a := range on {
			if a.Type == prefer {
				return on
			}
		}
		if time.Now().After(deadline) {
			return on
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// filter keeps the activities started on this worker process.
func (w *workerProc) filter(acts []runningActivity) []runningActivity {
	prefix := strconv.Itoa(w.cmd.Process.Pid) + "@"
	var out []runningActivity
	for _, a := range acts {
		if strings.HasPrefix(a.Worker, prefix) {
			out = append(out, a)
		}
	}
	return out
}
