package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/activities"
	"handoff/internal/eventgen"
)

// TestUnparseableMessagesAreSkippedWithoutLosingTheRest mixes messages that
// are not JSON, lack the timestamp or carry a bad one into a valid stream:
// the worker must not fail, and every valid event is published exactly once.
func TestUnparseableMessagesAreSkippedWithoutLosingTheRest(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(1)
	gen := eventgen.New(s.name, 6)

	s.produce(gen, 1000)
	s.produceRaw(
		[]byte("not json at all"),
		[]byte(`{"id":"no-timestamp","page":"p"}`),
		[]byte(`{"id":"bad-timestamp","ts":"yesterday-ish"}`),
		[]byte(`[1,2,3]`),
		[]byte(`null`),
		[]byte{0xff, 0xfe, 0x00},
		nil,
	)
	s.produce(gen, 1000)
	run := s.startSupervisor(spec)
	s.checkpointUntilPublished(spec, 0)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.requireExactlyOnce(spec, gen.RunID, 2000)
}

// produceRaw sends values as they are, round-robin over the partitions.
func (s *stack) produceRaw(values ...[]byte) {
	s.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.brokers...), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	require.NoError(s.t, err)
	defer cl.Close()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: s.name, Value: v}
	}
	require.NoError(s.t, cl.ProduceSync(context.Background(), recs...).FirstErr())
}
