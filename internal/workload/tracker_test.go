package workload

import (
	"context"
	"errors"
	"testing"
	"time"

	"handoff/internal/domain"

	"github.com/stretchr/testify/require"
)

func work(kind Kind, sup string) Work { return Work{Kind: kind, Supervisor: sup, Group: 0} }

func TestSlotsBoundEachKind(t *testing.T) {
	tr := NewTracker(Limits{Consume: 2, Publish: 1})
	ctx := context.Background()
	a, err := tr.Begin(ctx, work(Consume, "a"))
	require.NoError(t, err)
	b, err := tr.Begin(ctx, work(Consume, "b"))
	require.NoError(t, err)
	p, err := tr.Begin(ctx, work(Publish, "p"))
	require.NoError(t, err, "publish slots are separate from consume slots")

	third := make(chan *Handle)
	go func() {
		h, err := tr.Begin(ctx, work(Consume, "c"))
		require.NoError(t, err)
		third <- h
	}()
	require.Eventually(t, func() bool { return len(tr.Snapshot().Active) == 4 }, time.Second, time.Millisecond)
	select {
	case <-third:
		t.Fatal("a third consume ran with two slots")
	case <-time.After(100 * time.Millisecond):
	}
	var waiting Work
	for _, w := range tr.Snapshot().Active {
		if w.Supervisor == "c" {
			waiting = w
		}
	}
	require.Equal(t, StateWaitingForSlot, waiting.State, "the waiting one is listed as waiting")

	a.End(nil)
	c := <-third
	b.End(errors.New("boom"))
	c.End(nil)
	p.End(nil)
	s := tr.Snapshot()
	require.Empty(t, s.Active)
	require.Len(t, s.RecentFailures, 1)
	require.Equal(t, "boom", s.RecentFailures[0].Error)
	require.Equal(t, "b", s.RecentFailures[0].Work.Supervisor)
}

func TestBeginGivesUpWhenCancelled(t *testing.T) {
	tr := NewTracker(Limits{Consume: 1})
	h, err := tr.Begin(context.Background(), work(Consume, "a"))
	require.NoError(t, err)
	defer h.End(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = tr.Begin(ctx, work(Consume, "b"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, tr.Snapshot().Active, 1, "a cancelled waiter is unlisted")
}

// Memory push-back: over the threshold, new consume work waits (publish
// does not, it is what frees memory); under it, the waiters go on.
func TestMemoryPushBackHoldsNewConsumeWork(t *testing.T) {
	tr := NewTracker(Limits{Consume: 4, MemoryLimit: 1 << 10, PushBackFraction: 0.5, CheckEvery: 10 * time.Millisecond})
	s := tr.Snapshot()
	require.True(t, s.Memory.PushingBack, "any heap is over 512 bytes: %+v", s.Memory)
	require.Equal(t, int64(512), s.Memory.Threshold)

	p, err := tr.Begin(context.Background(), work(Publish, "p"))
	require.NoError(t, err, "publishing frees memory: it is not held back")
	p.End(nil)

	got := make(chan *Handle)
	go func() {
		h, err := tr.Begin(context.Background(), work(Consume, "c"))
		require.NoError(t, err)
		got <- h
	}()
	require.Eventually(t, func() bool {
		a := tr.Snapshot().Active
		return len(a) == 1 && a[0].State == StateWaitingForMemory
	}, time.Second, time.Millisecond)

	// The limit is lifted (as if the heap shrank): the monitor ends the
	// push-back and the consume goes on.
	tr.limits.MemoryLimit = 1 << 40
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tr.Monitor(ctx)
	h := <-got
	h.End(nil)
	s = tr.Snapshot()
	require.False(t, s.Memory.PushingBack)
	require.Positive(t, s.Memory.PushBackTotal, "the time spent pushing back is counted")
}

func TestProgressAndStateShowInTheSnapshot(t *testing.T) {
	tr := NewTracker(Limits{})
	h, err := tr.Begin(context.Background(), Work{Kind: Consume, Supervisor: "s", Sequence: "s_g0_s1"})
	require.NoError(t, err)
	h.SetState(StateReading)
	h.Progress(domain.Offsets{domain.P(0): 42}, 10, 1000)
	s := tr.Snapshot()
	require.Len(t, s.Active, 1)
	require.Equal(t, StateReading, s.Active[0].State)
	require.Equal(t, int64(42), s.Active[0].Offsets[domain.P(0)])
	require.Equal(t, int64(1000), s.InFlightBytes)
	h.End(nil)
	h.End(nil) // twice is harmless
	require.Empty(t, tr.Snapshot().Active)
}
