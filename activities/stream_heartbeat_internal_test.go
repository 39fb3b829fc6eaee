package activities

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
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
// holds records or it read some in the last 2 s, every 2 s otherwise.
func TestStreamTicksSeldomWithoutRecords(t *testing.T) {
	s := &stream{}
	require.Equal(t, idleStreamTick, s.tickEvery(), "no chunk")
	s.chunk = &chunk{}
	require.Equal(t, idleStreamTick, s.tickEvery(), "an empty chunk")
	s.chunk.records = 1
	require.Equal(t, streamTick, s.tickEvery())
	s.chunk = nil // flushed
	s.lastRecord = time.Now()
	require.Equal(t, streamTick, s.tickEvery(), "records just read: a trigger may hold")
	s.lastRecord = time.Now().Add(-idleStreamTick)
	require.Equal(t, idleStreamTick, s.tickEvery())
}
