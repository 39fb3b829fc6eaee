package workflows

import (
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// reconcile brings the groups in line with the topic: it rediscovers
// partitions and latest offsets, lays out groups on first run, and starts
// every group that is not running.
func (s *supervisor) reconcile(ctx workflow.Context) {
	actx := workflow.WithActivityOptions(ctx, supervisorOptions)
	var disc protocol.DiscoverResult
	err := workflow.ExecuteActivity(actx, protocol.ActivityDiscover, protocol.DiscoverInput{Topic: s.spec.IOConfig.Topic}).Get(ctx, &disc)
	if err != nil {
		s.unhealthy(ctx, err)
		return
	}
	s.c.Partitions, s.c.Latest = disc.Partitions, disc.Latest
	if len(s.c.Groups) == 0 {
		if err := s.layOutGroups(ctx); err != nil {
			s.unhealthy(ctx, err)
			return
		}
	}
	if err := s.refreshRunning(ctx); err != nil {
		s.unhealthy(ctx, err)
		return
	}
	for _, g := range s.sortedGroups() {
		rec := s.c.Groups[g]
		if rec.Running || rec.Finished {
			continue
		}
		if err := s.startGroup(ctx, g, rec); err != nil {
			s.recordError(ctx, fmt.Sprintf("start group %d: %s", g, errorMessage(err)))
		}
	}
	if !s.c.Stopping {
		s.c.State = StateRunning
	}
}

func (s *supervisor) unhealthy(ctx workflow.Context, err error) {
	s.recordError(ctx, errorMessage(err))
	if !s.c.Stopping {
		s.c.State = StateUnhealthySupervisor
	}
}

func (s *supervisor) startOffsets(ctx workflow.Context) (protocol.StartOffsetsResult, error) {
	actx := workflow.WithActivityOptions(ctx, supervisorOptions)
	var res protocol.StartOffsetsResult
	err := workflow.ExecuteActivity(actx, protocol.ActivityStartOffsets, protocol.StartOffsetsInput{
		SupervisorID: s.spec.ID, DataSource: s.spec.DataSchema.DataSource,
		Topic: s.spec.IOConfig.Topic, UseEarliestOffset: s.spec.IOConfig.UseEarliestOffset,
	}).Get(ctx, &res)
	return res, err
}

// layOutGroups assigns partitions to groups and opens each group's first
// sequence where Postgres (or, on first run, Kafka) says to start.
func (s *supervisor) layOutGroups(ctx workflow.Context) error {
	res, err := s.startOffsets(ctx)
	if err != nil {
		return err
	}
	s.c.Committed = res.Committed
	for g, parts := range groupPartitions(s.c.Partitions, s.spec.IOConfig.TaskCount) {
		next := res.NextSequenceIDs[g]
		s.c.Groups[g] = &groupRecord{
			Partitions:     parts,
			Sequences:      []domain.Sequence{{ID: next, Start: subset(res.Offsets, parts)}},
			NextSequenceID: next + 1,
		}
	}
	return nil
}

// refreshRunning asks Temporal which started groups still run.
func (s *supervisor) refreshRunning(ctx workflow.Context) error {
	var ids []string
	for _, g := range s.sortedGroups() {
		if s.c.Groups[g].Generation > 0 && !s.c.Groups[g].Finished {
			ids = append(ids, TaskGroupWorkflowID(s.spec.ID, g))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	actx := workflow.WithActivityOptions(ctx, supervisorOptions)
	var res protocol.GroupStatesResult
	if err := workflow.ExecuteActivity(actx, protocol.ActivityGroupStates, protocol.GroupStatesInput{WorkflowIDs: ids}).Get(ctx, &res); err != nil {
		return err
	}
	for _, g := range s.sortedGroups() {
		rec := s.c.Groups[g]
		running, asked := res.Running[TaskGroupWorkflowID(s.spec.ID, g)]
		if asked && rec.Running && !running {
			s.recordError(ctx, fmt.Sprintf("group %d (generation %d) is not running; restarting it from the committed offsets", g, rec.Generation))
			if s.c.Stopping && !hasClosed(rec) {
				rec.Finished = true
			}
		}
		if asked {
			rec.Running = running
		}
	}
	return nil
}

// startGroup starts the group's next generation. A restarted group resumes
// from the committed offsets and keeps the checkpoints of its unpublished
// sequences, so re-read sequences publish under the same names.
func (s *supervisor) startGroup(ctx workflow.Context, g int, rec *groupRecord) error {
	if rec.Generation > 0 {
		res, err := s.startOffsets(ctx)
		if err != nil {
			return err
		}
		s.c.Committed = res.Committed
		restoreSequences(rec, subset(res.Offsets, rec.Partitions), res.NextSequenceIDs[g])
	}
	rec.Generation++
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            TaskGroupWorkflowID(s.spec.ID, g),
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	})
	in := TaskGroupInput{
		Spec: s.spec, Group: g, Generation: rec.Generation, Partitions: rec.Partitions,
		Sequences: rec.Sequences, Stopping: s.c.Stopping,
	}
	err := workflow.ExecuteChildWorkflow(cctx, TaskGroupWorkflowName, in).GetChildWorkflowExecution().Get(ctx, nil)
	var started *temporal.ChildWorkflowExecutionAlreadyStartedError
	if errors.As(err, &started) {
		rec.Running = true // an earlier generation still runs; find out next period
		return err
	}
	if err != nil {
		return err
	}
	rec.Running = true
	return nil
}

// restoreSequences drops the recorded sequences that already committed
// (their publish answer may have been lost with the group) and, if what is
// left does not start at the committed offsets, starts over with one open
// sequence there.
func restoreSequences(rec *groupRecord, start domain.Offsets, nextID int) {
	rec.NextSequenceID = max(rec.NextSequenceID, nextID)
	for len(rec.Sequences) > 0 && !rec.Sequences[0].Open() && start.Reached(rec.Sequences[0].End) {
		rec.Sequences = rec.Sequences[1:]
	}
	if len(rec.Sequences) > 0 && rec.Sequences[0].Start.Equal(start) {
		return
	}
	rec.Sequences = []domain.Sequence{{ID: rec.NextSequenceID, Start: start}}
	rec.NextSequenceID++
}
