package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/kafka"
	"handoff/workflows"
)

// badMessages are the bad inputs of the bad-input tests, each with the
// counter it must land in.
func badMessages(now time.Time) (unparseable, thrownAway [][]byte) {
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	unparseable = [][]byte{
		[]byte("not json at all"),
		[]byte(`{"id":"no-timestamp","page":"p"}`),
		[]byte(`{"id":"bad-timestamp","ts":"yesterday-ish"}`),
		[]byte(`{"id":"wrong-type","ts":"` + ts(now) + `","delta":"lots"}`),
		[]byte(`[1,2,3]`),
		[]byte(`null`),
		[]byte{0xff, 0xfe, 0x00},
		append([]byte(`{"id":"huge","ts":"`+ts(now)+`","page":"`), bytes.Repeat([]byte("x"), 5<<20)...), // 5 MiB, cut short
	}
	thrownAway = [][]byte{
		[]byte(`{"id":"too-late","ts":"` + ts(now.Add(-48*time.Hour)) + `","page":"p"}`),
		[]byte(`{"id":"too-early","ts":"` + ts(now.Add(48*time.Hour)) + `","page":"p"}`),
	}
	return unparseable, thrownAway
}

// badInputSpec rejects rows a day late or early, keeps the latest 5 parse
// errors, sends bad messages to a dead-letter topic, and sums a metric so a
// wrong type is an error.
func (s *stack) badInputSpec() domain.Spec {
	spec := s.spec(1)
	spec.IOConfig.LateMessageRejectionPeriod = domain.Duration(24 * time.Hour)
	spec.IOConfig.EarlyMessageRejectionPeriod = domain.Duration(24 * time.Hour)
	spec.IOConfig.DeadLetterTopic = s.name + "-dlq"
	spec.TuningConfig.MaxSavedParseExceptions = 5
	spec.DataSchema.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "n"}, {Type: domain.MetricLongSum, Name: "delta", FieldName: "delta"}}
	return spec
}

// TestBadInputIsCountedSavedAndDeadLettered mixes malformed JSON, wrong
// types, missing and bad timestamps, rows too late and too early and a
// 5 MiB message into a valid stream: every good event is published once,
// every bad one is counted in the right counter, the latest are saved with
// their offsets, and all of them reach the dead-letter topic unchanged.
func TestBadInputIsCountedSavedAndDeadLettered(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.badInputSpec()
	gen := eventgen.New(s.name, 6)
	unparseable, thrownAway := badMessages(time.Now())

	s.produce(gen, 1000)
	s.produceRaw(append(append([][]byte{}, unparseable...), thrownAway...)...)
	s.produce(gen, 1000)
	run := s.startSupervisor(spec)
	s.checkpointUntilPublished(spec, 0)
	s.waitCaughtUp(spec)
	require.Eventually(t, func() bool {
		r := s.status(spec).Read
		return r.Unparseable == int64(len(unparseable)) && r.ThrownAway == int64(len(thrownAway))
	}, 30*time.Second, 200*time.Millisecond, "counters: %+v", s.status(spec).Read)
	s.stopAndWait(spec, run)
	s.requireExactlyOnce(spec, gen.RunID, 2000)

	saved, err := s.store.ParseErrors(context.Background(), spec.ID)
	require.NoError(t, err)
	require.Len(t, saved, 5, "maxSavedParseExceptions keeps the latest 5")
	for _, e := range saved {
		require.NotEmpty(t, e.Error)
		require.GreaterOrEqual(t, e.Offset, int64(0))
		require.Equal(t, spec.IOConfig.Topic, e.Topic)
	}

	dead := s.readAll(spec.IOConfig.DeadLetterTopic)
	require.Len(t, dead, len(unparseable)+len(thrownAway), "every bad message is dead-lettered once")
	reasons, truncated := map[string]int{}, 0
	for _, r := range dead {
		if r.Headers["handoff.truncated"] == "true" {
			truncated++
			require.Greater(t, len(r.Value), 0)
			size, err := strconv.Atoi(r.Headers["handoff.original.bytes"])
			require.NoError(t, err)
			require.Greater(t, size, 5<<20)
		}
		require.Equal(t, spec.IOConfig.Topic, r.Headers["handoff.source.topic"])
		require.NotEmpty(t, r.Headers["handoff.source.offset"])
		reasons[r.Headers["handoff.reason"]]++
	}
	require.Equal(t, map[string]int{"unparseable": len(unparseable), "rejected:late": 1, "rejected:early": 1}, reasons)
	require.Equal(t, 1, truncated, "the 5 MiB message is dead-lettered cut, with its size")
}

// TestParseExceptionBudgetFailsTheGroup allows two unparseable rows and
// feeds three: the group must fail with ParseExceptionsExceeded, which the
// supervisor records, and nothing past the bad rows may be published.
func TestParseExceptionBudgetFailsTheGroup(t *testing.T) {
	t.Parallel()
	s := newStack(t, 1, activities.Faults{})
	spec := s.badInputSpec()
	limit := int64(2)
	spec.TuningConfig.MaxParseExceptions = &limit
	gen := eventgen.New(s.name, 7)
	s.produce(gen, 500)
	s.produceRaw([]byte("bad 1"), []byte("bad 2"), []byte("bad 3"))
	s.startSupervisor(spec)

	require.Eventually(t, func() bool {
		for _, e := range s.status(spec).RecentErrors {
			if strings.Contains(e.Message, domain.ErrParseExceptionsExceeded) && strings.Contains(e.Message, "maxParseExceptions") {
				return true
			}
		}
		return false
	}, time.Minute, 200*time.Millisecond, "the failure was not recorded: %+v", s.status(spec).RecentErrors)
	stored, err := s.store.Offsets(context.Background(), spec.DataSchema.DataSource, spec.IOConfig.Topic)
	require.NoError(t, err)
	require.LessOrEqual(t, stored[domain.P(0)], int64(500), "nothing at or past the bad rows may be committed")
	require.NoError(t, s.temporal.TerminateWorkflow(context.Background(), workflows.SupervisorWorkflowID(spec.ID), "", "test done"))
}

// produceRaw sends values as they are, round-robin over the partitions.
func (s *stack) produceRaw(values ...[]byte) {
	s.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.brokers...), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.ProducerBatchMaxBytes(8<<20))
	require.NoError(s.t, err)
	defer cl.Close()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: s.name, Value: v}
	}
	require.NoError(s.t, cl.ProduceSync(context.Background(), recs...).FirstErr())
}

// readAll reads every record of a topic.
func (s *stack) readAll(topic string) []kafka.Record {
	s.t.Helper()
	kc, err := kafka.New(s.brokers)
	require.NoError(s.t, err)
	ctx := context.Background()
	parts, err := kc.Partitions(ctx, topic)
	require.NoError(s.t, err, "topic %s", topic)
	_, latest, err := kc.Bounds(ctx, topic, parts, kafka.ReadUncommitted)
	require.NoError(s.t, err)
	var out []kafka.Record
	for _, p := range parts {
		for off := int64(0); off < latest[p]; {
			res, err := kc.Fetch(ctx, kafka.FetchRequest{Topic: topic, Partition: p, Offset: off, MaxBytes: 8 << 20, MaxWait: 100 * time.Millisecond})
			require.NoError(s.t, err)
			require.NotEmpty(s.t, res.Records, fmt.Sprintf("%s[%d]@%d", topic, p, off))
			out = append(out, res.Records...)
			off = res.Next
		}
	}
	return out
}
