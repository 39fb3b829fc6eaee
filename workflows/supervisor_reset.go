package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// updateReset moves the stored offsets and drops the recorded sequences of
// the groups that read the reset partitions: what they read and did not
// publish is read again from the new offsets. Forced while groups run, it
// ends those groups first; the next reconcile starts them again.
func (s *supervisor) updateReset(ctx workflow.Context, r ResetRequest) (ResetResult, error) {
	targets, err := s.resetTargets(r)
	if err != nil {
		return ResetResult{}, err
	}
	_ = workflow.Await(ctx, func() bool { return !s.reconciling && !s.resetting })
	s.resetting = true
	defer func() { s.resetting = false }()
	affected := map[int]bool{}
	for p := range targets {
		affected[domain.GroupOf(p, s.spec.IOConfig.TaskCount)] = true
	}
	var running []string
	for _, g := range s.sortedGroups() {
		if affected[g] && s.c.Groups[g].Running {
			running = append(running, TaskGroupWorkflowID(s.spec.ID, g))
		}
	}
	if len(running) > 0 {
		if err := s.terminate(ctx, running, "forced reset of their partitions' offsets"); err != nil {
			return ResetResult{}, fmt.Errorf("end the groups before the reset: %s", errorMessage(err))
		}
	}
	actx := workflow.WithActivityOptions(ctx, supervisorOptions)
	var res protocol.ResetOffsetsResult
	err = workflow.ExecuteActivity(actx, protocol.ActivityResetOffsets, protocol.ResetOffsetsInput{
		DataSource: s.spec.DataSchema.DataSource, Topic: s.sourceTopic(), TopicPattern: s.sourcePattern(), Targets: targets,
	}).Get(ctx, &res)
	if err != nil {
		return ResetResult{}, fmt.Errorf("reset offsets: %s", errorMessage(err))
	}
	if s.c.Committed == nil {
		s.c.Committed = domain.Offsets{}
	}
	for p, o := range res.Offsets {
		s.c.Committed[p] = o
		delete(s.c.Current, p)
	}
	dropped := 0
	for _, g := range s.sortedGroups() {
		rec := s.c.Groups[g]
		if !affected[g] {
			continue
		}
		for _, q := range rec.Sequences {
			if !q.Open() || rec.SequenceRows[q.ID] > 0 {
				dropped++
			}
		}
		rec.Sequences, rec.SequenceRows, rec.OutOfRange = nil, nil, nil
		if rec.Running {
			// Ended on purpose: not a failure, and restarted without back-off.
			rec.Running, rec.StopSent, rec.RollingTo = false, false, 0
			s.resolve(g, GroupCheckpointResult{Outcome: CheckpointNotRunning})
		}
	}
	s.poke()
	return ResetResult{
		Offsets: res.Offsets, DroppedSequences: dropped,
		Message: fmt.Sprintf("stored offsets moved; %d recorded sequence(s) dropped; groups read from the new offsets when they next start", dropped),
	}, nil
}
