package activities_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

func TestResetOffsetsStoresExactlyTheTargets(t *testing.T) {
	t.Parallel()
	acts, env := fixture(t)
	ctx := context.Background()
	require.NoError(t, acts.Store.ResetOffsets(ctx, "ds", topic, domain.Offsets{domain.P(0): 1, domain.P(1): 1}))

	for _, tc := range []struct {
		targets map[domain.Partition]string
		want    domain.Offsets // the result
		stored  domain.Offsets // all stored offsets after it
	}{
		{map[domain.Partition]string{domain.P(0): "earliest"}, domain.Offsets{domain.P(0): 0}, domain.Offsets{domain.P(0): 0, domain.P(1): 1}},
		{map[domain.Partition]string{domain.P(1): "latest"}, domain.Offsets{domain.P(1): 3}, domain.Offsets{domain.P(0): 0, domain.P(1): 3}},
		{map[domain.Partition]string{domain.P(0): "4", domain.P(1): " Earliest "}, domain.Offsets{domain.P(0): 4, domain.P(1): 0}, domain.Offsets{domain.P(0): 4, domain.P(1): 0}},
		{map[domain.Partition]string{domain.P(0): "5"}, domain.Offsets{domain.P(0): 5}, domain.Offsets{domain.P(0): 5, domain.P(1): 0}}, // latest is valid
	} {
		v, err := env.ExecuteActivity(protocol.ActivityResetOffsets, protocol.ResetOffsetsInput{DataSource: "ds", Topic: topic, Targets: tc.targets})
		require.NoError(t, err, "targets %v", tc.targets)
		var res protocol.ResetOffsetsResult
		require.NoError(t, v.Get(&res))
		require.Equal(t, tc.want, res.Offsets, "targets %v", tc.targets)
		stored, err := acts.Store.Offsets(ctx, "ds", topic)
		require.NoError(t, err)
		require.Equal(t, tc.stored, stored, "after targets %v", tc.targets)
	}
}

func TestResetOffsetsRefusesInvalidTargetsAndStoresNothing(t *testing.T) {
	t.Parallel()
	acts, env := fixture(t)
	ctx := context.Background()
	require.NoError(t, acts.Store.ResetOffsets(ctx, "ds", topic, domain.Offsets{domain.P(0): 2, domain.P(1): 2}))

	for _, tc := range []struct {
		targets map[domain.Partition]string
		want    []string
	}{
		{map[domain.Partition]string{domain.P(0): "earliest", domain.P(1): "4"}, []string{"partition 1", "offset 4", "[0, 3]"}},
		{map[domain.Partition]string{domain.P(0): "-1"}, []string{"partition 0", "offset -1", "[0, 5]"}},
		{map[domain.Partition]string{domain.P(7): "0"}, []string{"partition 7", "no such partition"}},
		{map[domain.Partition]string{domain.P(0): "soon"}, []string{"partition 0", `"soon"`}},
		{map[domain.Partition]string{}, []string{"no partitions"}},
	} {
		_, err := env.ExecuteActivity(protocol.ActivityResetOffsets, protocol.ResetOffsetsInput{DataSource: "ds", Topic: topic, Targets: tc.targets})
		var app *temporal.ApplicationError
		require.True(t, errors.As(err, &app), "targets %v: got %v", tc.targets, err)
		require.Equal(t, domain.ErrInvalidReset, app.Type())
		require.True(t, app.NonRetryable())
		for _, w := range tc.want {
			require.Contains(t, app.Message(), w, "targets %v", tc.targets)
		}
		stored, err := acts.Store.Offsets(ctx, "ds", topic)
		require.NoError(t, err)
		require.Equal(t, domain.Offsets{domain.P(0): 2, domain.P(1): 2}, stored, "targets %v", tc.targets)
	}
}

func TestResetOffsetsOfAMissingTopicIsTopicNotFound(t *testing.T) {
	t.Parallel()
	_, env := fixture(t)
	_, err := env.ExecuteActivity(protocol.ActivityResetOffsets, protocol.ResetOffsetsInput{DataSource: "ds", Topic: "nope", Targets: map[domain.Partition]string{domain.P(0): "0"}})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "got %v", err)
	require.Equal(t, domain.ErrTopicNotFound, app.Type())
}

// A topicPattern supervisor's reset names partitions with their topic, and
// stores them under it.
func TestResetOffsetsOfPatternPartitions(t *testing.T) {
	t.Parallel()
	acts, env := fixture(t)
	ctx := context.Background()
	in := protocol.ResetOffsetsInput{DataSource: "ds", TopicPattern: regexp.QuoteMeta(topic) + "|no-such-topic",
		Targets: map[domain.Partition]string{domain.TP(topic, 0): "latest", domain.TP(topic, 1): "2"}}
	v, err := env.ExecuteActivity(protocol.ActivityResetOffsets, in)
	require.NoError(t, err)
	var res protocol.ResetOffsetsResult
	require.NoError(t, v.Get(&res))
	want := domain.Offsets{domain.TP(topic, 0): 5, domain.TP(topic, 1): 2}
	require.Equal(t, want, res.Offsets)
	stored, err := acts.Store.TopicsOffsets(ctx, "ds", []string{topic})
	require.NoError(t, err)
	require.Equal(t, want, stored)

	in.Targets = map[domain.Partition]string{domain.TP("no-such-topic", 0): "earliest"}
	_, err = env.ExecuteActivity(protocol.ActivityResetOffsets, in)
	require.ErrorContains(t, err, `topic "no-such-topic" partition 0: no such partition`)
}
