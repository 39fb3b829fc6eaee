package activities

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// A stream into an idle sequence that reads its first record long after
// the sequence opened hands off on its group's phase, at least half a
// period later; one whose sequence had progressed hands off when its group
// said; without Spread, a period after the sequence opened.
func TestStreamHandoffByAgeFollowsTheGroupsPhase(t *testing.T) {
	const period = time.Minute
	opened := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	first := opened.Add(10 * time.Minute)
	phase := 20 * time.Second
	newStream := func(c protocol.CloseTriggers) *stream {
		spec := domain.Spec{}
		spec.ApplyDefaults()
		spec.TuningConfig.IntermediateHandoffPeriod = domain.Duration(period)
		c.OpenedAt = opened
		return &stream{in: protocol.ConsumeStreamInput{Spec: spec, Close: &c}}
	}

	idle := newStream(protocol.CloseTriggers{Spread: true, Phase: phase})
	require.Empty(t, idle.trigger(first.Add(time.Hour)), "nothing read: no handoff by age")
	idle.res.FirstRecordAt, idle.res.Records = first, 1
	due := domain.HandoffDue(first, period, phase)
	require.Equal(t, first.Add(80*time.Second), due) // 10:11:20, the first phase point 30 s on
	require.Empty(t, idle.trigger(first), "not at the first record")
	require.Empty(t, idle.trigger(due.Add(-time.Millisecond)))
	require.Equal(t, protocol.StreamHandoffPeriod, idle.trigger(due))

	told := opened.Add(90 * time.Second)
	progressed := newStream(protocol.CloseTriggers{Spread: true, Phase: phase, Progressed: true, HandoffAt: told})
	require.Empty(t, progressed.trigger(told.Add(-time.Millisecond)))
	require.Equal(t, protocol.StreamHandoffPeriod, progressed.trigger(told))

	old := newStream(protocol.CloseTriggers{Progressed: true})
	require.Empty(t, old.trigger(opened.Add(period-time.Millisecond)))
	require.Equal(t, protocol.StreamHandoffPeriod, old.trigger(opened.Add(period)))
}
