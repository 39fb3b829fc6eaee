package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
)

// TestNewPartitionsJoinTheirGroups grows the topic from 2 to 4 partitions
// while the supervisor runs: the new partitions are found at the next
// period, read from their earliest offset by group p % taskCount, and every
// event, old and new partitions alike, is published exactly once.
func TestNewPartitionsJoinTheirGroups(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(2)
	gen := eventgen.New(s.name, 14)
	s.produce(gen, 2000)
	run := s.startSupervisor(spec)
	s.checkpointUntilPublished(spec, 0)

	require.NoError(t, s.broker.AddPartitions(context.Background(), s.name, 4))
	s.produce(gen, 2000) // round-robin: half of it lands on partitions 2 and 3
	require.Eventually(t, func() bool {
		st := s.status(spec)
		return slices.Equal(st.Partitions, partitions(0, 1, 2, 3)) && len(st.Groups) == 2 &&
			slices.Equal(st.Groups[0].Partitions, partitions(0, 2)) && slices.Equal(st.Groups[1].Partitions, partitions(1, 3))
	}, 30*time.Second, 200*time.Millisecond, "new partitions did not join their groups")

	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.requireExactlyOnce(spec, gen.RunID, 4000)
}

// partitions names partitions of the spec's one topic.
func partitions(nums ...int32) []domain.Partition {
	out := make([]domain.Partition, len(nums))
	for i, n := range nums {
		out[i] = domain.P(n)
	}
	return out
}
