package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/workflows"
)

// TestCheckpointUpdateAnswersOnceRecorded asks for a checkpoint through the
// update: it answers per group once the boundary is recorded, an idle group
// answers "empty", and the rows still publish exactly once.
func TestCheckpointUpdateAnswersOnceRecorded(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(2)
	gen := eventgen.New(s.name, 10)
	s.produce(gen, 2000)
	run := s.startSupervisor(spec)
	s.waitCaughtUp(spec)

	var res workflows.CheckpointResult
	require.NoError(t, s.update(spec, workflows.UpdateCheckpoint, workflows.CheckpointSignal{}, &res))
	require.Len(t, res.Groups, 2)
	for _, g := range res.Groups {
		require.Equal(t, workflows.CheckpointRecorded, g.Outcome, "group %d", g.Group)
		require.NotEmpty(t, g.End)
	}
	require.Eventually(t, func() bool { return s.publishedSequences(spec.DataSchema.DataSource) == 2 },
		30*time.Second, 100*time.Millisecond)

	// Nothing new was read: a second checkpoint has nothing to close.
	var again workflows.CheckpointResult
	require.NoError(t, s.update(spec, workflows.UpdateCheckpoint, workflows.CheckpointSignal{Groups: []int{1}}, &again))
	require.Equal(t, []workflows.GroupCheckpointResult{{Group: 1, Outcome: workflows.CheckpointEmpty}}, again.Groups)

	s.stopAndWait(spec, run)
	s.recordHistories(spec)
	s.requireExactlyOnce(spec, gen.RunID, 2000)
}

// TestSuspendResetResume suspends (everything read is published), resets
// one partition to its earliest offset while suspended, and resumes: the
// reset partition's events are published again, all others exactly once.
func TestSuspendResetResume(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(1)
	gen := eventgen.New(s.name, 11)
	s.produce(gen, 2000)
	run := s.startSupervisor(spec)
	s.waitCaughtUp(spec)

	reset := workflows.ResetRequest{Partitions: map[domain.Partition]string{domain.P(0): workflows.ResetEarliest}}
	err := s.update(spec, workflows.UpdateReset, reset, nil)
	require.ErrorContains(t, err, "suspend it first", "a reset while running must be refused")

	var op workflows.OperationResult
	require.NoError(t, s.update(spec, workflows.UpdateSuspend, nil, &op))
	require.Equal(t, workflows.StateSuspended, op.State)
	require.Equal(t, workflows.StateSuspended, s.status(spec).State)
	s.requireExactlyOnce(spec, gen.RunID, 2000) // suspend published everything read

	// While suspended nothing is read.
	s.produce(gen, 500)
	time.Sleep(2 * time.Second)
	require.Equal(t, 1, s.publishedSequences(spec.DataSchema.DataSource))

	var rr workflows.ResetResult
	require.NoError(t, s.update(spec, workflows.UpdateReset, reset, &rr))
	require.Equal(t, domain.Offsets{domain.P(0): 0}, rr.Offsets)

	require.NoError(t, s.update(spec, workflows.UpdateResume, nil, &op))
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.recordHistories(spec)

	// Partition 0's first 2000-wave events were published before the reset
	// and again after it; everything else exactly once.
	counts := s.publishedIDCounts(spec)
	p0 := s.idsOfPartition(0)
	require.NotEmpty(t, p0)
	for i := range int64(2500) {
		id := gen.RunID + "-" + itoa(i)
		want := 1
		if p0[id] && i < 2000 {
			want = 2
		}
		require.Equal(t, want, counts[id], "event %s", id)
	}
	require.Len(t, counts, 2500)
}

// TestTaskDurationRollsGroupsOver sets a short taskDuration: groups roll to
// new generations (same workflow id, continued as new) while events keep
// flowing and sequences hand off by age, and every event is published
// exactly once.
func TestTaskDurationRollsGroupsOver(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(2)
	spec.IOConfig.TaskDuration = domain.Duration(2 * time.Second)
	// Handoffs by age, which groups close themselves, fall between and
	// across the rollovers.
	spec.TuningConfig.IntermediateHandoffPeriod = domain.Duration(time.Second)
	gen := eventgen.New(s.name, 12)
	run := s.startSupervisor(spec)

	produced := int64(0)
	require.Eventually(t, func() bool {
		s.produce(gen, 300)
		produced += 300
		st := s.status(spec)
		return len(st.Groups) == 2 && st.Groups[0].Generation > 3 && st.Groups[1].Generation > 3
	}, time.Minute, 500*time.Millisecond, "groups did not roll over")
	require.GreaterOrEqual(t, s.publishedSequences(spec.DataSchema.DataSource), 2)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.recordHistories(spec)
	s.requireExactlyOnce(spec, gen.RunID, produced)
}

// TestTaskCountChangeRegroupsExactlyOnce updates the spec from one task
// group to three while events flow: the old group publishes, the new
// layout starts from the committed offsets, nothing is lost or doubled.
func TestTaskCountChangeRegroupsExactlyOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, 3, activities.Faults{})
	spec := s.spec(1)
	gen := eventgen.New(s.name, 13)
	s.produce(gen, 3000)
	run := s.startSupervisor(spec)
	s.checkpointUntilPublished(spec, 0)
	s.produce(gen, 1000)

	next := spec
	next.IOConfig.TaskCount = 3
	var res workflows.UpdateSpecResult
	require.NoError(t, s.update(spec, workflows.UpdateSpec, workflows.UpdateSpecRequest{Spec: next}, &res))
	require.True(t, res.Changed)
	require.Eventually(t, func() bool {
		st := s.status(spec)
		return len(st.Groups) == 3 && st.Spec.IOConfig.TaskCount == 3 && !st.PendingSpec
	}, time.Minute, 200*time.Millisecond, "the new taskCount did not apply")

	// The same spec again changes nothing.
	require.NoError(t, s.update(spec, workflows.UpdateSpec, workflows.UpdateSpecRequest{Spec: next}, &res))
	require.False(t, res.Changed)

	s.produce(gen, 1000)
	spec = next
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.recordHistories(spec)
	s.requireExactlyOnce(spec, gen.RunID, 5000)
}
