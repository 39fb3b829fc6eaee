package activities

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// A stream that stages a few records heartbeats every 10 s, one that
// stages many every 2 s, a quiet one every 80 s.
func TestStreamHeartbeatsBySpeed(t *testing.T) {
	last := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	s := &stream{lastBeat: last}
	require.False(t, s.beatDue(last.Add(30*time.Second)), "nothing staged")
	require.True(t, s.beatDue(last.Add(idleHeartbeatEvery)), "quiet: kept alive")

	s.dirty, s.res.Records = true, 40 // a few events a second
	require.False(t, s.beatDue(last.Add(3*time.Second)))
	require.True(t, s.beatDue(last.Add(slowHeartbeatEvery)))

	s.res.Records = busyRecords // busy
	require.False(t, s.beatDue(last.Add(time.Second)))
	require.True(t, s.beatDue(last.Add(busyHeartbeatEvery)))

	s.beatRecords = s.res.Records // as of the last heartbeat
	s.res.Records += 10
	require.False(t, s.beatDue(last.Add(busyHeartbeatEvery)), "few since the last heartbeat")
}

// A stream of a supervisor that scales on lag heartbeats its positions at
// least every half lagCollectionRange while it reads a few records, so the
// lag sampled over that range is not older than the range.
func TestStreamHeartbeatsForTheAutoscalersRange(t *testing.T) {
	last := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	s := &stream{lastBeat: last, dirty: true}
	s.res.Records = 40
	s.in.Spec.IOConfig.AutoScalerConfig = &domain.AutoScalerConfig{EnableTaskAutoScaler: true, LagCollectionRange: domain.Duration(4 * time.Second)}
	require.False(t, s.beatDue(last.Add(time.Second)))
	require.True(t, s.beatDue(last.Add(2*time.Second)), "half the 4 s range")

	s.in.Spec.IOConfig.AutoScalerConfig.LagCollectionRange = domain.Duration(time.Second)
	require.False(t, s.beatDue(last.Add(time.Second)), "never more often than a busy stream")

	s.in.Spec.IOConfig.AutoScalerConfig.LagCollectionRange = domain.DefaultLagCollectionRange
	require.False(t, s.beatDue(last.Add(5*time.Second)), "the default 10-minute range needs nothing more")
	require.True(t, s.beatDue(last.Add(slowHeartbeatEvery)))
}

// A stream checks what is due four times a second while its open chunk
// holds records or it read some in the last 2 s; otherwise only when its
// next heartbeat, handoff by age, quiet time or MaxRun comes.
func TestStreamChecksOnlyWhenSomethingIsDue(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	s := &stream{started: now.Add(-time.Minute), lastBeat: now.Add(-10 * time.Second)}
	require.Equal(t, s.lastBeat.Add(idleHeartbeatEvery), s.nextCheck(now), "quiet: its next heartbeat")

	s.chunk = &chunk{}
	require.Equal(t, s.lastBeat.Add(idleHeartbeatEvery), s.nextCheck(now), "an empty chunk")
	s.chunk.records = 1
	require.Equal(t, now.Add(streamTick), s.nextCheck(now), "a chunk to stage on time")
	s.chunk = nil // staged
	s.lastRecord = now.Add(-time.Second)
	require.Equal(t, now.Add(streamTick), s.nextCheck(now), "records just read: a trigger may hold")

	s.lastRecord = now.Add(-idleStreamTick)
	s.dirty, s.res.Records, s.lastBeat = true, 40, now.Add(-5*time.Second)
	require.Equal(t, s.lastBeat.Add(slowHeartbeatEvery), s.nextCheck(now), "staged since its heartbeat")
	s.lastBeat = now.Add(-time.Hour)
	require.Equal(t, now.Add(streamTick), s.nextCheck(now), "overdue: at once, but not in a spin")

	s.lastBeat, s.dirty = now, false
	s.in.MaxRun = 90 * time.Second
	require.Equal(t, now.Add(30*time.Second), s.nextCheck(now), "MaxRun before the heartbeat")
	s.in.QuietAfter = 5 * time.Second
	require.Equal(t, s.lastRecord.Add(5*time.Second), s.nextCheck(now), "quiet")
	s.in.MinRun = 80 * time.Second
	require.Equal(t, now.Add(20*time.Second), s.nextCheck(now), "quiet, once MinRun passed")

	spec := domain.Spec{}
	spec.ApplyDefaults()
	spec.TuningConfig.IntermediateHandoffPeriod = domain.Duration(time.Minute)
	s.in.Spec = spec
	s.in.Close = &protocol.CloseTriggers{Progressed: true, OpenedAt: now.Add(-50 * time.Second)}
	require.Equal(t, now.Add(10*time.Second), s.nextCheck(now), "the open sequence's handoff by age")
	require.Equal(t, protocol.StreamHandoffPeriod, s.trigger(s.nextCheck(now)))
}
