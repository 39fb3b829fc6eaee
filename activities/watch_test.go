package activities_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

func runWatch(t *testing.T, in protocol.WatchInput) protocol.WatchResult {
	t.Helper()
	_, env := fixture(t)
	v, err := env.ExecuteActivity(protocol.ActivityWatch, in)
	require.NoError(t, err)
	var res protocol.WatchResult
	require.NoError(t, v.Get(&res))
	return res
}

// TestWatchReportsWhatDiffers: told nothing, a watch returns at its first
// look with the topic's partitions and latest offsets.
func TestWatchReportsWhatDiffers(t *testing.T) {
	t.Parallel()
	res := runWatch(t, protocol.WatchInput{Topic: topic, Every: 50 * time.Millisecond, MaxRun: time.Minute})
	require.ElementsMatch(t, []domain.Partition{domain.P(0), domain.P(1)}, res.View.Partitions)
	require.Equal(t, domain.Offsets{domain.P(0): 5, domain.P(1): 3}, res.Latest)
	require.True(t, res.Connected)
	require.Contains(t, res.Reason, "partitions")
}

// TestWatchOfAnUnchangedWorldReturnsOnlyAfterMaxRun: what it sees equals
// what it was told, so it keeps looking.
func TestWatchOfAnUnchangedWorldReturnsOnlyAfterMaxRun(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res := runWatch(t, protocol.WatchInput{
		Topic: topic, Every: 50 * time.Millisecond, MaxRun: 600 * time.Millisecond,
		Known: protocol.WatchView{Partitions: []domain.Partition{domain.P(1), domain.P(0)}},
	})
	require.Equal(t, "max-run", res.Reason)
	require.GreaterOrEqual(t, time.Since(start), 600*time.Millisecond)
}

// TestWatchReportsAMissingTopic: a topic that does not exist is a
// problem of the view, with its type, not a failure of the watch.
func TestWatchReportsAMissingTopic(t *testing.T) {
	t.Parallel()
	res := runWatch(t, protocol.WatchInput{Topic: "missing", Every: 50 * time.Millisecond, MaxRun: time.Minute})
	require.Equal(t, domain.ErrTopicNotFound, res.View.ProblemType)
	require.NotEmpty(t, res.View.Problem)
}
