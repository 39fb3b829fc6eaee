package kafka_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/kafka"
)

func TestProduceWritesValuesAndHeaders(t *testing.T) {
	t.Parallel()
	_, c := fixture(t)
	ctx := ctxT(t)
	msgs := []kafka.Message{
		{Value: []byte("not json"), Headers: map[string]string{"handoff.source.topic": "in", "handoff.reason": "unparseable"}},
		{Key: []byte("k"), Value: []byte("second")},
	}
	require.NoError(t, c.Produce(ctx, "dead-letters", msgs))

	ps, err := c.Partitions(ctx, "dead-letters")
	require.NoError(t, err)
	var got []kafka.Record
	for _, p := range ps {
		res, err := c.Fetch(ctx, kafka.FetchRequest{Topic: "dead-letters", Partition: p, Offset: 0, MaxBytes: 1 << 20, MaxWait: 200 * time.Millisecond})
		require.NoError(t, err)
		got = append(got, res.Records...)
	}
	require.Len(t, got, 2)
	byValue := map[string]kafka.Record{}
	for _, r := range got {
		byValue[string(r.Value)] = r
	}
	require.Equal(t, map[string]string{"handoff.source.topic": "in", "handoff.reason": "unparseable"}, byValue["not json"].Headers)
	require.Equal(t, []byte("k"), byValue["second"].Key)
}
