package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"handoff/internal/kafka"
	"handoff/internal/kafkadev"
)

const topic = "t"

// counts is how many records the fixture produces to each partition of t.
var counts = map[int32]int{0: 5, 1: 0, 2: 7}

// fixture starts a broker with topic t (3 partitions) holding counts
// records, and returns a client for it. Record i of partition p has key
// "k<p>-<i>" and value "v<p>-<i>".
func fixture(t *testing.T) (*kafkadev.Broker, *kafka.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	b, err := kafkadev.Start(ctx, "127.0.0.1:0", map[string]int32{topic: 3})
	require.NoError(t, err)
	t.Cleanup(b.Close)

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	for p, n := range counts {
		for i := range n {
			rec := &kgo.Record{Topic: topic, Partition: p, Key: fmt.Appendf(nil, "k%d-%d", p, i), Value: fmt.Appendf(nil, "v%d-%d", p, i)}
			res := cl.ProduceSync(ctx, rec)
			require.NoError(t, res.FirstErr())
			r, err := res.First()
			require.NoError(t, err)
			require.EqualValues(t, i, r.Offset, "produced to partition %d", p)
		}
	}

	c, err := kafka.New(b.Addrs())
	require.NoError(t, err)
	return b, c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestNewNeedsBrokers(t *testing.T) {
	t.Parallel()
	c, err := kafka.New(nil)
	require.Error(t, err)
	require.Nil(t, c)

	c, err = kafka.New([]string{"a:9092", "b:9092"})
	require.NoError(t, err)
	require.Equal(t, []string{"a:9092", "b:9092"}, c.Brokers())
}

func TestPingAndPartitions(t *testing.T) {
	t.Parallel()
	_, c := fixture(t)
	ctx := ctxT(t)
	require.NoError(t, c.Ping(ctx))

	ps, err := c.Partitions(ctx, topic)
	require.NoError(t, err)
	require.Equal(t, []int32{0, 1, 2}, ps)
}

func TestPartitionsOfSeveralTopics(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	// The topics exist before the client's first request (for one created
	// later, see kafka_bug_test.go).
	b, err := kafkadev.Start(ctx, "127.0.0.1:0", map[string]int32{"wide": 12, "one": 1, "t": 3})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	c, err := kafka.New(b.Addrs())
	require.NoError(t, err)
	for name, want := range map[string][]int32{
		"wide": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
		"one":  {0},
		"t":    {0, 1, 2},
	} {
		ps, err := c.Partitions(ctx, name)
		require.NoError(t, err, name)
		require.Equal(t, want, ps, name)
	}
}

func TestPartitionsOfUnknownTopic(t *testing.T) {
	t.Parallel()
	_, c := fixture(t)
	ctx := ctxT(t)
	ps, err := c.Partitions(ctx, "no-such-topic")
	require.Error(t, err)
	require.Nil(t, ps)
	require.True(t, errors.Is(err, kafka.ErrTopicNotFound), "%v does not wrap ErrTopicNotFound", err)
	require.Contains(t, err.Error(), "no-such-topic")

	// Asking did not create it.
	_, err = c.Partitions(ctx, "no-such-topic")
	require.ErrorIs(t, err, kafka.ErrTopicNotFound)
}

func TestBounds(t *testing.T) {
	t.Parallel()
	_, c := fixture(t)
	ctx := ctxT(t)
	earliest, latest, err := c.Bounds(ctx, topic, []int32{0, 1, 2}, kafka.ReadUncommitted)
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 0, 1: 0, 2: 0}, earliest)
	require.Equal(t, map[int32]int64{0: 5, 1: 0, 2: 7}, latest)

	// A subset of partitions gives just those.
	earliest, latest, err = c.Bounds(ctx, topic, []int32{2}, kafka.ReadUncommitted)
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{2: 0}, earliest)
	require.Equal(t, map[int32]int64{2: 7}, latest)
}

func TestBoundsOfUnknownTopic(t *testing.T) {
	t.Parallel()
	_, c := fixture(t)
	earliest, latest, err := c.Bounds(ctxT(t), "no-such-topic", []int32{0}, kafka.ReadUncommitted)
	require.Error(t, err)
	require.Nil(t, earliest)
	require.Nil(t, latest)
	require.ErrorIs(t, err, kafka.ErrTopicNotFound)
}

func TestFetchRange(t *testing.T) {
	t.Parallel()
	_, c := fixture(t)
	ctx := ctxT(t)
	res, err := c.Fetch(ctx, kafka.FetchRequest{Topic: topic, Partition: 0, Offset: 2, Stop: 4, MaxBytes: 1 << 20, MaxWait: time.Second})
	require.NoError(t, err)
	require.Equal(t, []int64{2, 3}, offsetsOf(res.Records))
	require.EqualValues(t, 4, res.Next)
	require.EqualValues(t, 5, res.HighWatermark)
	require.Equal(t, "k0-2", string(res.Records[0].Key))
	require.Equal(t, "v0-2", string(res.Records[0].Value))
	require.Equal(t, "k0-3", string(res.Records[1].Key))
	require.Equal(t, "v0-3", string(res.Records[1].Value))
	for _, r := range res.Records {
		require.False(t, r.Time.IsZero(), "record %d has no time", r.Offset)
		require.WithinDuration(t, time.Now(), r.Time, time.Minute)
	}
}

func TestFetchTable(t *testing.T) {
	t.Parallel()
	_, c := fixture(t)
	tests := []struct {
		name      string
		partition int32
		offset    int64
		stop      int64
		want      []int64
		next      int64
		hwm       int64
	}{
		{"whole partition, no stop", 2, 0, 0, []int64{0, 1, 2, 3, 4, 5, 6}, 7, 7},
		{"whole partition, stop at end", 2, 0, 7, []int64{0, 1, 2, 3, 4, 5, 6}, 7, 7},
		{"stop past end", 2, 3, 100, []int64{3, 4, 5, 6}, 7, 7},
		{"from the middle, no stop", 0, 3, 0, []int64{3, 4}, 5, 5},
		{"one record", 2, 6, 7, []int64{6}, 7, 7},
		{"first record only", 0, 0, 1, []int64{0}, 1, 5},
		{"empty range", 2, 4, 4, nil, 4, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := c.Fetch(ctxT(t), kafka.FetchRequest{Topic: topic, Partition: tt.partition, Offset: tt.offset, Stop: tt.stop, MaxBytes: 1 << 20, MaxWait: time.Second})
			require.NoError(t, err)
			require.Equal(t, tt.want, offsetsOf(res.Records))
			require.Equal(t, tt.next, res.Next)
			require.Equal(t, tt.hwm, res.HighWatermark)
			for _, r := range res.Records {
				require.Equal(t, fmt.Sprintf("v%d-%d", tt.partition, r.Offset), string(r.Value))
			}
		})
	}
}

func TestFetchAtEndReturnsNothing(t *testing.T) {
	t.Parallel()
	_, c := fixture(t)
	for p, n := range counts {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			res, err := c.Fetch(ctxT(t), kafka.FetchRequest{Topic: topic, Partition: p, Offset: int64(n), MaxBytes: 1 << 20, MaxWait: 200 * time.Millisecond})
			require.NoError(t, err)
			require.Empty(t, res.Records)
			require.EqualValues(t, n, res.Next)
			require.EqualValues(t, n, res.HighWatermark)
			require.Less(t, time.Since(start), 10*time.Second, "Fetch waited far longer than maxWait")
		})
	}
}

func TestFetchSeesRecordsProducedLater(t *testing.T) {
	t.Parallel()
	b, c := fixture(t)
	ctx := ctxT(t)
	res, err := c.Fetch(ctx, kafka.FetchRequest{Topic: topic, Partition: 1, Offset: 0, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, res.Records)

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 1, Value: []byte("late")}).FirstErr())

	res, err = c.Fetch(ctx, kafka.FetchRequest{Topic: topic, Partition: 1, Offset: 0, MaxBytes: 1 << 20, MaxWait: time.Second})
	require.NoError(t, err)
	require.Equal(t, []int64{0}, offsetsOf(res.Records))
	require.Equal(t, "late", string(res.Records[0].Value))
	require.Nil(t, res.Records[0].Key)
	require.EqualValues(t, 1, res.Next)
	require.EqualValues(t, 1, res.HighWatermark)
}

func TestFetchPastEndIsOutOfRange(t *testing.T) {
	t.Parallel()
	_, c := fixture(t)
	for _, tt := range []struct {
		partition int32
		offset    int64
	}{{0, 6}, {0, 1000}, {1, 1}, {2, 8}} {
		t.Run(fmt.Sprintf("%d@%d", tt.partition, tt.offset), func(t *testing.T) {
			t.Parallel()
			res, err := c.Fetch(ctxT(t), kafka.FetchRequest{Topic: topic, Partition: tt.partition, Offset: tt.offset, MaxBytes: 1 << 20, MaxWait: 200 * time.Millisecond})
			require.Error(t, err, "got %+v", res)
			require.True(t, errors.Is(err, kafka.ErrOffsetOutOfRange), "%v does not wrap ErrOffsetOutOfRange", err)
			require.Empty(t, res.Records)
		})
	}
}

func TestFetchUnknownTopicOrPartitionFails(t *testing.T) {
	t.Parallel()
	_, c := fixture(t)
	ctx := ctxT(t)
	_, err := c.Fetch(ctx, kafka.FetchRequest{Topic: "no-such-topic", Partition: 0, Offset: 0, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond})
	require.Error(t, err)
	_, err = c.Fetch(ctx, kafka.FetchRequest{Topic: topic, Partition: 9, Offset: 0, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond})
	require.Error(t, err)
}

func TestFetchMaxBytesStillMakesProgress(t *testing.T) {
	t.Parallel()
	_, c := fixture(t)
	// A tiny maxBytes still returns at least the first batch (Kafka returns
	// a whole batch even when it exceeds the limit), and reading on from
	// Next walks the partition without gaps or repeats.
	var got []int64
	next := int64(0)
	for range 20 {
		if next == 7 {
			break
		}
		res, err := c.Fetch(ctxT(t), kafka.FetchRequest{Topic: topic, Partition: 2, Offset: next, MaxBytes: 1, MaxWait: time.Second})
		require.NoError(t, err)
		require.NotEmpty(t, res.Records, "no progress at %d", next)
		got = append(got, offsetsOf(res.Records)...)
		next = res.Next
	}
	require.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6}, got)
}

func offsetsOf(rs []kafka.Record) []int64 {
	var out []int64
	for _, r := range rs {
		out = append(out, r.Offset)
	}
	return out
}
