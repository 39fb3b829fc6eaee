package e2e

import (
	"errors"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/eventgen"
)

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// TestExactlyOnceWithCheckpointsAndStop produces events in three waves over
// four partitions, checkpoints after the first two and stops after the
// third: every event must be published exactly once.
func TestExactlyOnceWithCheckpointsAndStop(t *testing.T) {
	t.Parallel()
	s := newStack(t, 4, activities.Faults{})
	spec := s.spec(2)
	gen := eventgen.New(s.name, 1)
	const wave = 5000

	s.produce(gen, wave)
	run := s.startSupervisor(spec)
	n := s.checkpointUntilPublished(spec, 0)
	s.produce(gen, wave)
	n = s.checkpointUntilPublished(spec, n)
	s.produce(gen, wave)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)

	require.Greater(t, s.publishedSequences(spec.DataSchema.DataSource), n, "stop must publish the last sequences")
	s.recordHistories(spec)
	s.requireExactlyOnce(spec, gen.RunID, 3*wave)
}

// TestExactlyOnceWhenPublishAnswerIsLost fails the first publish after its
// transaction committed, as if the worker died before answering: the retry
// must find the sequence recorded and write nothing twice.
func TestExactlyOnceWhenPublishAnswerIsLost(t *testing.T) {
	t.Parallel()
	var failed atomic.Int32
	s := newStack(t, 3, activities.Faults{AfterPublishCommit: func(string) error {
		if failed.CompareAndSwap(0, 1) {
			return errors.New("injected: answer lost after commit")
		}
		return nil
	}})
	spec := s.spec(1)
	gen := eventgen.New(s.name, 2)
	const wave = 4000

	s.produce(gen, wave)
	run := s.startSupervisor(spec)
	n := s.checkpointUntilPublished(spec, 0)
	s.produce(gen, wave)
	s.produce(gen, wave)
	s.checkpointUntilPublished(spec, n)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)

	require.Equal(t, int32(1), failed.Load(), "the fault must have fired")
	s.requireExactlyOnce(spec, gen.RunID, 3*wave)
}
