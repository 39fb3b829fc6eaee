package workflows

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// reconcile brings the groups in line with the topic and with what the user
// asked: it rediscovers partitions, lays out groups on first run, gives new
// partitions to their groups, notices groups that stopped running, then
// either starts and rolls over groups or drains them, and applies a pending
// spec once drained.
func (s *supervisor) reconcile(ctx workflow.Context) {
	_ = workflow.Await(ctx, func() bool { return !s.resetting })
	s.reconciling = true
	defer func() { s.reconciling = false }()
	s.recordSpecOnce(ctx)
	if err := s.discover(ctx); err != nil {
		s.unhealthy(ctx, err)
		s.settleDrain(ctx) // groups may finish without Kafka
		return
	}
	if err := s.refreshRunning(ctx); err != nil {
		s.unhealthy(ctx, err)
		return
	}
	s.steer(ctx)
}

// recordSpecOnce appends the spec to its history once per spec; a failure
// is recorded and tried again at the next reconcile.
func (s *supervisor) recordSpecOnce(ctx workflow.Context) {
	if s.c.SpecRecorded {
		return
	}
	if _, err := s.recordSpec(ctx, s.spec); err != nil {
		s.recordError(ctx, "record the spec: "+errorMessage(err))
		s.retrySoon = true
		return
	}
	s.c.SpecRecorded = true
}

// steer starts and rolls over groups, or drains them, then derives the
// state.
func (s *supervisor) steer(ctx workflow.Context) {
	if s.draining() {
		s.drainGroups(ctx)
		s.settleDrain(ctx)
	} else {
		s.startGroups(ctx)
		s.rollOver(ctx)
	}
	s.updateState(ctx)
}

// discover refreshes partitions and latest offsets, lays out the groups the
// first time and hands new partitions to their groups.
func (s *supervisor) discover(ctx workflow.Context) error {
	actx := workflow.WithActivityOptions(ctx, supervisorOptions)
	var disc protocol.DiscoverResult
	err := workflow.ExecuteActivity(actx, protocol.ActivityDiscover, protocol.DiscoverInput{
		Topic: s.sourceTopic(), TopicPattern: s.sourcePattern(), SupervisorID: s.spec.ID, DataSource: s.spec.DataSchema.DataSource,
	}).Get(ctx, &disc)
	if err != nil {
		return err
	}
	s.c.Connected = true
	s.setLatest(ctx, disc.Latest)
	return s.applyPartitions(ctx, disc.Partitions)
}

// applyPartitions lays out the groups the first time and hands new
// partitions to their groups.
func (s *supervisor) applyPartitions(ctx workflow.Context, partitions []domain.Partition) error {
	if len(s.c.Groups) == 0 {
		s.c.Partitions = partitions
		return s.layOutGroups(ctx)
	}
	s.dropGoneTopics(ctx, partitions)
	var added []domain.Partition
	for _, p := range partitions {
		if !slices.Contains(s.c.Partitions, p) {
			added = append(added, p)
		}
	}
	if len(added) == 0 {
		return nil
	}
	return s.addPartitions(ctx, added)
}

func (s *supervisor) unhealthy(ctx workflow.Context, err error) {
	s.recordError(ctx, errorMessage(err))
	problem := ""
	if isErrorType(err, domain.ErrTopicNotFound) {
		problem = domain.ErrTopicNotFound
	}
	s.unhealthyState(problem)
}

func (s *supervisor) startOffsets(ctx workflow.Context) (protocol.StartOffsetsResult, error) {
	return s.startOffsetsDropping(ctx, false)
}

// startOffsetsDropping is startOffsets that, with drop, first deletes the
// supervisor's staging: the groups are laid out afresh.
func (s *supervisor) startOffsetsDropping(ctx workflow.Context, drop bool) (protocol.StartOffsetsResult, error) {
	actx := workflow.WithActivityOptions(ctx, supervisorOptions)
	var res protocol.StartOffsetsResult
	err := workflow.ExecuteActivity(actx, protocol.ActivityStartOffsets, protocol.StartOffsetsInput{
		SupervisorID: s.spec.ID, DataSource: s.spec.DataSchema.DataSource,
		Topic: s.sourceTopic(), TopicPattern: s.sourcePattern(), UseEarliestOffset: s.spec.IOConfig.UseEarliestOffset,
		DropStaging: drop,
	}).Get(ctx, &res)
	return res, err
}

func (s *supervisor) recordSpec(ctx workflow.Context, spec domain.Spec) (protocol.RecordSpecResult, error) {
	return s.recordSpecChange(ctx, spec, protocol.RecordSpecInput{})
}

// recordSpecChange is recordSpec with who made the change and why (in's
// ChangedBy, Reason and Direction).
func (s *supervisor) recordSpecChange(ctx workflow.Context, spec domain.Spec, in protocol.RecordSpecInput) (protocol.RecordSpecResult, error) {
	actx := workflow.WithActivityOptions(ctx, supervisorOptions)
	in.SupervisorID, in.Spec = spec.ID, spec
	var res protocol.RecordSpecResult
	err := workflow.ExecuteActivity(actx, protocol.ActivityRecordSpec, in).Get(ctx, &res)
	return res, err
}

// layOutGroups assigns partitions to groups (p % taskCount) and opens each
// group's first sequence where Postgres (or, on first run, Kafka) says to
// start. Sequence ids continue after the highest one ever published.
func (s *supervisor) layOutGroups(ctx workflow.Context) error {
	res, err := s.startOffsetsDropping(ctx, true)
	if err != nil {
		return err
	}
	s.c.Committed = res.Committed
	s.c.Groups = map[int]*groupRecord{}
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

// addPartitions gives partitions that appeared to their groups: a running
// group reads them into its open sequence from where Postgres or Kafka
// says; a group that did not exist is created.
func (s *supervisor) addPartitions(ctx workflow.Context, added []domain.Partition) error {
	res, err := s.startOffsets(ctx)
	if err != nil {
		return err
	}
	byGroup := groupPartitions(added, s.spec.IOConfig.TaskCount)
	order := slices.Collect(maps.Keys(byGroup))
	if workflow.GetVersion(ctx, sortedAddPartitionsChange, workflow.DefaultVersion, sortedAddPartitionsVersion) >= sortedAddPartitionsVersion {
		slices.Sort(order)
	}
	for _, g := range order {
		parts := byGroup[g]
		start := subset(res.Offsets, parts)
		rec, ok := s.c.Groups[g]
		if !ok {
			next := res.NextSequenceIDs[g]
			s.c.Groups[g] = &groupRecord{
				Partitions: parts, Sequences: []domain.Sequence{{ID: next, Start: start}}, NextSequenceID: next + 1,
				Finished: s.draining(),
			}
			continue
		}
		rec.Partitions = append(rec.Partitions, parts...)
		slices.SortFunc(rec.Partitions, domain.ComparePartitions)
		open := rec.open()
		if open == nil {
			continue // the next start reads them from the committed offsets
		}
		for p, o := range start {
			open.Start[p] = o
		}
		if rec.Running {
			s.signalGroup(ctx, g, SignalAddPartitions, AddPartitions{SequenceID: open.ID, Offsets: start})
		}
	}
	s.c.Partitions = append(s.c.Partitions, added...)
	slices.SortFunc(s.c.Partitions, domain.ComparePartitions)
	s.topicBack(added)
	s.recordError(ctx, fmt.Sprintf("new partitions %v joined their groups", added))
	return nil
}

// refreshRunning asks Temporal which started groups still run, and counts
// the ones that ended on their own as failures.
func (s *supervisor) refreshRunning(ctx workflow.Context) error {
	var ids []string
	for _, g := range s.sortedGroups() {
		if s.c.Groups[g].Running {
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
	s.applyGroupStates(ctx, res.Running, res.Closed, func(int) bool { return false })
	return nil
}

// applyGroupStates counts the groups that were running and are not as
// failures (or as finished, if they completed after a stop) and sets their
// restart; stale(g) says a report on group g predates its latest start.
func (s *supervisor) applyGroupStates(ctx workflow.Context, running map[string]bool, closedRuns map[string]protocol.GroupClosed, stale func(int) bool) {
	for _, g := range s.sortedGroups() {
		rec := s.c.Groups[g]
		id := TaskGroupWorkflowID(s.spec.ID, g)
		if running, asked := running[id]; !asked || running || !rec.Running || stale(g) {
			continue
		}
		closed := closedRuns[id]
		if closed.Status == "Completed" && rec.StopSent {
			// Finished as told; its group-finished signal may still be on
			// its way.
			rec.Finished, rec.Running, rec.RollingTo = true, false, 0
			continue
		}
		rec.Running, rec.RollingTo = false, 0
		rec.Failures++
		rec.RetryAt = now(ctx).Add(restartBackoff(rec.Failures))
		msg := fmt.Sprintf("group %d (generation %d) %s", g, rec.Generation, describeClosed(closed))
		s.recordError(ctx, msg+fmt.Sprintf("; restarting it from the committed offsets in %s", restartBackoff(rec.Failures)))
		s.resolve(g, GroupCheckpointResult{Outcome: CheckpointNotRunning})
	}
}

func describeClosed(c protocol.GroupClosed) string {
	switch {
	case c.Failure != "":
		return "failed: " + c.Failure
	case c.Status != "":
		return "ended: " + c.Status
	}
	return "is not running"
}

// startGroups starts every group that should run and is not running, once
// its back-off has passed.
func (s *supervisor) startGroups(ctx workflow.Context) {
	for _, g := range s.sortedGroups() {
		rec := s.c.Groups[g]
		if rec.Running || now(ctx).Before(rec.RetryAt) {
			continue
		}
		rec.Finished, rec.StopSent = false, false
		if err := s.startGroup(ctx, g, rec, false); err != nil {
			s.recordError(ctx, fmt.Sprintf("start group %d: %s", g, errorMessage(err)))
			s.retrySoon = true
		}
	}
}

// startGroup starts the group's next generation. A restarted group resumes
// from the committed offsets and keeps the checkpoints of its unpublished
// sequences, so re-read sequences publish under the same names.
func (s *supervisor) startGroup(ctx workflow.Context, g int, rec *groupRecord, stopping bool) error {
	if rec.Generation > 0 || len(rec.Sequences) == 0 {
		res, err := s.startOffsets(ctx)
		if err != nil {
			return err
		}
		s.c.Committed = res.Committed
		restoreSequences(rec, subset(res.Offsets, rec.Partitions), res.NextSequenceIDs[g])
	}
	s.c.Generations++
	rec.Generation, rec.RollingTo, rec.StartedAt = s.c.Generations, 0, now(ctx)
	in := TaskGroupInput{
		Spec: s.spec, Group: g, Generation: rec.Generation, Partitions: rec.Partitions,
		Sequences: rec.Sequences, Stopping: stopping, NextSequenceID: rec.NextSequenceID,
	}
	id := TaskGroupWorkflowID(s.spec.ID, g)
	if err := startChild(ctx, id, in); err != nil {
		if errors.Is(err, errStillRunning) {
			// A run we lost track of: end it, and start afresh next period.
			s.terminate(ctx, []string{id}, "replaced: the supervisor lost track of this run")
		}
		return err
	}
	rec.Running, rec.StopSent = true, stopping
	s.startedIn[g] = s.watchSeq
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
	if len(rec.Sequences) > 0 {
		first := rec.Sequences[0]
		if subset(start, first.Start.Partitions()).Equal(first.Start) {
			return
		}
	}
	rec.Sequences = []domain.Sequence{{ID: rec.NextSequenceID, Start: start}}
	rec.NextSequenceID++
}

// rollOver asks each group whose generation is older than taskDuration to
// close its open sequence and go on as a new generation.
func (s *supervisor) rollOver(ctx workflow.Context) {
	d := s.spec.IOConfig.TaskDuration.D()
	if d <= 0 {
		return
	}
	for _, g := range s.sortedGroups() {
		rec := s.c.Groups[g]
		if !rec.Running || rec.RollingTo != 0 || now(ctx).Sub(rec.StartedAt) < d {
			continue
		}
		s.c.Generations++
		rec.RollingTo = s.c.Generations
		s.signalGroup(ctx, g, SignalRollover, Rollover{Generation: rec.RollingTo})
	}
}

// terminate ends task-group workflows at once; a failure is recorded too.
func (s *supervisor) terminate(ctx workflow.Context, ids []string, reason string) error {
	actx := workflow.WithActivityOptions(ctx, supervisorOptions)
	err := workflow.ExecuteActivity(actx, protocol.ActivityTerminateGroups, protocol.TerminateGroupsInput{WorkflowIDs: ids, Reason: reason}).Get(ctx, nil)
	if err != nil {
		s.recordError(ctx, fmt.Sprintf("end %v: %s", ids, errorMessage(err)))
	}
	return err
}
