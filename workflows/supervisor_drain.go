package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// drainGroups makes every group close, publish and finish: running groups
// are told to stop once; a group that is not running finishes at once if it
// has nothing closed to publish, else it starts already stopping.
func (s *supervisor) drainGroups(ctx workflow.Context) {
	for _, g := range s.sortedGroups() {
		rec := s.c.Groups[g]
		switch {
		case rec.Finished:
		case rec.Running && !rec.StopSent:
			s.signalGroup(ctx, g, SignalGroupStop, nil)
			rec.StopSent = true
		case !rec.Running && !hasClosed(rec):
			// What it read and did not publish is read again by the next run.
			rec.Finished = true
		case !rec.Running && !now(ctx).Before(rec.RetryAt):
			if err := s.startGroup(ctx, g, rec, true); err != nil {
				s.recordError(ctx, fmt.Sprintf("start group %d to publish before stopping: %s", g, errorMessage(err)))
				s.retrySoon = true
			}
		}
	}
}

// settleDrain finishes what a completed drain was for: a pending spec
// applies (and groups are laid out again for it), a suspend is reached.
func (s *supervisor) settleDrain(ctx workflow.Context) {
	if !s.drained() {
		return
	}
	if s.c.PendingSpec != nil && s.c.Target != targetStop {
		s.spec, s.c.PendingSpec = *s.c.PendingSpec, nil
		// Sequences are all published: lay the groups out again for the new
		// spec (taskCount may have changed) from the committed offsets.
		s.c.Groups = map[int]*groupRecord{}
		if err := s.layOutGroups(ctx); err != nil {
			s.recordError(ctx, "lay out groups for the new spec: "+errorMessage(err))
		}
		s.poke()
	}
}

// updateState derives the state shown to users.
func (s *supervisor) updateState(ctx workflow.Context) {
	state, detail := StateRunning, StateRunning
	switch {
	case s.c.Target == targetStop:
		state, detail = StateStopping, StateStopping
	case s.c.Target == targetSuspend && s.drained():
		state, detail = StateSuspended, StateSuspended
	case s.c.Target == targetSuspend:
		state, detail = StateStopping, "SUSPENDING"
	case s.c.PendingSpec != nil:
		state, detail = StateRunning, "APPLYING_SPEC"
	case s.outOfRangeGroups() > 0:
		// Retrying cannot fix it: say so at once (supervisor_outofrange.go).
		state, detail = StateUnhealthyTasks, DetailOffsetOutOfRange
	case s.c.Watched != nil && s.c.Watched.Registry != "":
		state, detail = StateUnhealthyTasks, DetailSchemaRegistryUnavailable
	case s.failingGroups() > 0:
		state, detail = StateUnhealthyTasks, fmt.Sprintf("%d group(s) failed %d times in a row", s.failingGroups(), unhealthyAfterFailures)
	case s.idle(ctx):
		state, detail = StateIdle, StateIdle
	}
	s.c.State, s.c.DetailedState = state, detail
}

func (s *supervisor) failingGroups() int {
	n := 0
	for _, g := range s.c.Groups {
		if g.Failures >= unhealthyAfterFailures {
			n++
		}
	}
	return n
}

// idle: every partition has been read to its latest offset for two periods.
func (s *supervisor) idle(ctx workflow.Context) bool {
	if s.watch {
		return s.c.Watched != nil && s.c.Watched.CaughtUp
	}
	caughtUp := len(s.c.Latest) > 0
	for p, latest := range s.c.Latest {
		if cur, ok := s.c.Current[p]; !ok || cur < latest {
			caughtUp = false
		}
	}
	if !caughtUp {
		s.c.IdleSince = time.Time{}
		return false
	}
	if s.c.IdleSince.IsZero() {
		s.c.IdleSince = now(ctx)
	}
	return now(ctx).Sub(s.c.IdleSince) >= 2*s.spec.IOConfig.Period.D()
}

// startChild starts a task-group workflow that outlives the supervisor's
// runs (parent-close policy abandon) and waits until it has started.
func startChild(ctx workflow.Context, id string, in TaskGroupInput) error {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: id,
		StaticSummary: fmt.Sprintf("task group %d of supervisor %s: partitions %v, generation %d",
			in.Group, in.Spec.ID, in.Partitions, in.Generation),
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	})
	err := workflow.ExecuteChildWorkflow(cctx, TaskGroupWorkflowName, in).GetChildWorkflowExecution().Get(ctx, nil)
	var started *temporal.ChildWorkflowExecutionAlreadyStartedError
	if errors.As(err, &started) {
		return fmt.Errorf("%s: %w", id, errStillRunning)
	}
	return err
}

// errStillRunning: a task-group workflow id is taken by a run that the
// supervisor does not know of.
var errStillRunning = errors.New("an earlier run still runs")

// DetailSchemaRegistryUnavailable: the groups' reads wait for the schema
// registry (the watch sees their consumes fail with
// domain.ErrSchemaRegistryUnavailable); nothing read is lost or counted
// unparseable, and reading resumes when it answers.
const DetailSchemaRegistryUnavailable = "SCHEMA_REGISTRY_UNAVAILABLE"
