package domain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestHandoffDueFallsOnThePhaseAtLeastHalfAPeriodOn(t *testing.T) {
	period := time.Minute
	base := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC) // a whole minute
	for _, c := range []struct {
		first time.Time
		phase time.Duration
		want  time.Time
	}{
		{base, 40 * time.Second, base.Add(40 * time.Second)},
		{base, 10 * time.Second, base.Add(70 * time.Second)},
		{base, 30 * time.Second, base.Add(30 * time.Second)}, // exactly half a period on
		{base.Add(45 * time.Second), 10 * time.Second, base.Add(130 * time.Second)},
		{base.Add(-time.Second), 0, base.Add(time.Minute)},
	} {
		got := domain.HandoffDue(c.first, period, c.phase)
		require.Equal(t, c.want, got, "first %s phase %s", c.first.Format(time.TimeOnly), c.phase)
	}
	require.True(t, domain.HandoffDue(base, 0, 0).IsZero(), "no period: never by age")
}

func TestHandoffDueStaysAPeriodApartOnceInStep(t *testing.T) {
	period := 5 * time.Minute
	phase := domain.HandoffPhase("wikipedia", 3, period)
	first := time.Date(2026, 12, 7, 10, 1, 17, 0, time.UTC)
	due := domain.HandoffDue(first, period, phase)
	require.GreaterOrEqual(t, due.Sub(first), period/2)
	require.Less(t, due.Sub(first), 3*period/2)
	for range 5 {
		// The next sequence opens at the handoff, plus the round trip.
		next := domain.HandoffDue(due.Add(300*time.Millisecond), period, phase)
		require.Equal(t, period, next.Sub(due))
		due = next
	}
}

func TestHandoffPhasesSpreadGroupsOverThePeriod(t *testing.T) {
	period := time.Minute
	const n = 1000
	buckets := make([]int, 6) // ten seconds each
	for i := range n {
		p := domain.HandoffPhase("supervisor-"+string(rune('a'+i%26))+string(rune('a'+i/26)), i%4, period)
		require.GreaterOrEqual(t, p, time.Duration(0))
		require.Less(t, p, period)
		buckets[int(p/(10*time.Second))]++
	}
	for i, b := range buckets {
		require.InDelta(t, n/6, b, n/6*0.3, "bucket %d of %v", i, buckets)
	}
	require.Equal(t, domain.HandoffPhase("x", 1, period), domain.HandoffPhase("x", 1, period), "stable")
	require.NotEqual(t, domain.HandoffPhase("x", 1, period), domain.HandoffPhase("x", 2, period))
	require.Zero(t, domain.HandoffPhase("x", 1, 0))
}
