package activities_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// consumeOutOfRange runs a Consume from offsets and returns its
// OffsetOutOfRange details, failing the test if it ends otherwise.
func consumeOutOfRange(t *testing.T, spec domain.Spec, from domain.Offsets) (domain.OutOfRange, *temporal.ApplicationError) {
	t.Helper()
	_, env := fixture(t)
	_, err := env.ExecuteActivity(protocol.ActivityConsume, protocol.ConsumeInput{Spec: spec, SequenceName: "oor_g0_s0", From: from})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "want an application error, got %v", err)
	require.Equal(t, domain.ErrOffsetOutOfRange, app.Type(), "%v", err)
	require.True(t, app.NonRetryable(), "a retry reads the same gone offset")
	var o domain.OutOfRange
	require.NoError(t, app.Details(&o))
	return o, app
}

// An offset past a partition's end (what a recreated topic looks like to a
// group that was further on) fails the consume with OffsetOutOfRange naming
// the supervisor, topic, partition, offset and bounds, and what to run.
func TestConsumePastTheEndIsOffsetOutOfRange(t *testing.T) {
	t.Parallel()
	spec := boundsSpec(topic)
	o, app := consumeOutOfRange(t, spec, domain.Offsets{domain.P(0): 9, domain.P(1): 0})
	require.Equal(t, domain.OutOfRange{SupervisorID: "bounds", Topic: topic, Partition: 0, Offset: 9, Earliest: 0, Latest: 5}, o)
	require.True(t, o.Recreated())
	require.Contains(t, app.Message(), "starter reset bounds --partition 0=earliest --force")
}

// Records deleted before the group's offset (as retention does) fail the
// consume with OffsetOutOfRange whose earliest is the new start; the spec's
// reset settings travel in the details.
func TestConsumeOfExpiredRecordsIsOffsetOutOfRange(t *testing.T) {
	t.Parallel()
	acts, env := fixture(t)
	deleteRecords(t, acts.Kafka.Brokers(), topic, 1, 2)
	spec := boundsSpec(topic)
	spec.IOConfig.ResetOffsetAutomatically, spec.IOConfig.UseEarliestOffset = true, true
	_, err := env.ExecuteActivity(protocol.ActivityConsume, protocol.ConsumeInput{Spec: spec, SequenceName: "oor_g0_s0", From: domain.Offsets{domain.P(1): 1}})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	require.Equal(t, domain.ErrOffsetOutOfRange, app.Type())
	var o domain.OutOfRange
	require.NoError(t, app.Details(&o))
	require.Equal(t, domain.OutOfRange{SupervisorID: "bounds", Topic: topic, Partition: 1, Offset: 1, Earliest: 2, Latest: 3, AutoReset: true, UseEarliest: true}, o)
	require.False(t, o.Recreated())
	require.Contains(t, app.Message(), "expired")
}

// deleteRecords moves a partition's earliest offset to before, as retention
// does, through Kafka's DeleteRecords request.
func deleteRecords(t *testing.T, brokers []string, topic string, p int32, before int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer cl.Close()
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = p, before
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 5000
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	for _, t2 := range resp.Topics {
		for _, p2 := range t2.Partitions {
			require.Zero(t, p2.ErrorCode, "delete records of %s[%d]", t2.Topic, p2.Partition)
		}
	}
}
