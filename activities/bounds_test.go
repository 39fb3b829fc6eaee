package activities_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/internal/kafkadev"
	"handoff/internal/protocol"
	"handoff/internal/segment"
	"handoff/internal/storage"
)

// boundsSpec: five string dims, a count and a long sum, rollup off.
func boundsSpec(topic string) domain.Spec {
	off := false
	s := domain.Spec{
		ID: "bounds",
		DataSchema: domain.DataSchema{
			DataSource:      "bounds",
			TimestampSpec:   domain.TimestampSpec{Column: "ts", Format: "millis"},
			DimensionsSpec:  domain.DimensionsSpec{Dimensions: []domain.DimensionSpec{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}, {Name: "e"}}},
			MetricsSpec:     []domain.MetricSpec{{Type: domain.MetricCount, Name: "n"}, {Type: domain.MetricLongSum, Name: "v", FieldName: "v"}},
			GranularitySpec: domain.GranularitySpec{SegmentGranularity: domain.GranularityHour, Rollup: &off},
		},
		IOConfig: domain.IOConfig{Topic: topic},
	}
	s.ApplyDefaults()
	return s
}

// TestConsumeStopsAtMaxRowsInMemory: a chunk ends once it holds
// maxRowsInMemory rows, and its end offsets are exactly past those rows.
func TestConsumeStopsAtMaxRowsInMemory(t *testing.T) {
	t.Parallel()
	acts, env := fixture(t)
	staging, _ := jsonTopic(t, acts, 1000)

	spec := boundsSpec("json")
	spec.TuningConfig.MaxRowsInMemory = 100
	v, err := env.ExecuteActivity(protocol.ActivityConsume, protocol.ConsumeInput{
		Spec: spec, SequenceName: "bounds_g0_s0", From: domain.Offsets{domain.P(0): 0},
	})
	require.NoError(t, err)
	var res protocol.ConsumeResult
	require.NoError(t, v.Get(&res))
	require.Equal(t, int64(100), res.Rows)
	require.Equal(t, domain.Offsets{domain.P(0): 100}, res.To, "the chunk ends right after its last row")
	_, rows, err := segment.ReadFile(staging.Path(res.StagingKey))
	require.NoError(t, err)
	require.Len(t, rows, 100)
}

// TestPublishOfTwoMillionRowsStaysInBoundedMemory publishes one sequence of
// 2,000,000 rows (rollup off) from 20 staging chunks and samples the heap
// throughout: the merge streams, so the peak must stay far below what the
// rows would take in memory (about 700 MiB).
func TestPublishOfTwoMillionRowsStaysInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2,000,000 rows")
	}
	acts, env := fixture(t)
	var err error
	acts.Staging, err = storage.NewLocal(t.TempDir())
	require.NoError(t, err)
	acts.Deep, err = storage.NewLocal(t.TempDir())
	require.NoError(t, err)
	spec := boundsSpec(topic)
	schema := spec.DataSchema.DeclaredSchema()
	const chunks, perChunk = 20, 100_000
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var keys []string
	for c := range chunks {
		rows := make([]domain.Row, perChunk)
		for i := range rows {
			n := c*perChunk + i
			rows[i] = domain.Row{
				Time: base + int64(n)*3, // 2M rows over 100 minutes: two hourly segments
				Dims: []domain.Value{
					domain.StringValue(fmt.Sprintf("id-%07d", n)), domain.StringValue(fmt.Sprintf("page-%d", n%50_000)),
					domain.StringValue(fmt.Sprintf("user-%d", n%10_000)), domain.StringValue(fmt.Sprintf("c%d", n%30)), domain.StringValue("edit"),
				},
				Metrics: []domain.Value{domain.LongValue(1), domain.LongValue(int64(n % 100))},
			}
		}
		key := fmt.Sprintf("bounds/s0/chunk-%02d.run", c)
		require.NoError(t, acts.Staging.Put(context.Background(), key, func(w io.Writer) error {
			_, err := segment.WriteRun(w, schema, rows)
			return err
		}))
		keys = append(keys, key)
	}
	runtime.GC()

	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	v, err := env.ExecuteActivity(protocol.ActivityPublish, protocol.PublishInput{
		Spec: spec, SequenceID: 0, Start: domain.Offsets{domain.P(0): 0}, End: domain.Offsets{domain.P(0): chunks * perChunk}, StagingKeys: keys,
	})
	close(stop)
	<-done
	require.NoError(t, err)
	var res protocol.PublishResult
	require.NoError(t, v.Get(&res))
	require.Equal(t, int64(chunks*perChunk), res.Rows)
	require.Len(t, res.SegmentIDs, 2)
	t.Logf("published %d rows in %s; peak heap in use %d MiB", res.Rows, time.Since(start).Round(time.Millisecond), peak.Load()>>20)
	require.Less(t, peak.Load(), uint64(200<<20), "peak heap must not grow with the sequence")
}

// TestConsumeRefusesAMessageOverMaxMessageBytes: a message over the limit
// fails the chunk with MessageTooLarge, naming the supervisor, partition,
// offset and the setting to change; nothing moves past it.
func TestConsumeRefusesAMessageOverMaxMessageBytes(t *testing.T) {
	t.Parallel()
	acts, env := fixture(t)
	ctx := context.Background()
	b, err := kafkadev.Start(ctx, "127.0.0.1:0", map[string]int32{"big": 1})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.DefaultProduceTopic("big"), kgo.ProducerBatchMaxBytes(4<<20))
	require.NoError(t, err)
	defer cl.Close()
	ok := fmt.Appendf(nil, `{"ts":%d,"a":"x","v":1}`, time.Now().UnixMilli())
	big := append(fmt.Appendf(nil, `{"ts":%d,"a":"`, time.Now().UnixMilli()), make([]byte, 2<<20)...)
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: ok}, &kgo.Record{Value: big}).FirstErr())
	acts.Kafka, err = kafka.New(b.Addrs())
	require.NoError(t, err)
	acts.Staging, err = storage.NewLocal(t.TempDir())
	require.NoError(t, err)

	spec := boundsSpec("big")
	spec.TuningConfig.MaxMessageBytes = 1 << 20
	_, err = env.ExecuteActivity(protocol.ActivityConsume, protocol.ConsumeInput{
		Spec: spec, SequenceName: "bounds_g0_s0", From: domain.Offsets{domain.P(0): 0},
	})
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	require.Equal(t, domain.ErrMessageTooLarge, app.Type())
	require.True(t, app.NonRetryable())
	for _, want := range []string{"supervisor bounds", "partition 0 offset 1", "tuningConfig.maxMessageBytes"} {
		require.Contains(t, app.Error(), want)
	}
}
